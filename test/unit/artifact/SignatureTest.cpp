// Signed artifacts at run time: with trusted keys the runtime loads what one of them signed, and
// refuses, saying which, an artifact that is unsigned, signed by another key, or changed after
// signing (each change made with the section's checksum fixed up, as an attacker would) -- from a
// file and from memory alike, before any of its code is loaded.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/format.h"
#include "kime/kime.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

std::string signedBytes() { return test::readBytes(test::besideTestArtifact("small-signed.kime")); }
std::string key(const char* file) { return test::readBytes(test::besideTestArtifact(file)); }

// `bytes` with byte `at` of section `name` (-1: its middle) changed and its checksum fixed up.
std::string tampered(std::string bytes, const std::string& name, int64_t at = -1) {
  auto change = [at](char* payload, uint64_t size) { payload[at < 0 ? size / 2 : uint64_t(at)] += 1; };
  if (test::rewriteSections(bytes, name, change) != 1) throw std::runtime_error("not one section " + name);
  return bytes;
}

// The bytes in a file of their own, removed on destruction.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/kime-signature-XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0 || write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) throw std::runtime_error(path);
    close(fd);
  }
  ~TempFile() { unlink(path.c_str()); }
};

// The bytes in a KIME_MEMORY_ALIGN aligned buffer.
struct Aligned {
  void* data;
  size_t size;
  explicit Aligned(const std::string& bytes) : size(bytes.size()) {
    data = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    std::memcpy(data, bytes.data(), size);
  }
  ~Aligned() { std::free(data); }
};

ModelOptions trusting(std::vector<std::string> keys) {
  ModelOptions o;
  o.trustedKeys = std::move(keys);
  return o;
}

// The error of opening `bytes` with `keys`, from a file and from memory (the same but for the
// name); "" where it opened.
std::pair<std::string, std::string> refusals(const std::string& bytes, const std::vector<std::string>& keys) {
  TempFile f(bytes);
  Aligned a(bytes);
  auto fromFile = Model::open(f.path, trusting(keys));
  auto fromMemory = Model::openMemory(a.data, a.size, trusting(keys));
  return {fromFile ? "" : fromFile.error().text(), fromMemory ? "" : fromMemory.error().text()};
}

tooling::OwnedBatch testBatch() {
  return tooling::uniformBatch(5, 18, 3, test::testModel()->vocab(), test::testModel()->types(), 11);
}

void expectSameBits(const Outputs& a, const Outputs& b) {
  ASSERT_EQ(a[0].size(), b[0].size());
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), a[0].size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a[1].data(), b[1].data(), a[1].size() * sizeof(float)), 0);
}

TEST(Signature, ASignedArtifactFromATrustedKeyRunsAsTheUnsignedOne) {
  const auto b = testBatch();
  const Outputs want = test::runServe(test::testModel(), b.view());
  const std::string bytes = signedBytes();
  TempFile f(bytes);
  Aligned a(bytes);
  auto fromFile = Model::open(f.path, trusting({key("other.pub"), key("trusted.pub")}));
  ASSERT_TRUE(fromFile) << fromFile.error().text();
  EXPECT_NE((*fromFile)->inspect().find("(checked: trusted)"), std::string::npos);
  expectSameBits(test::runServe(*fromFile, b.view()), want);
  auto fromMemory = Model::openMemory(a.data, a.size, trusting({key("trusted.pub")}));
  ASSERT_TRUE(fromMemory) << fromMemory.error().text();
  expectSameBits(test::runServe(*fromMemory, b.view()), want);
}

