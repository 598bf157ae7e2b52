#include "ArtifactWriter.h"

#include <cstring>

#include "kime/format.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

static uint64_t alignUp(uint64_t n) { return (n + KIME_SECTION_ALIGN - 1) / KIME_SECTION_ALIGN * KIME_SECTION_ALIGN; }

std::string buildArtifact(const std::vector<Section>& sections) {
  kime_file_header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, KIME_MAGIC, KIME_MAGIC_SIZE);
  h.version = KIME_FORMAT_VERSION;
  h.section_count = uint32_t(sections.size());
  h.section_table_offset = sizeof h;

  std::vector<kime_section_entry> table(sections.size());
  uint64_t offset = alignUp(sizeof h + sizeof(kime_section_entry) * sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    if (s.name.empty() || s.name.size() >= KIME_SECTION_NAME_SIZE)
      throw CompileError("section name \"" + s.name + "\" must have 1 to " +
                         std::to_string(KIME_SECTION_NAME_SIZE - 1) + " characters");
    std::memset(&table[i], 0, sizeof table[i]);
    std::memcpy(table[i].name, s.name.data(), s.name.size());
    table[i].offset = offset;
    table[i].size = s.bytes.size();
    table[i].checksum = kime_checksum(s.bytes.data(), s.bytes.size());
    offset = alignUp(offset + s.bytes.size());
  }
  h.file_size = offset;

  std::string out(offset, '\0');
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, table.data(), sizeof(kime_section_entry) * table.size());
  for (size_t i = 0; i < sections.size(); ++i)
    std::memcpy(out.data() + table[i].offset, sections[i].bytes.data(), sections[i].bytes.size());
  return out;
}

void writeArtifact(const std::string& path, const std::vector<Section>& sections) {
  json::writeFileAtomic(path, buildArtifact(sections));
}

}  // namespace kime
