#include "ArtifactReader.h"

#include <cstring>

#include "kime/format.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

std::vector<Section> readArtifact(const std::string& path) {
  const std::string bytes = json::readFile(path);
  auto fail = [&](const std::string& why) { return CompileError(path + ": " + why); };
  kime_file_header h;
  if (bytes.size() < sizeof h || std::memcmp(bytes.data(), KIME_MAGIC, KIME_MAGIC_SIZE) != 0)
    throw fail("not a kime artifact");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.version != KIME_FORMAT_VERSION)
    throw fail("an artifact of format version " + std::to_string(h.version) + "; this kime reads version " +
               std::to_string(KIME_FORMAT_VERSION) + " (compile it again)");
  if (h.file_size != bytes.size())
    throw fail("truncated or extended (its header says " + std::to_string(h.file_size) + " bytes)");
  if (h.section_table_offset > bytes.size() ||
      uint64_t(h.section_count) * sizeof(kime_section_entry) > bytes.size() - h.section_table_offset)
    throw fail("its section table lies outside the file");
  std::vector<Section> out;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    kime_section_entry e;
    std::memcpy(&e, bytes.data() + h.section_table_offset + i * sizeof e, sizeof e);
    const std::string name(e.name, strnlen(e.name, KIME_SECTION_NAME_SIZE));
    if (e.offset > bytes.size() || e.size > bytes.size() - e.offset)
      throw fail("section \"" + name + "\" lies outside the file");
    if (kime_checksum(bytes.data() + e.offset, e.size) != e.checksum)
      throw fail("section \"" + name + "\" is corrupt (checksum mismatch)");
    out.push_back({name, bytes.substr(e.offset, e.size)});
  }
  return out;
}

const Section* findSection(const std::vector<Section>& sections, const std::string& name) {
  for (const Section& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace kime
