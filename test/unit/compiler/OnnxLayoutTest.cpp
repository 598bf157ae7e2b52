// The ONNX importer's layouts (where B, L and the features lie in a padded tensor) and row
// expressions (what an elementwise chain computes of a packed row).
#include <gtest/gtest.h>

#include <cmath>

#include "import/onnx/Layout.h"
#include "import/onnx/RowExpr.h"

namespace kime::onnx_import {
namespace {

Atom batch() { return {Atom::Kind::Batch, 1}; }
Atom len() { return {Atom::Kind::Len, 1}; }
Atom feat(int64_t n) { return {Atom::Kind::Feat, n}; }
Atom bcast(int64_t n) { return {Atom::Kind::Bcast, n}; }

TEST(OnnxLayout, ReshapeSplitsAndMergesFeaturesButNeverTheBatchOrLength) {
  const Layout tokens{{{batch()}, {len()}, {feat(32)}}};
  const auto heads = reshapeLayout(tokens, {SymInt::batch(), SymInt::len(), SymInt::of(4), SymInt::of(8)});
  ASSERT_TRUE(heads);
  EXPECT_EQ(describe(*heads), "[B, L, 4, 8]");
  EXPECT_EQ(heads->width(), 32);
  const auto merged = reshapeLayout(*heads, {SymInt::batch() * SymInt::len(), SymInt::of(32)});
  ASSERT_TRUE(merged);
  EXPECT_EQ(describe(*merged), "[B*L, 32]");
  EXPECT_FALSE(reshapeLayout(tokens, {SymInt::batch(), SymInt::of(2), SymInt::len(), SymInt::of(16)}));
  EXPECT_FALSE(reshapeLayout(tokens, {SymInt::batch(), SymInt::len(), SymInt::of(3), SymInt::of(11)}));
}

TEST(OnnxLayout, TransposeMovesTheBatchAndLengthButKeepsTheFeaturesInOrder) {
  const Layout heads{{{batch()}, {len()}, {feat(4)}, {feat(8)}}};
  const auto q = transposeLayout(heads, {0, 2, 1, 3});
  ASSERT_TRUE(q);
  EXPECT_EQ(describe(*q), "[B, 4, L, 8]");
  EXPECT_TRUE(transposeLayout(*q, {0, 1, 3, 2}));      // keys: [B, 4, 8, L]
  EXPECT_FALSE(transposeLayout(heads, {0, 1, 3, 2}));  // [B, L, 8, 4]: the row's order changes
}

TEST(OnnxLayout, BroadcastTakesEachDimFromTheOperandThatIsNotOne) {
  const Layout rows{{{batch()}, {len()}, {feat(4), feat(2)}}};
  const Layout seq{{{batch()}, {}, {feat(8)}}};
  const auto l = broadcastLayouts(rows, seq);
  ASSERT_TRUE(l);
  EXPECT_EQ(describe(*l), "[B, L, 8]");  // [4*2] and [8] are one dim of 8 features
  const Layout kv{{{batch()}, {feat(2), bcast(2)}, {len()}, {feat(8)}}};
  EXPECT_EQ(kv.width(), 16);  // a broadcast atom is no part of the row
  EXPECT_FALSE(broadcastLayouts(rows, Layout{{{feat(3)}}}));
}

TEST(OnnxLayout, FeatureCoordinatesWalkTheRowInOrder) {
  const Layout l{{{batch()}, {feat(2)}, {len()}, {feat(3)}}};
  const auto c = featureCoords(l);
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[4], (std::vector<int64_t>{0, 1, 0, 1}));  // feature 4: head 1, element 1
  EXPECT_TRUE(variesAlongFeaturesOnly(l, {1, 1, 3}));
  EXPECT_FALSE(variesAlongFeaturesOnly(l, {2, 1, 1, 1}));
}

TEST(OnnxRowExpr, EvaluatesNormsAndRotationsOfARow) {
  // (x - mean(x)) / sqrt(mean((x - mean)^2) + eps), per group of 4.
  const RowExprPtr x = rowSource(2, 4);
  const RowExprPtr centered = rowBinary("sub", x, rowReduce("mean", x));
  const RowExprPtr var = rowReduce("mean", rowBinary("pow", centered, rowScalar(2)));
  const RowExprPtr norm = rowBinary("div", centered, rowUnary("sqrt", rowBinary("add", var, rowScalar(1e-5))));
  const std::vector<double> row = {1, 2, 3, 4, 10, 10, 10, 14};
  const std::vector<double> got = evalRow(*norm, row, 0);
  EXPECT_NEAR(got[0], -1.5 / std::sqrt(1.25 + 1e-5), 1e-12);
  EXPECT_NEAR(got[7], 3 / std::sqrt(3 + 1e-5), 1e-12);
  const RowExprTraits t = traitsOf(*norm);
  EXPECT_TRUE(t.reduces);
  EXPECT_FALSE(t.slices || t.positional);
  // rotate-half: cat(-x[2:], x[:2]) within each group.
  const RowExprPtr rot = rowConcat({rowUnary("neg", rowSlice(x, 2, 2)), rowSlice(x, 0, 2)});
  EXPECT_EQ(evalRow(*rot, row, 0), (std::vector<double>{-3, -4, 1, 2, -10, -14, 10, 10}));
  // A table by position picks the token's row of it.
  const RowExprPtr pos = rowPosConst({1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}, 2, 2, 4);
  EXPECT_EQ(evalRow(*rowBinary("mul", x, pos), row, 1)[7], 28);
  EXPECT_FALSE(rowBinary("add", x, rowSource(1, 3)));  // groups that do not match
}

}  // namespace
}  // namespace kime::onnx_import
