// Batches as JSON files ({"ids", "cu", "markers", "mcu", "qtype"} and optionally "ttype", a type
// per token: exactly a Batch),
// and outputs as JSON text. Shared by the tools and the compiler's --verify; depends on the
// runtime headers and nlohmann.
#ifndef KIME_TOOLING_BATCHFILE_H
#define KIME_TOOLING_BATCHFILE_H

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kime/batch.h"

namespace kime::tooling {

// The storage behind a Batch read from a file.
struct OwnedBatch {
  std::vector<uint32_t> ids, cu, markers, mcu;
  std::vector<uint8_t> qtype;
  std::vector<uint8_t> ttype = {};  // optional: a type per token

  Batch view() const { return {ids, cu, markers, mcu, qtype, ttype}; }
};

// Reads `path`; a file that is not such an object throws std::runtime_error naming the file and
// the field. Consistency (cu against ids and so on) is checkBatch's job, not this one's.
OwnedBatch readBatchFile(const std::string& path);
OwnedBatch parseBatchJson(const std::string& text, const std::string& source);

// What kime-run prints for a batch it ran: {"bucket": {"tokens", "seqs", "markers"}, then each
// output by name: a value per row where it is one wide ("logits": [...]), else a list per row
// ("act": [[a, b], ...])}.
std::string runJson(const Bucket& used, const std::vector<OutputDesc>& descs, const Outputs& out);

// The outputs alone, as runJson writes them, with every digit a double needs (17 significant).
std::string outputsJson(const std::vector<OutputDesc>& descs, const OutputValues<double>& out);

}  // namespace kime::tooling

#endif  // KIME_TOOLING_BATCHFILE_H
