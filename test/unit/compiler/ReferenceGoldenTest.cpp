// The reference evaluator against the golden cases of an independent implementation (f64):
// every config, every batch, within 1e-6 (absolute plus 1e-6 relative).
#include <gtest/gtest.h>

#include "TestData.h"
#include "kime/tooling/BatchFile.h"
#include "reference/Reference.h"

namespace kime {
namespace {

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MatchesEveryBatch) {
  const std::string dir = test::dataPath("golden/" + GetParam());
  Graph g = test::goldenGraph(GetParam());
  auto ck = Checkpoint::open(dir + "/model.safetensors");
  RefWeights w = loadRefWeights(g, *ck);
  int batches = 0;
  for (int k = 0; k < 6; ++k, ++batches) {
    SCOPED_TRACE("batch_" + std::to_string(k));
    tooling::OwnedBatch b = tooling::readBatchFile(dir + "/batch_" + std::to_string(k) + ".json");
    test::Expected want = test::readExpected(dir + "/expect_" + std::to_string(k) + ".json");
    RefOutputs got;
    auto err = evaluateReference(g, w, b.view(), got);
    ASSERT_FALSE(err) << err->text();
    ASSERT_EQ(got[0].size(), want[0].size());
    ASSERT_EQ((got[1].size() / 2), (want[1].size() / 2));
    for (size_t i = 0; i < want[0].size(); ++i)
      EXPECT_TRUE(withinTolerance(got[0][i], want[0][i], Tolerance{1e-6, 1e-6}))
          << "logit " << i << ": " << got[0][i] << " vs " << want[0][i];
    for (size_t s = 0; s < (want[1].size() / 2); ++s)
      for (int c = 0; c < 2; ++c)
        EXPECT_TRUE(withinTolerance(got[1][2 * s + c], want[1][2 * s + c], Tolerance{1e-6, 1e-6}))
            << "act " << s << "." << c << ": " << got[1][2 * s + c] << " vs " << want[1][2 * s + c];
  }
  EXPECT_EQ(batches, 6);
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenTest, ::testing::ValuesIn(test::goldenCases()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

TEST(GoldenCases, AllFourArePresent) { EXPECT_EQ(test::goldenCases().size(), 4u); }

}  // namespace
}  // namespace kime
