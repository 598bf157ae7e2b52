#include "ArtifactReader.h"

#include "kime/container.h"
#include "support/Diagnostic.h"
#include "support/MappedFile.h"

namespace kime {

std::vector<Section> readArtifact(const std::string& path, const std::function<bool(const std::string&)>& wanted) {
  const MappedFile file(path);
  const std::string_view bytes = file.bytes();
  std::vector<SectionInfo> table;
  if (auto why = readContainer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), table))
    throw CompileError(path + ": " + *why);
  std::vector<Section> out;
  for (const SectionInfo& s : table)
    if (!wanted || wanted(s.name)) out.push_back({s.name, std::string(bytes.substr(s.offset, s.size))});
  return out;
}

const Section* findSection(const std::vector<Section>& sections, const std::string& name) {
  for (const Section& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace kime
