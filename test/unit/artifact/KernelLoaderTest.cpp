// The two ways the runtime loads kernels (the system's dlopen and kime's own loader, which static
// executables use) give bit-identical outputs on the compiled example model, and a loader name
// the runtime does not know is refused.
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "TestArtifact.h"
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
    ASSERT_EQ(a.logits.size(), k.logits.size());
    ASSERT_EQ(a.act.size(), k.act.size());
    EXPECT_EQ(std::memcmp(a.logits.data(), k.logits.data(), a.logits.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.act.data(), k.act.data(), a.act.size() * sizeof(a.act[0])), 0);
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
