// An artifact opened from a buffer the caller keeps (kime_model_open_memory, Model::openMemory):
// the same checks as a file, the same outputs bit for bit with either kernel loader, the buffer
// left as it was, and misaligned, short or missing buffers refused by name.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/kime.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

// The example artifact's bytes in a page-aligned buffer (as kime_add_model's EMBED links it),
// with `slack` spare bytes after it.
struct AlignedArtifact {
  std::vector<char> bytes;
  void* data = nullptr;

  explicit AlignedArtifact(size_t slack = 0) {
    std::ifstream in(test::testArtifact(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
    data = std::aligned_alloc(4096, (bytes.size() + slack + 4095) / 4096 * 4096);
    std::memcpy(data, bytes.data(), bytes.size());
  }
  ~AlignedArtifact() { std::free(data); }
  size_t size() const { return bytes.size(); }
};

void expectSameBits(const Outputs& a, const Outputs& b) {
  ASSERT_EQ(a[0].size(), b[0].size());
  ASSERT_EQ((a[1].size() / 2), (b[1].size() / 2));
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), a[0].size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a[1].data(), b[1].data(), a[1].size() * sizeof(float)), 0);
}

TEST(OpenMemory, RunsAsTheFileDoesWithEitherLoaderAndLeavesTheBufferAlone) {
  AlignedArtifact buf;
  auto b = tooling::uniformBatch(6, 20, 3, test::testModel()->vocab(), test::testModel()->types(), 7);
  const Outputs fromFile = test::runServe(test::testModel(), b.view());
  for (const char* loader : {"dlopen", "kime"}) {
    SCOPED_TRACE(loader);
    setenv("KIME_KERNEL_LOADER", loader, 1);
    ModelOptions o;
    o.sourceName = "linked-in model";
    auto m = Model::openMemory(buf.data, buf.size(), o);
    unsetenv("KIME_KERNEL_LOADER");
    ASSERT_TRUE(m) << m.error().text();
    EXPECT_NE((*m)->inspect().find("linked-in model"), std::string::npos);
    expectSameBits(test::runServe(*m, b.view()), fromFile);
  }
  EXPECT_EQ(std::memcmp(buf.data, buf.bytes.data(), buf.size()), 0);
}

TEST(OpenMemory, TheCApiOpensABufferAndSaysWhichOneItRefused) {
  AlignedArtifact buf(64);
  kime_error err;
  kime_model* model = reinterpret_cast<kime_model*>(1);
  ASSERT_EQ(kime_model_open_memory(buf.data, buf.size(), nullptr, &model, &err), KIME_OK) << err.message;
  kime_model_release(model);

  kime_model_options o;
  kime_model_options_init(&o);
  o.source_name = "embedded small";
  // One byte in: misaligned, named with its address and the alignment it needs.
  char* shifted = static_cast<char*>(buf.data) + 1;
  std::memmove(shifted, buf.bytes.data(), buf.size());
  EXPECT_EQ(kime_model_open_memory(shifted, buf.size(), &o, &model, &err), KIME_UNSUPPORTED);
  EXPECT_EQ(model, nullptr);
  EXPECT_NE(std::strstr(err.message, "embedded small: the buffer at 0x"), nullptr) << err.message;
  EXPECT_NE(std::strstr(err.message, "is not 64-byte aligned"), nullptr) << err.message;
  std::memcpy(buf.data, buf.bytes.data(), buf.size());

  EXPECT_EQ(kime_model_open_memory(buf.data, 16, &o, &model, &err), KIME_UNSUPPORTED);
  EXPECT_STREQ(err.message, "unsupported: embedded small: not a kime artifact (16 bytes is shorter than a header)");
  EXPECT_EQ(kime_model_open_memory(buf.data, buf.size() - 1, &o, &model, &err), KIME_UNSUPPORTED);
  EXPECT_NE(std::strstr(err.message, "(truncated or appended to)"), nullptr) << err.message;
  EXPECT_EQ(kime_model_open_memory(nullptr, 100, nullptr, &model, &err), KIME_UNSUPPORTED);
  EXPECT_STREQ(err.message, "unsupported: artifact in memory: no buffer (NULL)");
  EXPECT_EQ(kime_model_open_memory(buf.data, buf.size(), &o, nullptr, &err), KIME_INVALID_ARGUMENT);
}

TEST(OpenMemory, DamageAnywhereIsRefusedAsInAFile) {
  AlignedArtifact buf;
  char* bytes = static_cast<char*>(buf.data);
  // A section's payload (the manifest's, at the first section offset) and the zero padding at the
  // end of the file (the last section ends before the file's last page does).
  bytes[4096 + 10] ^= 1;
  auto m = Model::openMemory(buf.data, buf.size());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().text(), "unsupported: artifact in memory: section \"manifest\" is corrupt (checksum mismatch)");
  bytes[4096 + 10] ^= 1;
  bytes[buf.size() - 1] = 1;
  m = Model::openMemory(buf.data, buf.size());
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().text().find("the padding after section \""), std::string::npos) << m.error().text();
  EXPECT_NE(m.error().text().find("is not zero (damaged)"), std::string::npos) << m.error().text();
}

}  // namespace
}  // namespace kime
