#include "ArtifactWriter.h"

#include <cstring>
#include <string_view>

#include "kime/format.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

static uint64_t alignUp(uint64_t n) { return (n + KIME_SECTION_ALIGN - 1) / KIME_SECTION_ALIGN * KIME_SECTION_ALIGN; }

namespace {

// The header and the section table, and the file's size: what comes before the first section.
std::string headerAndTable(const std::vector<Section>& sections, std::vector<kime_section_entry>& table) {
  kime_file_header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, KIME_MAGIC, KIME_MAGIC_SIZE);
  h.version = KIME_FORMAT_VERSION;
  h.section_count = uint32_t(sections.size());
  h.section_table_offset = sizeof h;

  table.assign(sections.size(), kime_section_entry{});
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
  std::string out(sizeof h + sizeof(kime_section_entry) * table.size(), '\0');
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, table.data(), sizeof(kime_section_entry) * table.size());
  return out;
}

// The file as pieces in order: the header and table, then each section after the zeros that align
// it, then the zeros that align the file's end.
std::vector<std::string_view> pieces(const std::string& head, const std::vector<Section>& sections,
                                     const std::vector<kime_section_entry>& table) {
  static const char kZeros[KIME_SECTION_ALIGN] = {};
  std::vector<std::string_view> out = {head};
  uint64_t at = head.size();
  for (size_t i = 0; i < sections.size(); ++i) {
    out.emplace_back(kZeros, table[i].offset - at);
    out.emplace_back(sections[i].bytes);
    at = table[i].offset + table[i].size;
  }
  out.emplace_back(kZeros, alignUp(at) - at);
  return out;
}

}  // namespace

std::string buildArtifact(const std::vector<Section>& sections) {
  std::vector<kime_section_entry> table;
  const std::string head = headerAndTable(sections, table);
  std::string out;
  for (std::string_view piece : pieces(head, sections, table)) out += piece;
  return out;
}

// The sections are written from where they are, not copied into the file's bytes first: a refit's
// artifact is tens of MB, and building it in memory cost as much as writing it.
void writeArtifact(const std::string& path, const std::vector<Section>& sections) {
  std::vector<kime_section_entry> table;
  const std::string head = headerAndTable(sections, table);
  json::writeFileAtomic(path, pieces(head, sections, table));
}

}  // namespace kime
