// kime-artifact-edit ARTIFACT MODE: damages one field of an artifact's manifest or self-test in
// place, through their schemas (runtime/schema), and fixes up the section's checksum, so that the
// artifact still opens as a container and only the checks of what it damaged can tell. A test
// tool (lit: damaged-plan, refit, kime-run-selftest), never installed.
//   --manifest-slot    kernel 0's second argument becomes slot 200, which no class has
//   --manifest-dtype   the first u32 argument of bucket 0's first step becomes i32
//   --manifest-kernel  bucket 0's first step calls kernel 1 (another class, other slots)
//   --selftest-logit   the first logit of the first case with logits grows by 5
//   --selftest-root    the section's root offset points past its end (no FlatBuffer)
// Prints what it changed.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kime/container.h"
#include "kime/format.h"
#include "kime/plan.h"
#include "kime/schema/manifest_generated.h"
#include "kime/schema/selftest_generated.h"

namespace {

namespace fb = kime::schema;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "kime-artifact-edit: %s\n", why.c_str());
  std::exit(2);
}

bool editManifest(const std::string& mode, uint8_t* section) {
  fb::Manifest* m = fb::GetMutableManifest(section);
  fb::Step* first = m->mutable_buckets()->GetMutableObject(0)->mutable_steps()->GetMutableObject(0);
  if (mode == "--manifest-slot") {
    m->mutable_kernels()->GetMutableObject(0)->mutable_slots()->Mutate(1, 200);
    return true;
  }
  if (mode == "--manifest-kernel") return first->mutate_kernel(1);
  if (mode != "--manifest-dtype") return false;
  auto* args = first->mutable_args();
  for (flatbuffers::uoffset_t i = 0; i < args->size(); ++i)
    if (args->Get(i)->dtype() == KIME_DTYPE_U32) {
      args->GetMutableObject(i)->mutate_dtype(KIME_DTYPE_I32);
      return true;
    }
  die("bucket 0's first step has no u32 argument");
}

bool editSelftest(const std::string& mode, uint8_t* section) {
  if (mode == "--selftest-root") {
    const uint32_t past = 1u << 30;
    std::memcpy(section, &past, sizeof past);
    return true;
  }
  auto* cases = fb::GetMutableSelftest(section)->mutable_cases();
  for (flatbuffers::uoffset_t i = 0; i < cases->size(); ++i) {
    fb::Case* c = cases->GetMutableObject(i);
    if (!c->outputs()->size() || !c->outputs()->Get(0)->values()->size()) continue;
    std::printf("mutated: stage %s bucket %u\n", c->stage()->c_str(), c->bucket());
    auto* first = c->mutable_outputs()->GetMutableObject(0)->mutable_values();  // the first output's first value
    first->Mutate(0, first->Get(0) + 5);
    return true;
  }
  die("no case has a value of its first output");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3)
    die("usage: kime-artifact-edit ARTIFACT --manifest-slot|--manifest-dtype|--manifest-kernel|"
        "--selftest-logit|--selftest-root");
  const std::string path = argv[1], mode = argv[2];
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<kime::SectionInfo> sections;
  if (auto why = kime::readContainer(bytes.data(), bytes.size(), sections)) die(path + ": " + *why);
  const std::string wanted = mode.rfind("--manifest", 0) == 0 ? KIME_SECTION_MANIFEST : KIME_SECTION_SELFTEST;
  size_t i = 0;
  while (i < sections.size() && sections[i].name != wanted) ++i;
  if (i == sections.size()) die(path + ": no " + wanted + " section");
  uint8_t* section = bytes.data() + sections[i].offset;
  const bool done = wanted == KIME_SECTION_MANIFEST ? editManifest(mode, section) : editSelftest(mode, section);
  if (!done) die("cannot " + mode + " (unknown mode, or the field is not in the section)");
  kime_file_header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  const uint64_t checksum = kime_checksum(section, sections[i].size);
  std::memcpy(
      bytes.data() + h.section_table_offset + i * sizeof(kime_section_entry) + offsetof(kime_section_entry, checksum),
      &checksum, sizeof checksum);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  std::printf("damaged: %s\n", mode.c_str() + 2);
  return 0;
}
