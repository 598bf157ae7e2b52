// A model's gather limits: a batch whose index (token ids, types, positions, cu, mcu, markers)
// passes a gather's table is refused naming the first such gather, with the reference
// evaluator's wording, and a batch inside every table passes.
#include <gtest/gtest.h>

#include "TestBatch.h"
#include "kime/gather_limits.h"

namespace kime {
namespace {

using test::B;
using test::good;

std::string check(const B& b, const std::vector<GatherLimit>& limits) {
  auto err = checkGatherLimits(b.view(), limits);
  return err ? err->text() : "ok";
}

GatherLimit limit(kime_plan_input index, size_t rows) { return {index, rows, "node 3 (gather_rows \"g\")", "t"}; }

TEST(GatherLimits, EachIndexIsCheckedAgainstItsTable) {
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_IDS, 10)}), "ok");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_IDS, 8)}),
            "bad batch: node 3 (gather_rows \"g\"): row 8 is past the 8 rows of \"t\"");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_QTYPE, 1)}),
            "bad batch: node 3 (gather_rows \"g\"): row 1 is past the 1 rows of \"t\"");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_CU, 5)}),
            "bad batch: node 3 (gather_rows \"g\"): row 5 is past the 5 rows of \"t\"");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_CU, 6)}), "ok");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_MCU, 3)}),
            "bad batch: node 3 (gather_rows \"g\"): row 3 is past the 3 rows of \"t\"");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_MARKERS, 2)}),
            "bad batch: node 3 (gather_rows \"g\"): row 2 is past the 2 rows of \"t\"");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_MARKERS, 3)}), "ok");
}

TEST(GatherLimits, PositionsAreEachTokensPlaceInItsSequence) {
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_TOKPOS, 3)}), "ok");
  EXPECT_EQ(check(good(), {limit(KIME_INPUT_TOKPOS, 2)}),
            "bad batch: node 3 (gather_rows \"g\"): row 2 is past the 2 rows of \"t\"");
}

TEST(GatherLimits, TheFirstGatherInGraphOrderIsNamed) {
  GatherLimit first = limit(KIME_INPUT_MARKERS, 1), second = limit(KIME_INPUT_IDS, 1);
  second.where = "node 9 (gather_rows \"h\")";
  EXPECT_EQ(check(good(), {first, second}), "bad batch: node 3 (gather_rows \"g\"): row 2 is past the 1 rows of \"t\"");
  EXPECT_EQ(check(good(), {second, first}), "bad batch: node 9 (gather_rows \"h\"): row 5 is past the 1 rows of \"t\"");
  EXPECT_EQ(check({{}, {0}, {}, {0}, {}}, {first, second}), "ok");  // the empty batch indexes nothing
}

// An imported model's padding id: the first token that holds it is named by sequence and position.
TEST(PaddingId, ABatchMayNotHoldIt) {
  auto check = [](const B& b, int64_t id) {
    auto err = checkPaddingId(b.view(), id);
    return err ? err->text() : "ok";
  };
  EXPECT_EQ(check(good(), -1), "ok");  // no padding id
  EXPECT_EQ(check(good(), 4), "ok");
  EXPECT_EQ(check(good(), 8),
            "bad batch: sequence 1, token 0: id 8 is the model's padding id, which its exported positions do not "
            "count; a batch may not hold it");
  EXPECT_EQ(check(good(), 6),
            "bad batch: sequence 0, token 1: id 6 is the model's padding id, which its exported positions do not "
            "count; a batch may not hold it");
  EXPECT_EQ(check({{}, {0}, {}, {0}, {}}, 0), "ok");
}

}  // namespace
}  // namespace kime
