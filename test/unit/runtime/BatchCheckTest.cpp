// The batch check (docs/batch.md): every rule, with its wording.
#include <gtest/gtest.h>

#include "TestBatch.h"
#include "kime/batch.h"

namespace kime {
namespace {

using test::B;
using test::good;

std::string check(const B& b, size_t vocab = 10, size_t types = 2) {
  auto err = checkBatch(b.view(), vocab, types);
  return err ? err->text() : "ok";
}

TEST(BatchCheck, AcceptsAConsistentBatch) { EXPECT_EQ(check(good()), "ok"); }

TEST(BatchCheck, AcceptsTheEmptyBatchAndEmptySequences) {
  EXPECT_EQ(check({{}, {0}, {}, {0}, {}}), "ok");
  EXPECT_EQ(check({{1, 2}, {0, 0, 2}, {1}, {0, 0, 1}, {0, 1}}), "ok");
}

TEST(BatchCheck, CuAndMcuMustStartAtZero) {
  B b = good();
  b.cu[0] = 1;
  EXPECT_EQ(check(b), "bad batch: cu and mcu must start at 0");
  b = good();
  b.mcu = {};
  EXPECT_EQ(check(b), "bad batch: cu and mcu must start at 0");
  EXPECT_EQ(check({{}, {}, {}, {0}, {}}), "bad batch: cu and mcu must start at 0");
}

TEST(BatchCheck, CountsMustAgree) {
  B b = good();
  b.qtype.push_back(0);
  EXPECT_EQ(check(b), "bad batch: 2 sequences but 3 mcu and 3 qtype");
  b = good();
  b.mcu.push_back(3);
  EXPECT_EQ(check(b), "bad batch: 2 sequences but 4 mcu and 2 qtype");
}

TEST(BatchCheck, CuAndMcuMustEndAtTheTotals) {
  B b = good();
  b.ids.push_back(1);
  EXPECT_EQ(check(b), "bad batch: cu and mcu must end at the totals");
  b = good();
  b.markers.pop_back();
  EXPECT_EQ(check(b), "bad batch: cu and mcu must end at the totals");
}

TEST(BatchCheck, SequencesMustNotEndBeforeTheyStart) {
  B b = good();
  b.cu = {0, 6, 5};
  EXPECT_EQ(check(b), "bad batch: sequence 1 ends before it starts");
  b = good();
  b.mcu = {0, 1, 0};
  b.markers = {};
  EXPECT_EQ(check(b), "bad batch: sequence 1 ends before it starts");
  b.markers = {0, 0};
  b.mcu = {0, 2, 0};
  EXPECT_EQ(check(b), "bad batch: cu and mcu must end at the totals");
  b.mcu = {0, 3, 2};
  EXPECT_EQ(check(b), "bad batch: sequence 1 ends before it starts");
}

// The seed indexes markers[mcu[i]..mcu[i+1]] before it reaches the later sequence that steps
// back; kime reports that sequence instead of reading past the end.
TEST(BatchCheck, MarkerStartsPastTheTotalNameTheSequenceThatStepsBack) {
  B b = {{1, 2, 3}, {0, 1, 2, 3}, {0, 0}, {0, 5, 1, 2}, {0, 0, 0}};
  EXPECT_EQ(check(b), "bad batch: sequence 1 ends before it starts");
}

TEST(BatchCheck, TypesMustBeBelowTheModelsTypes) {
  B b = good();
  b.qtype[1] = 2;
  EXPECT_EQ(check(b), "bad batch: sequence 1 has type 2 of 2");
}

TEST(BatchCheck, MarkersMustBeInsideTheirSequence) {
  B b = good();
  b.markers[2] = 2;
  EXPECT_EQ(check(b), "bad batch: marker 2 is past sequence 1 of 2 tokens");
}

TEST(BatchCheck, TokenIdsMustBeInTheVocabulary) {
  B b = good();
  b.ids[3] = 10;
  EXPECT_EQ(check(b), "bad batch: token id 10 is past the vocabulary of 10");
}

// A model with learned positions takes sequences of at most its table's rows.
TEST(BatchCheck, SequencesMustFitTheModelsPositions) {
  EXPECT_EQ(checkBatch(good().view(), 10, 2, 3), std::nullopt);  // 3 and 2 tokens
  auto err = checkBatch(good().view(), 10, 2, 2);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->kind, ErrorKind::Batch);
  EXPECT_EQ(err->text(), "bad batch: sequence 0 has 3 tokens, past the model's 2 positions");
}

TEST(BatchCheck, ErrorsReadAsTheSeedsDisplay) {
  EXPECT_EQ(Error::noBucket("serve", 600, 3, 7).text(), "no serve bucket holds 600 tokens, 3 sequences and 7 markers");
  EXPECT_EQ(Error::unsupported("op x").text(), "unsupported: op x");
  EXPECT_EQ(Error::device("lost").text(), "device: lost");
}

TEST(Bucket, HoldsABatchWithinEachBound) {
  Bucket b{128, 8, 32};
  EXPECT_TRUE(b.holds(128, 8, 32));
  EXPECT_FALSE(b.holds(129, 1, 1));
  EXPECT_FALSE(b.holds(1, 9, 1));
  EXPECT_FALSE(b.holds(1, 1, 33));
}

}  // namespace
}  // namespace kime
