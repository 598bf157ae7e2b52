// A reference session built on a checkpoint (weights that only linears read packed straight from
// it, with no f64 copy) computes the same bits as one built on every weight widened to f64.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "graph/ModelConfig.h"
#include "graph/RandomGraph.h"
#include "kime/tooling/BatchGen.h"
#include "reference/Reference.h"

namespace kime {
namespace {

using WeightValues = std::map<std::string, std::vector<float>>;

// `g`'s weights from `seed` (then `edit`ed), written as a safetensors file and opened again.
std::unique_ptr<Checkpoint> checkpointOf(const Graph& g, uint64_t seed,
                                         const std::function<void(WeightValues&)>& edit = {}) {
  WeightValues values = randomWeights(g, seed);
  if (edit) edit(values);
  std::vector<TensorData> tensors;
  for (const WeightDecl& w : g.weights) tensors.push_back({w.name, w.dtype, w.shape, values.at(w.name)});
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kime-refsession-" + std::to_string(getpid()) + "-" + std::to_string(seed) + ".st"))
                               .string();
  writeSafetensors(path, tensors, {});
  auto ck = Checkpoint::open(path);
  std::filesystem::remove(path);  // the mapping stays
  return ck;
}

// Every batch of two buckets, both ways, bit for bit; returns the batches compared.
int expectSameBits(const Graph& g, uint64_t seed) {
  auto ck = checkpointOf(g, seed);
  const RefWeights widened = loadRefWeights(g, *ck);
  RefSession all(g, widened), packed(g, *ck);
  int compared = 0;
  for (const Bucket& b : {Bucket{16, 3, 6}, Bucket{64, 8, 16}})
    for (const auto& nb : tooling::bucketBatches(b, size_t(g.vocab), size_t(g.types), learnedPositions(g), seed)) {
      SCOPED_TRACE(nb.name);
      RefOutputs want, got;
      auto errWant = all.evaluate(nb.batch.view(), want), errGot = packed.evaluate(nb.batch.view(), got);
      EXPECT_EQ(bool(errWant), bool(errGot));
      if (errWant || errGot) continue;
      EXPECT_EQ(got[0], want[0]);
      EXPECT_EQ(got[1], want[1]);
      ++compared;
    }
  return compared;
}

TEST(ReferenceSession, FromACheckpointGivesTheSameBitsOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (GraphFamily family : {GraphFamily::Any, GraphFamily::Encoder})
      EXPECT_GT(expectSameBits(randomGraph(seed, family, 64), seed), 0);
  }
}

// A table that a gather reads and a linear reads as its weight (tied embeddings) is widened, not
// only packed: the gather still reads it.
TEST(ReferenceSession, AWeightReadByALinearAndAnotherOpIsKept) {
  ModelConfig c;
  c.vocab = 11, c.types = 2, c.hidden = 8, c.layers = 1, c.heads = 2, c.kvHeads = 1, c.ffn = 12;
  c.act = "gelu", c.pos = "rope", c.norm = "rms", c.bias = false;
  Graph g = buildEncoderGraph(c, shapes::DType::F32, "tied");
  const Node* gather = nullptr;
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::GatherRows && !gather) gather = &n;
  ASSERT_NE(gather, nullptr);
  const std::string table = gather->operands[0], rows = gather->name;
  g.nodes.push_back({OpKind::Linear, "tied_head", {rows, table, ""}, {}});
  EXPECT_GT(expectSameBits(g, 3), 0);
}

// The logits and act pairs of every batch of a bucket, exact and with Arithmetic::int8.
struct Int8Outputs {
  std::vector<double> exact, int8;
};
Int8Outputs int8Outputs(const Graph& g, uint64_t seed, const std::function<void(WeightValues&)>& edit = {}) {
  auto ck = checkpointOf(g, seed, edit);
  RefSession exact(g, *ck), int8(g, *ck, Arithmetic::int8);
  Int8Outputs out;
  for (const auto& nb :
       tooling::bucketBatches(Bucket{64, 8, 16}, size_t(g.vocab), size_t(g.types), learnedPositions(g), seed)) {
    RefOutputs w, q;
    EXPECT_FALSE(exact.evaluate(nb.batch.view(), w));
    EXPECT_FALSE(int8.evaluate(nb.batch.view(), q));
    out.exact.insert(out.exact.end(), w[0].begin(), w[0].end());
    out.int8.insert(out.int8.end(), q[0].begin(), q[0].end());
    for (size_t i = 0; i < (w[1].size() / 2); ++i)
      for (size_t k = 0; k < 2; ++k) out.exact.push_back(w[1][2 * i + k]), out.int8.push_back(q[1][2 * i + k]);
  }
  return out;
}

