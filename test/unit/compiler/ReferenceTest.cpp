// The reference evaluator's own behaviour: batch errors with checkBatch's messages, indices a node
// cannot follow, and the empty cases.
#include <gtest/gtest.h>

#include "TestData.h"
#include "reference/Reference.h"

namespace kime {
namespace {

struct Fixture {
  Graph g;
  RefWeights w;
};

// A tiny learned-position model with random weights (from a seed): max_pos 4.
Fixture tinyLearned() {
  ModelConfig c;
  c.vocab = 11, c.types = 2, c.hidden = 8, c.layers = 1, c.heads = 2, c.kvHeads = 1, c.ffn = 12;
  c.act = "gelu", c.pos = "learned", c.maxPos = 4, c.norm = "layer", c.bias = true;
  Fixture f{buildEncoderGraph(c, shapes::DType::F32, "tiny"), {}};
  for (auto& [name, v] : randomWeights(f.g, 7)) f.w[name] = std::vector<double>(v.begin(), v.end());
  return f;
}

TEST(Reference, ChecksTheBatchFirstWithTheSeedsMessage) {
  Fixture f = tinyLearned();
  std::vector<uint32_t> ids = {1, 11}, cu = {0, 2}, markers = {}, mcu = {0, 0};
  std::vector<uint8_t> qtype = {0};
  RefOutputs out;
  auto err = evaluateReference(f.g, f.w, {ids, cu, markers, mcu, qtype}, out);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->text(), "bad batch: token id 11 is past the vocabulary of 11");
}

// The same Batch error as the compiled artifact's (checkBatch with the graph's learned positions).
TEST(Reference, ASequencePastALearnedTableIsABatchError) {
  Fixture f = tinyLearned();
  std::vector<uint32_t> ids = {1, 2, 3, 4, 5}, cu = {0, 5}, markers = {4}, mcu = {0, 1};
  std::vector<uint8_t> qtype = {1};
  RefOutputs out;
  auto err = evaluateReference(f.g, f.w, {ids, cu, markers, mcu, qtype}, out);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->text(), "bad batch: sequence 0 has 5 tokens, past the model's 4 positions");
}

TEST(Reference, EmptyBatchGivesEmptyOutputsAndEmptySequenceGivesTheActBias) {
  Fixture f = tinyLearned();
  RefOutputs out;
  std::vector<uint32_t> none, zero = {0};
  std::vector<uint8_t> noTypes;
  ASSERT_FALSE(evaluateReference(f.g, f.w, {none, zero, none, zero, noTypes}, out));
  EXPECT_TRUE(out[0].empty());
  EXPECT_TRUE(out[1].empty());

  std::vector<uint32_t> ids = {3}, cu = {0, 1, 1}, markers = {0}, mcu = {0, 1, 1};
  std::vector<uint8_t> qtype = {0, 1};
  ASSERT_FALSE(evaluateReference(f.g, f.w, {ids, cu, markers, mcu, qtype}, out));
  ASSERT_EQ((out[1].size() / 2), 2u);
  EXPECT_EQ(out[0].size(), 1u);
  EXPECT_EQ(out[1][2 * 1 + 0], f.w.at("head.act.bias")[0]);
  EXPECT_EQ(out[1][2 * 1 + 1], f.w.at("head.act.bias")[1]);
  EXPECT_NE(out[1][2 * 0 + 0], out[1][2 * 1 + 0]);
}

// Attention stays inside each sequence: appending a second sequence changes nothing in the first.
TEST(Reference, SequencesDoNotSeeEachOther) {
  Fixture f = tinyLearned();
  RefOutputs one, two;
  std::vector<uint32_t> ids1 = {1, 2, 3}, cu1 = {0, 3}, m1 = {0, 2}, mcu1 = {0, 2};
  std::vector<uint8_t> q1 = {1};
  ASSERT_FALSE(evaluateReference(f.g, f.w, {ids1, cu1, m1, mcu1, q1}, one));
  std::vector<uint32_t> ids2 = {1, 2, 3, 9, 9}, cu2 = {0, 3, 5}, m2 = {0, 2, 1}, mcu2 = {0, 2, 3};
  std::vector<uint8_t> q2 = {1, 0};
  ASSERT_FALSE(evaluateReference(f.g, f.w, {ids2, cu2, m2, mcu2, q2}, two));
  EXPECT_EQ(one[0][0], two[0][0]);
  EXPECT_EQ(one[0][1], two[0][1]);
  EXPECT_EQ(one[1][0], two[1][0]);
  EXPECT_EQ(one[1][1], two[1][1]);
}

// The act pair is a linear of each sequence's mean token row (mean_seqs): an empty sequence
// reads zeros, so its act is the bias.
TEST(Reference, MeanOfEachSequenceIsItsTokensAverageAndZerosWhenEmpty) {
  Graph g;
  g.name = "mean", g.vocab = 4, g.types = 1;
  g.weights = {{"tok", {4, 2}, shapes::DType::F32},
               {"wm", {1, 2}, shapes::DType::F32},
               {"wa", {2, 2}, shapes::DType::F32},
               {"ba", {2}, shapes::DType::F32}};
  g.nodes = {{OpKind::GatherRows, "rows", {"tok", "ids"}, {}},
             {OpKind::GatherMarkers, "mk", {"rows", "cu", "markers", "mcu"}, {}},
             {OpKind::Linear, "lg", {"mk", "wm", ""}, {}},
             {OpKind::Squeeze, "logits", {"lg"}, {}},
             {OpKind::MeanSeqs, "mean", {"rows", "cu"}, {}},
             {OpKind::Linear, "act", {"mean", "wa", "ba"}, {}}};
  g.setSeedOutputs("logits", "act");
  RefWeights w = {{"tok", {1, 10, 2, 20, 4, 40, 8, 80}}, {"wm", {1, 0}}, {"wa", {1, 0, 0, 1}}, {"ba", {0.5, -0.5}}};
  std::vector<uint32_t> ids = {0, 1, 2, 3}, cu = {0, 3, 3, 4}, markers = {}, mcu = {0, 0, 0, 0};
  std::vector<uint8_t> qtype = {0, 0, 0};
  RefOutputs out;
  ASSERT_FALSE(evaluateReference(g, w, {ids, cu, markers, mcu, qtype}, out));
  ASSERT_EQ((out[1].size() / 2), 3u);
  EXPECT_DOUBLE_EQ(out[1][2 * 0 + 0], (1 + 2 + 4) / 3.0 + 0.5);
  EXPECT_DOUBLE_EQ(out[1][2 * 0 + 1], (10 + 20 + 40) / 3.0 - 0.5);
  EXPECT_DOUBLE_EQ(out[1][2 * 1 + 0], 0.5);
  EXPECT_DOUBLE_EQ(out[1][2 * 1 + 1], -0.5);
  EXPECT_DOUBLE_EQ(out[1][2 * 2 + 0], 8.5);
}

}  // namespace
}  // namespace kime