TEST(Signature, EachRefusalSaysWhyFromAFileAndFromMemory) {
  const std::string bytes = signedBytes();
  const std::vector<std::string> trusted = {key("trusted.pub")};
  struct Case {
    const char* what;
    std::string bytes;
    std::vector<std::string> keys;
    const char* says;
  } cases[] = {
      {"unsigned", test::readBytes(test::testArtifact()), trusted,
       ": is not signed, and only artifacts signed by key "},
      {"another key", bytes, {key("other.pub")}, ", which is not trusted (trusted: "},
      {"code", tampered(bytes, "code.cpu.x86-64-avx2"), trusted,
       "section \"code.cpu.x86-64-avx2\" differs from what key"},
      {"manifest", tampered(bytes, "manifest"), trusted, "section \"manifest\" differs from what key"},
      {"weights", tampered(bytes, "weights.cpu"), trusted, "section \"weights.cpu\" differs from what key"},
      {"self-test", tampered(bytes, "selftest"), trusted, "section \"selftest\" differs from what key"},
      {"the signature", tampered(bytes, "signature", offsetof(kime_signature_header, signature) + 3), trusted,
       "does not match its header, section table or signature section (changed after signing)"},
      {"a listed hash", tampered(bytes, "signature", sizeof(kime_signature_header) + 60), trusted,
       "does not match its header, section table or signature section"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto [file, memory] = refusals(c.bytes, c.keys);
    EXPECT_NE(file.find(c.says), std::string::npos) << file;
    EXPECT_NE(memory.find(c.says), std::string::npos) << memory;
    EXPECT_EQ(file.substr(file.find(": ", 14)), memory.substr(memory.find(": ", 14)));  // but for the name
  }
}

TEST(Signature, WithoutTrustedKeysNothingIsChecked) {
  const auto [file, memory] = refusals(tampered(signedBytes(), "weights.cpu"), {});
  EXPECT_EQ(file, "");
  EXPECT_EQ(memory, "");
}

TEST(Signature, TheSignatureIsCheckedBeforeAnyCodeIsLoaded) {
  // Code that no loader takes: without keys the loader refuses it; with keys it never gets it.
  std::string bytes = signedBytes();
  for (int at = 0; at < 64; ++at) bytes = tampered(bytes, "code.cpu.x86-64-avx2", at);
  const auto [plain, plainMemory] = refusals(bytes, {});
  EXPECT_NE(plain.find("cannot load its x86-64-avx2 code"), std::string::npos) << plain;
  EXPECT_NE(plainMemory.find("cannot load its x86-64-avx2 code"), std::string::npos) << plainMemory;
  const auto [checked, checkedMemory] = refusals(bytes, {key("trusted.pub")});
  EXPECT_NE(checked.find("section \"code.cpu.x86-64-avx2\" differs from what key"), std::string::npos) << checked;
  EXPECT_NE(checkedMemory.find("section \"code.cpu.x86-64-avx2\" differs"), std::string::npos) << checkedMemory;
}

TEST(Signature, AFileChangedAfterATrustedOpenCannotReachTheModel) {
  const auto b = testBatch();
  const Outputs want = test::runServe(test::testModel(), b.view());
  const std::string bytes = signedBytes();
  std::string zeroed = bytes;  // every weight 0: outputs far from `want`
  kime_file_header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  for (uint32_t i = 0; i < h.section_count; ++i) {
    kime_section_entry e;
    std::memcpy(&e, bytes.data() + h.section_table_offset + i * sizeof e, sizeof e);
    if (std::string(e.name) == KIME_SECTION_WEIGHTS_CPU) std::memset(zeroed.data() + e.offset, 0, e.size);
  }
  TempFile f(bytes);
  auto trusted = Model::open(f.path, trusting({key("trusted.pub")}));
  auto mapped = Model::open(f.path);
  ASSERT_TRUE(trusted && mapped);
  const int fd = open(f.path.c_str(), O_WRONLY);
  ASSERT_EQ(pwrite(fd, zeroed.data(), zeroed.size(), 0), ssize_t(zeroed.size()));
  close(fd);
  expectSameBits(test::runServe(*trusted, b.view()), want);
  // A plain (mapped) open shows the change: what the trusted open's own copy keeps out.
  const Outputs seen = test::runServe(*mapped, b.view());
  EXPECT_NE(std::memcmp(seen[0].data(), want[0].data(), want[0].size() * sizeof(float)), 0);
}

TEST(Signature, TheCApiTakesTrustedKeysAndSaysWhichIsNone) {
  Aligned a(signedBytes());
  const std::string trustedKey = key("trusted.pub"), otherKey = key("other.pub");
  const char* keys[] = {otherKey.c_str(), trustedKey.c_str()};
  kime_model_options o;
  kime_model_options_init(&o);
  o.trusted_keys = keys;
  o.trusted_key_count = 2;
  kime_error err;
  kime_model* model = nullptr;
  ASSERT_EQ(kime_model_open_memory(a.data, a.size, &o, &model, &err), KIME_OK) << err.message;
  kime_model_release(model);
  o.trusted_key_count = 1;
  EXPECT_EQ(kime_model_open_memory(a.data, a.size, &o, &model, &err), KIME_UNSUPPORTED);
  EXPECT_NE(std::strstr(err.message, ", which is not trusted"), nullptr) << err.message;
  const char* notKeys[] = {"kime-ed25519-public c2hvcnQ="};
  o.trusted_keys = notKeys;
  EXPECT_EQ(kime_model_open_memory(a.data, a.size, &o, &model, &err), KIME_INVALID_ARGUMENT);
  EXPECT_STREQ(
      err.message,
      "kime_model_open_memory: trusted key 1: the key after \"kime-ed25519-public \" is not 32 bytes of base64");
  o.trusted_keys = nullptr;
  EXPECT_EQ(kime_model_open_memory(a.data, a.size, &o, &model, &err), KIME_INVALID_ARGUMENT);
  // Options of the size before trusted keys existed are still taken (and check nothing).
  o.struct_size = offsetof(kime_model_options, trusted_keys);
  ASSERT_EQ(kime_model_open_memory(a.data, a.size, &o, &model, &err), KIME_OK) << err.message;
  kime_model_release(model);
}

}  // namespace
}  // namespace kime
