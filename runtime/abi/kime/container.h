// An artifact's container (format.h): its header, section table, checksums and padding checked,
// without reading its manifest or loading its code. Model::open checks every artifact this way
// first; a tool that only reads sections (kime-compile --refit) uses it alone.
#ifndef KIME_CONTAINER_H
#define KIME_CONTAINER_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kime {

// One section of an artifact: its name and where its payload lies in the artifact's bytes.
struct SectionInfo {
  std::string name;
  uint64_t offset = 0, size = 0;
};

// The sections of the `size` bytes at `data`, in table order, into `sections`; or the
// first problem, worded as Model::open words it after "PATH: " ("not a kime artifact (bad
// magic)", "format version 2 is older than this runtime's 3; ...", "section "x" is corrupt
// (checksum mismatch)", ...).
std::optional<std::string> readContainer(const uint8_t* data, uint64_t size, std::vector<SectionInfo>& sections);

}  // namespace kime

#endif  // KIME_CONTAINER_H
