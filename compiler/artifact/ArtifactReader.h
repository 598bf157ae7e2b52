// Reads a `.kime` file back into its sections (for --refit): its container checked by the
// runtime's own readContainer (kime/container.h), without loading any code.
#ifndef KIME_ARTIFACT_ARTIFACTREADER_H
#define KIME_ARTIFACT_ARTIFACTREADER_H

#include <functional>
#include <string>
#include <vector>

#include "ArtifactWriter.h"

namespace kime {

// The sections of the artifact at `path`, in table order. Throws CompileError naming the file and
// the problem as Model::open words it: not an artifact, another format version, a section outside
// the file or damaged. With `wanted`, only the sections it names are copied out (every one is
// still checked).
std::vector<Section> readArtifact(const std::string& path,
                                  const std::function<bool(const std::string&)>& wanted = nullptr);

// The section named `name`, or nullptr.
const Section* findSection(const std::vector<Section>& sections, const std::string& name);

}  // namespace kime

#endif  // KIME_ARTIFACT_ARTIFACTREADER_H
