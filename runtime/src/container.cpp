#include "kime/container.h"

#include <algorithm>
#include <cstring>

#include "kime/format.h"

namespace kime {

namespace {

// Sections must not overlap, and every byte outside the header, the table and the sections (the
// padding up to each section's alignment) must be zero: no damage goes unnoticed.
std::optional<std::string> checkLayout(const uint8_t* data, uint64_t size, const std::vector<SectionInfo>& sections,
                                       uint64_t tableStart, uint64_t tableEnd) {
  std::vector<const SectionInfo*> byOffset;
  for (const SectionInfo& s : sections) byOffset.push_back(&s);
  std::sort(byOffset.begin(), byOffset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  uint64_t end = sizeof(kime_file_header);
  auto zeroUpTo = [&](uint64_t to) {
    for (uint64_t i = end; i < to; ++i)
      if (data[i] != 0) return false;
    return true;
  };
  if (!zeroUpTo(tableStart)) return std::string("the padding after the header is not zero (damaged)");
  end = tableEnd;
  std::string after = "the section table";
  for (const SectionInfo* s : byOffset) {
    if (s->offset < end) return "section \"" + s->name + "\" overlaps " + after;
    if (!zeroUpTo(s->offset)) return "the padding after " + after + " is not zero (damaged)";
    end = s->offset + s->size;
    after = "section \"" + s->name + "\"";
  }
  if (!zeroUpTo(size)) return "the padding after " + after + " is not zero (damaged)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> readContainer(const uint8_t* data, uint64_t size, std::vector<SectionInfo>& sections) {
  using Why = std::optional<std::string>;
  auto fail = [](const std::string& msg) { return Why(msg); };
  sections.clear();
  if (size < sizeof(kime_file_header))
    return fail("not a kime artifact (" + std::to_string(size) + " bytes is shorter than a header)");
  kime_file_header h;
  std::memcpy(&h, data, sizeof h);
  if (std::memcmp(h.magic, KIME_MAGIC, KIME_MAGIC_SIZE) != 0) return fail("not a kime artifact (bad magic)");
  if (h.version > KIME_FORMAT_VERSION)
    return fail("format version " + std::to_string(h.version) + " is newer than this runtime's " +
                std::to_string(KIME_FORMAT_VERSION) + "; recompile the model or update kime");
  if (h.version != KIME_FORMAT_VERSION)
    return fail("format version " + std::to_string(h.version) + " is older than this runtime's " +
                std::to_string(KIME_FORMAT_VERSION) + "; recompile the model with this kime");
  for (uint64_t r : h.reserved)
    if (r != 0) return fail("the header's reserved bytes are not zero (not written by kime, or damaged)");
  if (h.file_size != size)
    return fail("the file has " + std::to_string(size) + " bytes but its header says " + std::to_string(h.file_size) +
                " (truncated or appended to)");
  uint64_t tableEnd = h.section_table_offset + uint64_t(h.section_count) * sizeof(kime_section_entry);
  if (h.section_count > 1024 || h.section_table_offset < sizeof h || tableEnd > size)
    return fail("the section table lies outside the file");
  for (uint32_t i = 0; i < h.section_count; ++i) {
    kime_section_entry e;
    std::memcpy(&e, data + h.section_table_offset + i * sizeof e, sizeof e);
    if (e.name[KIME_SECTION_NAME_SIZE - 1] != '\0') return fail("section " + std::to_string(i) + " has no name");
    std::string name(e.name);
    for (size_t k = name.size(); k < KIME_SECTION_NAME_SIZE; ++k)
      if (e.name[k] != '\0') return fail("section " + std::to_string(i) + "'s name is not NUL padded");
    if (e.offset % KIME_SECTION_ALIGN || e.offset < tableEnd || e.offset > size || e.size > size - e.offset)
      return fail("section \"" + name + "\" lies outside the file");
    if (kime_checksum(data + e.offset, e.size) != e.checksum)
      return fail("section \"" + name + "\" is corrupt (checksum mismatch)");
    sections.push_back({name, e.offset, e.size});
  }
  return checkLayout(data, size, sections, h.section_table_offset, tableEnd);
}

}  // namespace kime