Graph encoderOf(int64_t hidden, int64_t heads, int64_t ffn, const char* act) {
  ModelConfig c;
  c.vocab = 50, c.types = 2, c.hidden = hidden, c.layers = 2, c.heads = heads, c.kvHeads = heads, c.ffn = ffn;
  c.act = act, c.pos = "rope", c.norm = "rms", c.bias = false;
  return buildEncoderGraph(c, shapes::DType::F32, "int8");
}

// Arithmetic::int8 costs accuracy (it quantizes: outputs move) but keeps every output of any
// size on its sign and within a few percent of the largest. Models of whole panels (multiples of
// 16 outputs), the widths int8 takes.
TEST(ReferenceSession, Int8LinearsMoveTheOutputsALittle) {
  const Graph graphs[] = {encoderOf(32, 2, 64, "swiglu"), encoderOf(48, 3, 96, "gelu"), encoderOf(64, 4, 128, "swiglu"),
                          encoderOf(96, 6, 160, "gelu")};
  uint64_t seed = 0;
  for (const Graph& g : graphs) {
    SCOPED_TRACE("seed " + std::to_string(++seed));
    const Int8Outputs o = int8Outputs(g, seed);
    ASSERT_FALSE(o.exact.empty());
    double largest = 0, error = 0;
    for (size_t i = 0; i < o.exact.size(); ++i) {
      largest = std::max(largest, std::fabs(o.exact[i]));
      error = std::max(error, std::fabs(o.int8[i] - o.exact[i]));
    }
    EXPECT_GT(error, 1e-6 * largest);  // the linears were quantized
    EXPECT_LT(error, 0.05 * largest);  // by 8 bits, not by a wrong scale
    for (size_t i = 0; i < o.exact.size(); ++i)
      if (std::fabs(o.exact[i]) > 0.2 * largest) {
        EXPECT_EQ(std::signbit(o.int8[i]), std::signbit(o.exact[i])) << i;
      }
  }
}

// The weight gathered by the token ids (the token table).
std::string tokenTableOf(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::GatherRows && n.operands[1] == "ids") return n.operands[0];
  return "";
}

// A token table whose rows int8 holds exactly: q / 128 for whole q in [-127, 127], each row's
// largest |q| 127, so its scale is 1/128.
void int8ExactTokenTable(const Graph& g, WeightValues& values) {
  const std::string name = tokenTableOf(g);
  std::vector<float>& t = values.at(name);
  const auto decl =
      std::find_if(g.weights.begin(), g.weights.end(), [&](const WeightDecl& w) { return w.name == name; });
  const size_t width = size_t(decl->shape.back());
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = i % width == 0 ? 127.0f / 128 : std::nearbyint(std::clamp(t[i] * 127.0f, -127.0f, 127.0f)) / 128;
}

// Linears the compiler keeps in f32 (outputs not in whole panels of 16: here 24 and 40) are not
// quantized by the reference either: with a token table that int8 rows hold exactly, its outputs
// are the exact ones, bit for bit.
TEST(ReferenceSession, Int8LeavesLinearsOutsideWholePanelsExact) {
  const Graph g = encoderOf(24, 2, 40, "swiglu");
  const Int8Outputs o = int8Outputs(g, 5, [&](WeightValues& v) { int8ExactTokenTable(g, v); });
  ASSERT_FALSE(o.exact.empty());
  EXPECT_EQ(o.int8, o.exact);
}

// The token table is read back from int8 rows: outputs move a little where no linear is int8.
TEST(ReferenceSession, Int8ReadsTheTokenTableFromInt8Rows) {
  const Int8Outputs o = int8Outputs(encoderOf(24, 2, 40, "swiglu"), 5);
  ASSERT_FALSE(o.exact.empty());
  double largest = 0, error = 0;
  for (size_t i = 0; i < o.exact.size(); ++i) {
    largest = std::max(largest, std::fabs(o.exact[i]));
    error = std::max(error, std::fabs(o.int8[i] - o.exact[i]));
  }
  EXPECT_GT(error, 1e-7 * largest);
  EXPECT_LT(error, 0.05 * largest);
}

}  // namespace
}  // namespace kime
