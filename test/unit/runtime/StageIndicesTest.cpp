// The index arrays the runtime stages from a batch: per token, per marker, per sequence, and for
// kime-prune-rows' output rows (each sequence's first token, then each marked token).
#include <gtest/gtest.h>

#include <vector>

#include "model_impl.h"

namespace kime {
namespace {

struct Staged {
  std::vector<int32_t> arrays[kStagedInputs];
  std::vector<int32_t>& operator[](InputId id) { return arrays[stagedIndex(id)]; }
};

// Three sequences: 3 tokens with markers {0, 2}, an empty one, 2 tokens with marker {1}.
Staged stage() {
  static const std::vector<uint32_t> ids = {5, 6, 7, 8, 9}, cu = {0, 3, 3, 5}, markers = {0, 2, 1}, mcu = {0, 2, 2, 3};
  static const std::vector<uint8_t> qtype = {1, 0, 1};
  const Batch b{ids, cu, markers, mcu, qtype};
  Staged s;
  int32_t* at[kStagedInputs];
  const Bucket bucket{5, 3, 3};
  for (size_t i = 0; i < kStagedInputs; ++i) {
    s.arrays[i].assign(stagedRows(i, bucket), -7);
    at[i] = s.arrays[i].data();
  }
  stageIndices(b, at);
  return s;
}

using V = std::vector<int32_t>;

TEST(StageIndices, TokensKnowTheirSequenceAndPosition) {
  Staged s = stage();
  EXPECT_EQ(s[KIME_INPUT_TOKSEQ], (V{0, 0, 0, 2, 2}));
  EXPECT_EQ(s[KIME_INPUT_TOKPOS], (V{0, 1, 2, 0, 1}));
}

TEST(StageIndices, HeadsFindTheirTokens) {
  Staged s = stage();
  EXPECT_EQ(s[KIME_INPUT_MARKER_ROWS], (V{0, 2, 4}));
  EXPECT_EQ(s[KIME_INPUT_FIRST_ROWS], (V{0, -1, 3}));
}

TEST(StageIndices, OutputRowsAreFirstTokensThenMarkedTokens) {
  Staged s = stage();
  // R = S + M = 6 rows: sequences 0, 1 (empty), 2, then markers 0, 1, 2.
  EXPECT_EQ(s[KIME_INPUT_OUT_ROWS], (V{0, -1, 3, 0, 2, 4}));
  EXPECT_EQ(s[KIME_INPUT_OUT_SEQ], (V{0, 1, 2, 0, 0, 2}));
  EXPECT_EQ(s[KIME_INPUT_OUT_POS], (V{0, 0, 0, 0, 2, 1}));
  EXPECT_EQ(s[KIME_INPUT_OUT_FIRST_ROWS], (V{0, -1, 2}));
  EXPECT_EQ(s[KIME_INPUT_OUT_MARKER_ROWS], (V{3, 4, 5}));
}

}  // namespace
}  // namespace kime
