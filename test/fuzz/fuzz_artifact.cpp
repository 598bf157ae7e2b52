// The artifact: the container (magic, version, section table, bounds, checksums) and what lies
// behind the checksums: the manifest (plans whose steps name weights, arena offsets and kernels)
// and the ELF object of each CPU code section, parsed, mapped and relocated by kime's loader but
// never run (ElfImage::check). An input whose first byte is odd gets its sections' checksums
// fixed up after the mutation, so that the fuzzer reaches past them. An input whose first byte has
// bit 1 set is opened with a trusted key (KIME_FUZZ_TRUSTED_KEY, a .pub file: scripts/fuzz.sh signs
// seeds with its secret half), so that the signature check is fuzzed too. The self-test section is
// parsed (its batches, outputs and tolerances), not run; the source section described. The
// manifest, self-test and source are FlatBuffers (runtime/schema): their verifiers are fuzzed too.
#include <sys/mman.h>
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "elf_image.h"
#include "kime/format.h"
#include "kime/signature.h"
#include "model_impl.h"

namespace {

// Recomputes the checksum of every section that lies inside the bytes.
void fixChecksums(std::vector<uint8_t>& b) {
  kime_file_header h;
  if (b.size() < sizeof h) return;
  std::memcpy(&h, b.data(), sizeof h);
  for (uint64_t i = 0; i < h.section_count && i < 1024; ++i) {
    const uint64_t at = h.section_table_offset + i * sizeof(kime_section_entry);
    if (h.section_table_offset > b.size() || at + sizeof(kime_section_entry) > b.size()) return;
    kime_section_entry e;
    std::memcpy(&e, b.data() + at, sizeof e);
    if (e.offset > b.size() || e.size > b.size() - e.offset) continue;
    e.checksum = kime_checksum(b.data() + e.offset, e.size);
    std::memcpy(b.data() + at, &e, sizeof e);
  }
}

// The key of KIME_FUZZ_TRUSTED_KEY, or none.
std::vector<kime::PublicKey> trustedKey() {
  const char* path = std::getenv("KIME_FUZZ_TRUSTED_KEY");
  std::ifstream in(path ? path : "");
  std::ostringstream text;
  text << in.rdbuf();
  kime::PublicKey key;
  if (!path || !in || kime::parsePublicKey(text.str(), key)) return {};
  return {key};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("kime-fuzz-artifact", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (size == 0 || fd < 0) return 0;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (data[0] & 1) fixChecksums(bytes);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) return 0;
  static const std::vector<kime::PublicKey> trusted = trustedKey();
  kime::ModelImpl m;
  if (data[0] & 2) m.trusted = trusted;
  if (kime::loadArtifact(path, m)) return 0;  // refused, with a message
  (void)kime::checkSelftestSection(m);        // the optional self-test section, parsed, not run
  (void)kime::describeSource(m);              // the source section, as Model::inspect shows it
  for (const std::string& target : m.sectionsUnder(KIME_SECTION_CPU_CODE)) {
    const kime::SectionInfo* s = m.section(KIME_SECTION_CPU_CODE + target);
    std::string error;
    (void)kime::ElfImage::check(m.map + s->offset, s->size, error);
  }
  return 0;
}
