// The safetensors reader: a good file reads in place; each kind of damage is refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "TestData.h"
#include "checkpoint/Safetensors.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

using ::testing::HasSubstr;

// A safetensors image from a header text and a data size (data bytes are 0..n-1).
std::vector<uint8_t> image(const std::string& header, size_t dataBytes, uint64_t headerLen = 0) {
  std::string out(8, '\0');
  uint64_t n = headerLen ? headerLen : header.size();
  for (int i = 0; i < 8; ++i) out[i] = char(n >> (8 * i));
  out += header;
  for (size_t i = 0; i < dataBytes; ++i) out += char(i);
  return std::vector<uint8_t>(out.begin(), out.end());
}

std::string errorOf(const std::vector<uint8_t>& bytes) {
  try {
    Checkpoint::fromBytes(bytes.data(), bytes.size(), "m.safetensors");
  } catch (const CompileError& e) {
    return e.what();
  }
  return "no error";
}

const char* kGood = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[8,16]}})";

TEST(Safetensors, ReadsViewsIntoTheImage) {
  auto bytes = image(kGood, 16);
  auto c = Checkpoint::fromBytes(bytes.data(), bytes.size(), "m");
  ASSERT_EQ(c->tensors().size(), 2u);
  const TensorView* b = c->find("b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(b->data, bytes.data() + 8 + std::strlen(kGood) + 8);  // no copy
}

TEST(Safetensors, RefusesAShortFileAndAHeaderPastTheEnd) {
  EXPECT_EQ(errorOf({1, 2, 3}), "m.safetensors: file of 3 bytes is too short for a safetensors header");
  EXPECT_EQ(errorOf(image(kGood, 16, 1000)), "m.safetensors: header of 1000 bytes is past the end of the file (" +
                                                 std::to_string(8 + std::strlen(kGood) + 16) + " bytes)");
}

TEST(Safetensors, RefusesAHeaderThatIsNotJson) {
  EXPECT_THAT(errorOf(image("{\"a\": ", 0)), HasSubstr("m.safetensors: header: bad JSON: "));
  EXPECT_EQ(errorOf(image("[1]", 0)), "m.safetensors: header must be a JSON object");
}

TEST(Safetensors, RefusesAnUnknownDType) {
  EXPECT_EQ(errorOf(image(R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", 1)),
            "m.safetensors: tensor \"a\": unknown dtype \"F8_E4M3\" (kime reads F32, F16 and BF16)");
}

TEST(Safetensors, RefusesARangeThatDoesNotMatchTheShape) {
  EXPECT_EQ(errorOf(image(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24)),
            "m.safetensors: tensor \"a\": shape [2,3] F32 needs 24 bytes but data_offsets [0,20] span 20");
}

TEST(Safetensors, RefusesRangesOutsideTheFile) {
  EXPECT_EQ(errorOf(image(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 16)),
            "m.safetensors: tensor \"a\": data_offsets [8,24] end past the 16 data bytes of the file");
  EXPECT_EQ(errorOf(image(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 16)),
            "m.safetensors: tensor \"a\": data_offsets [8,4] end before they start");
}

TEST(Safetensors, RefusesOverlappingRanges) {
  EXPECT_EQ(errorOf(image(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                          R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                          R"("b":{"dtype":"F16","shape":[2],"data_offsets":[12,16]}})",
                          16)),
            "m.safetensors: tensors \"a\" and \"b\" overlap (bytes 0..16 and 12..16)");
}

TEST(Safetensors, RefusesAGraphWeightThatIsMissingOrOfAnotherShape) {
  auto bytes = image(kGood, 16);
  auto c = Checkpoint::fromBytes(bytes.data(), bytes.size(), "m.safetensors");
  Graph g;
  g.weights = {{"a", {2}, shapes::DType::F32}, {"b", {4}, shapes::DType::BF16}};
  try {
    c->checkAgainst(g);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "m.safetensors: weight \"b\" is [2, 2] but the graph declares [4]");
  }
  g.weights = {{"a", {2}, shapes::DType::F16}};
  EXPECT_THROW(c->checkAgainst(g), CompileError);
  g.weights = {{"c", {2}, shapes::DType::F32}};
  try {
    c->checkAgainst(g);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "m.safetensors: weight \"c\" of the graph is missing");
  }
}

TEST(Safetensors, WriterAndReaderAgreeForEveryDType) {
  std::string path = std::string(KIME_BINARY_DIR) + "/safetensors-roundtrip.safetensors";
  std::vector<float> v = {1.0f, -2.5f, 3.140625f, 0.0f, 65504.0f, 1e-3f};
  writeSafetensors(
      path,
      {{"f", shapes::DType::F32, {2, 3}, v}, {"h", shapes::DType::F16, {6}, v}, {"b", shapes::DType::BF16, {3, 2}, v}},
      {{"seed", "1"}});
  auto c = Checkpoint::open(path);
  EXPECT_EQ(c->metadata().at("seed"), "1");
  EXPECT_EQ(c->find("f")->toFloat(), v);
  std::vector<float> h = c->find("h")->toFloat(), b = c->find("b")->toFloat();
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(h[i], v[i], std::fabs(v[i]) * 1e-3) << i;
    EXPECT_NEAR(b[i], v[i], std::fabs(v[i]) * 8e-3) << i;
  }
  std::filesystem::remove(path);
}

TEST(Safetensors, TheGoldenCheckpointsRead) {
  for (const std::string& name : test::goldenCases()) {
    auto c = Checkpoint::open(test::dataPath("golden/" + name + "/model.safetensors"));
    EXPECT_NO_THROW(c->checkAgainst(test::goldenGraph(name))) << name;
  }
}

}  // namespace
}  // namespace kime
