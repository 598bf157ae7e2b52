// kime's own loader (runtime/src/elf_image.h) on small shared objects built with the tests, and
// its refusals of bytes that are not a loadable object.
#include <elf.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "elf_image.h"

namespace kime {
namespace {

std::vector<uint8_t> readFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(ElfImage, LoadsRelocatesAndConstructs) {
  std::vector<uint8_t> bytes = readFile(KIME_ELF_FIXTURE);
  std::string error;
  std::unique_ptr<ElfImage> img = ElfImage::load(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(img) << error;
  auto constructed = reinterpret_cast<int (*)()>(img->symbol("fixture_constructed"));
  auto total = reinterpret_cast<size_t (*)()>(img->symbol("fixture_total_length"));
  auto sum = reinterpret_cast<int (*)(int)>(img->symbol("fixture_sum_on_heap"));
  ASSERT_TRUE(constructed && total && sum);
  EXPECT_EQ(constructed(), 42);  // the constructor ran
  EXPECT_EQ(total(), 13u);       // relocated pointers, strlen through the PLT
  EXPECT_EQ(sum(100), 4950);     // malloc and free from the host table
  auto words = static_cast<const char* const*>(img->symbol("fixture_words"));
  ASSERT_TRUE(words);
  EXPECT_STREQ(words[1], "loads");
  EXPECT_EQ(img->symbol("no_such_symbol"), nullptr);
}

// check() parses, maps and relocates as load() does and refuses what load() refuses, but runs
// nothing of the object (its scratch mapping is never made executable).
TEST(ElfImage, ChecksWithoutRunningTheObject) {
  std::vector<uint8_t> bytes = readFile(KIME_ELF_FIXTURE);
  std::string error;
  EXPECT_TRUE(ElfImage::check(bytes.data(), bytes.size(), error)) << error;
  std::vector<uint8_t> undefined = readFile(KIME_ELF_FIXTURE_UNDEFINED);
  EXPECT_FALSE(ElfImage::check(undefined.data(), undefined.size(), error));
  EXPECT_NE(error.find("undefined symbol 'kime_fixture_missing'"), std::string::npos) << error;
  EXPECT_FALSE(ElfImage::check(bytes.data(), 10, error));
  EXPECT_EQ(error, "too short for an ELF header");
}

// Found by the artifact fuzzer under UBSan: a table address that is not aligned (here the
// constructors') was read through a misaligned pointer. Such an object is refused now.
TEST(ElfImage, RefusesMisalignedTables) {
  std::vector<uint8_t> bytes = readFile(KIME_ELF_FIXTURE);
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  bool moved = false;
  for (size_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr p;
    std::memcpy(&p, bytes.data() + eh.e_phoff + i * sizeof p, sizeof p);
    if (p.p_type != PT_DYNAMIC) continue;
    for (size_t at = p.p_offset; at + sizeof(Elf64_Dyn) <= p.p_offset + p.p_filesz; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + at, sizeof d);
      if (d.d_tag != DT_INIT_ARRAY) continue;
      d.d_un.d_ptr += 1;
      std::memcpy(bytes.data() + at, &d, sizeof d);
      moved = true;
    }
  }
  ASSERT_TRUE(moved) << "the fixture has a constructor table";
  std::string error;
  EXPECT_FALSE(ElfImage::check(bytes.data(), bytes.size(), error));
  EXPECT_EQ(error, "constructor table outside the object, or misaligned");
  EXPECT_FALSE(ElfImage::load(bytes.data(), bytes.size(), error));
  EXPECT_EQ(error, "constructor table outside the object, or misaligned");
}

TEST(ElfImage, NamesAnUndefinedSymbol) {
  std::vector<uint8_t> bytes = readFile(KIME_ELF_FIXTURE_UNDEFINED);
  std::string error;
  EXPECT_FALSE(ElfImage::load(bytes.data(), bytes.size(), error));
  EXPECT_NE(error.find("undefined symbol 'kime_fixture_missing'"), std::string::npos) << error;
}

TEST(ElfImage, RefusesWhatIsNotAnObject) {
  std::string error;
  const uint8_t text[] = "not an ELF object, just some bytes that are long enough for a header.....";
  EXPECT_FALSE(ElfImage::load(text, sizeof text, error));
  EXPECT_EQ(error, "not an ELF object");
  EXPECT_FALSE(ElfImage::load(text, 10, error));
  EXPECT_EQ(error, "too short for an ELF header");
}

TEST(ElfImage, RefusesTruncatedAndForeignObjects) {
  std::vector<uint8_t> bytes = readFile(KIME_ELF_FIXTURE);
  std::string error;
  // Cut inside the last loadable segment.
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  size_t end = 0;
  for (size_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD) end = std::max<size_t>(end, ph.p_offset + ph.p_filesz);
  }
  ASSERT_GT(end, 1u);
  EXPECT_FALSE(ElfImage::load(bytes.data(), end - 1, error));
  EXPECT_NE(error.find("outside the object"), std::string::npos) << error;
  // Another machine's object (e_machine is at byte 18).
  std::vector<uint8_t> foreign = bytes;
  foreign[18] = 40;  // EM_ARM
  foreign[19] = 0;
  EXPECT_FALSE(ElfImage::load(foreign.data(), foreign.size(), error));
  EXPECT_NE(error.find("built for ELF machine 40"), std::string::npos) << error;
  // An executable, not a shared object (e_type at byte 16).
  std::vector<uint8_t> exec = bytes;
  exec[16] = 2;  // ET_EXEC
  EXPECT_FALSE(ElfImage::load(exec.data(), exec.size(), error));
  EXPECT_EQ(error, "not a shared object");
}

}  // namespace
}  // namespace kime
