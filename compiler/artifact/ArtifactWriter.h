// Writes a `.kime` file (runtime/abi/kime/format.h): header, section table, page-aligned
// sections with checksums. Sections keep the order they were added in; the same sections give
// the same bytes.
#ifndef KIME_ARTIFACT_ARTIFACTWRITER_H
#define KIME_ARTIFACT_ARTIFACTWRITER_H

#include <string>
#include <vector>

namespace kime {

struct Section {
  std::string name;
  std::string bytes;
};

// The file's bytes. Throws CompileError for a name that does not fit the table.
std::string buildArtifact(const std::vector<Section>& sections);

// Writes them atomically: a failure leaves any existing file at `path` as it was.
void writeArtifact(const std::string& path, const std::vector<Section>& sections);

}  // namespace kime

#endif  // KIME_ARTIFACT_ARTIFACTWRITER_H
