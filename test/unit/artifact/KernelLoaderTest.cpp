// The two ways the runtime loads kernels (the system's dlopen and kime's own loader, which static
// executables use) give bit-identical outputs on the compiled example model, and a loader name
// the runtime does not know is refused.
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/format.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

// Opens the example artifact with KIME_KERNEL_LOADER set to `loader`.
Expected<std::shared_ptr<Model>> openWith(const char* loader) {
  const std::string& artifact = test::testArtifact();  // compiled (and opened) first
  setenv("KIME_KERNEL_LOADER", loader, 1);
  auto m = Model::open(artifact);
  unsetenv("KIME_KERNEL_LOADER");
  return m;
}

// glibc's dlopen matches a name already loaded before it reads the file: a model opened (and
// closed) while another is loaded must still get its own code, not the other's under a reused name.
TEST(KernelLoader, EachModelGetsItsOwnCodeWhileAnotherIsLoaded) {
  std::string bytes = test::readBytes(test::testArtifact());
  // No ELF header: no loader may take it.
  ASSERT_GT(test::rewriteSections(bytes, KIME_SECTION_CPU_CODE, [](char* code, uint64_t) { std::memset(code, 0, 64); }),
            0);
  void* buffer = std::aligned_alloc(4096, (bytes.size() + 4095) / 4096 * 4096);
  std::memcpy(buffer, bytes.data(), bytes.size());
  for (int round = 0; round < 3; ++round) {
    auto first = openWith("dlopen");  // loaded, and others opened and closed meanwhile
    ASSERT_TRUE(first) << first.error().text();
    auto again = openWith("dlopen");
    ASSERT_TRUE(again) << again.error().text();
    again = Expected<std::shared_ptr<Model>>(Error::unsupported("closed"));
    auto broken = Model::openMemory(buffer, bytes.size());
    ASSERT_FALSE(broken) << "round " << round << ": code that is no ELF object was taken for another model's";
    EXPECT_NE(broken.error().text().find("invalid ELF header"), std::string::npos) << broken.error().text();
  }
  std::free(buffer);
}

TEST(KernelLoader, KimesLoaderAndDlopenGiveTheSameOutputs) {
  auto viaDlopen = openWith("dlopen");
  auto viaKime = openWith("kime");
  ASSERT_TRUE(viaDlopen) << viaDlopen.error().text();
  ASSERT_TRUE(viaKime) << viaKime.error().text();
  EXPECT_NE((*viaKime)->inspect().find("(kime loader)"), std::string::npos);
  EXPECT_NE((*viaDlopen)->inspect().find("(dlopen loader)"), std::string::npos);
  for (uint64_t seed : {1, 2}) {
    auto b = tooling::uniformBatch(6, 20, 3, test::testModel()->vocab(), test::testModel()->types(), seed);
    Outputs a = test::runServe(*viaDlopen, b.view()), k = test::runServe(*viaKime, b.view());
    ASSERT_EQ(a[0].size(), k[0].size());
    ASSERT_EQ((a[1].size() / 2), (k[1].size() / 2));
    EXPECT_EQ(std::memcmp(a[0].data(), k[0].data(), a[0].size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a[1].data(), k[1].data(), a[1].size() * sizeof(float)), 0);
  }
}

TEST(KernelLoader, AnUnknownLoaderIsRefused) {
  auto m = openWith("ld.so");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().kind, ErrorKind::Unsupported);
  EXPECT_NE(m.error().text().find("KIME_KERNEL_LOADER is \"ld.so\""), std::string::npos) << m.error().text();
}

}  // namespace
}  // namespace kime
