// Batch invariance, checked: a sequence's outputs are the same bytes whatever it is batched with,
// wherever it falls in the packed batch, whichever bucket, stage and thread count run it
// (docs/batch.md). Shared by the example model's test and kime-graph-fuzz's random Graphs.
#ifndef KIME_TOOLING_INVARIANCE_H
#define KIME_TOOLING_INVARIANCE_H

#include <cstdint>
#include <string>
#include <vector>

#include "kime/runtime.h"

namespace kime::tooling {

// One sequence of a batch: its ids, its markers (positions in it) and its type.
struct Sequence {
  std::vector<uint32_t> ids, markers;
  uint8_t qtype = 0;
};

// The sequences packed in order into one batch.
BatchBuf packSequences(const std::vector<Sequence>& seqs);

// An executor to check and the buckets of its stage, smallest first (Model::buckets).
struct InvarianceTarget {
  Executor* exec = nullptr;
  std::vector<Bucket> buckets;
  std::string name;  // for messages, e.g. "serve, 2 threads"
};

struct InvarianceOptions {
  std::vector<OutputDesc> outputs;  // the model's (Model::outputs): every one is compared
  size_t vocab = 0, types = 0;
  size_t maxLen = 0;       // the longest sequence the model takes (a learned position table); 0: any
  int64_t paddingId = -1;  // a token id the model refuses (Model::paddingId): never drawn
  size_t trials = 4;       // sequences per bucket of each target
  uint64_t seed = 1;
};

struct InvarianceReport {
  size_t sequences = 0;  // sequences tried
  size_t runs = 0;       // runs whose outputs for the sequence were compared
  size_t differing = 0;  // of them, not the bytes of the sequence run alone
  size_t refused = 0;    // runs the model refused as bad batches (its gather limits): not compared
  std::string failure;   // the first difference or error, empty when none
};

// For each target and each of its buckets, `trials` random sequences: each run alone on the
// first target (when a bucket of it holds the sequence) and on this one, then at a random place
// among random neighbours that make this bucket the one run. Every run's outputs for the sequence
// (its marker rows and its own row of each) must be the bytes of its first run alone.
InvarianceReport checkBatchInvariance(const std::vector<InvarianceTarget>& targets, const InvarianceOptions& o);

}  // namespace kime::tooling

#endif  // KIME_TOOLING_INVARIANCE_H
