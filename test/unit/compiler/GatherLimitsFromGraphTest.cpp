// Which gathers of a Graph a batch may index past their table: none in the encoder family
// (tables as wide as the vocabulary, the types, the learned positions); a token table smaller
// than the vocabulary; any table by markers; and a table computed from weights, by its rows.
#include <gtest/gtest.h>

#include "graph/ModelConfig.h"
#include "graph/RandomGraph.h"

namespace kime {
namespace {

ModelConfig config(const std::string& pos) {
  ModelConfig c;
  c.vocab = 16, c.types = 2, c.hidden = 8, c.layers = 1, c.heads = 2, c.kvHeads = 1, c.ffn = 12;
  c.pos = pos, c.maxPos = 64;
  return c;
}

TEST(GatherLimitsFromGraph, TheEncoderFamilyHasNone) {
  EXPECT_TRUE(gatherLimits(buildEncoderGraph(config("rope"), shapes::DType::F32, "g")).empty());
  EXPECT_TRUE(gatherLimits(buildEncoderGraph(config("learned"), shapes::DType::F32, "g")).empty());
}

TEST(GatherLimitsFromGraph, ATableShortOfItsIndexIsLimited) {
  Graph g = buildEncoderGraph(config("learned"), shapes::DType::F32, "g");
  g.weights[0].shape[0] = 10;  // embed.tok: 10 rows for a vocabulary of 16
  g.nodes.push_back({OpKind::GatherRows, "marker.pos", {"embed.pos", "markers"}, {}});
  std::vector<GatherLimit> limits = gatherLimits(g);
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].index, KIME_INPUT_IDS);
  EXPECT_EQ(limits[0].rows, 10u);
  EXPECT_EQ(limits[0].where, "node 0 (gather_rows \"embed.tok.rows\")");
  EXPECT_EQ(limits[0].table, "embed.tok");
  EXPECT_EQ(limits[1].index, KIME_INPUT_MARKERS);
  EXPECT_EQ(limits[1].rows, 64u);
}

TEST(GatherLimitsFromGraph, AComputedTableHasItsValuesRows) {
  Graph g = buildEncoderGraph(config("rope"), shapes::DType::F32, "g");
  g.nodes.push_back({OpKind::Gelu, "table", {"embed.tok"}, {}});
  g.nodes.push_back({OpKind::GatherRows, "by.markers", {"table", "markers"}, {}});
  std::vector<GatherLimit> limits = gatherLimits(g);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].rows, 16u);
  EXPECT_EQ(limits[0].table, "table");
}

}  // namespace
}  // namespace kime
