// The weight packer's bf16 pairs: rounding to the nearest bf16 (ties to even), the layout the
// AVX512-BF16 linears read, and the bytes of the weights section; its int8 quads and scales.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "checkpoint/Safetensors.h"
#include "kernels/KernelSpec.h"
#include "pipeline/WeightPacker.h"
#include "quant/Int8.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(WeightPacker, RoundsToTheNearestBf16WithTiesToEven) {
  EXPECT_EQ(toBf16(1.0f), 0x3f80);
  EXPECT_EQ(toBf16(-2.0f), 0xc000);
  EXPECT_EQ(toBf16(fromBits(0x3f808000)), 0x3f80);  // a tie: down to the even one
  EXPECT_EQ(toBf16(fromBits(0x3f818000)), 0x3f82);  // a tie: up to the even one
  EXPECT_EQ(toBf16(fromBits(0x3f808001)), 0x3f81);  // past the tie
  EXPECT_EQ(toBf16(fromBits(0x3f807fff)), 0x3f80);
  EXPECT_EQ(toBf16(fromBits(0x7f7fffff)), 0x7f80);    // the largest float rounds to infinity
  const uint16_t nan = toBf16(fromBits(0x7f800001));  // a NaN whose payload is in the low bits
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x007f, 0);
}

// A checkpoint of one f32 tensor "w" of `rows` x `cols`, element (i, j) = i * cols + j.
std::unique_ptr<Checkpoint> matrix(int64_t rows, int64_t cols, std::vector<uint8_t>& bytes) {
  const int64_t n = rows * cols;
  std::string header = R"({"w":{"dtype":"F32","shape":[)" + std::to_string(rows) + "," + std::to_string(cols) +
                       R"(],"data_offsets":[0,)" + std::to_string(n * 4) + "]}}";
  bytes.assign(8, 0);
  for (int i = 0; i < 8; ++i) bytes[size_t(i)] = uint8_t(header.size() >> (8 * i));
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (int64_t v = 0; v < n; ++v) {
    float f = float(v);
    uint8_t b[4];
    std::memcpy(b, &f, 4);
    bytes.insert(bytes.end(), b, b + 4);
  }
  return Checkpoint::fromBytes(bytes.data(), bytes.size(), "w.safetensors");
}

TEST(WeightPacker, PairsTwoInputsOfAColumnWithinEachPanel) {
  std::vector<uint8_t> bytes;
  auto ck = matrix(32, 4, bytes);  // 32 outputs (two panels of 16), 4 inputs (two pairs)
  WeightPacker packer(*ck);
  const int64_t id = packer.use("w", WeightLayout::panels(true));
  const PackedWeight w = packer.weights()[size_t(id)];  // a copy: use() below may grow the list
  EXPECT_EQ(w.dtype, KIME_DTYPE_BF16);
  EXPECT_EQ(w.layout.name(), "pairs.bf16");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{4, 32}));  // [out / 16 * in / 2, 16 * 2]
  const std::string section = packer.sectionBytes();
  ASSERT_GE(section.size(), size_t(w.offset + 32 * 4 * 2));
  for (int64_t i = 0; i < 32; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      const int64_t at = (((i / 16) * 2 + j / 2) * 16 + i % 16) * 2 + j % 2;
      uint16_t got;
      std::memcpy(&got, section.data() + w.offset + at * 2, 2);
      EXPECT_EQ(got, toBf16(float(i * 4 + j))) << "output " << i << ", input " << j;
    }
  // The f32 panels of the same tensor are another entry, 4 bytes an element, after it.
  const PackedWeight& f = packer.weights()[size_t(packer.use("w", WeightLayout::panels(false)))];
  EXPECT_EQ(f.dtype, KIME_DTYPE_F32);
  EXPECT_GE(f.offset, w.offset + 32 * 4 * 2);
}

// int8 (quant/Int8.h): four inputs of a column side by side within each panel, one byte each,
// and beside them each column's scale and row sum as f32 ([2, out]).
TEST(WeightPacker, QuadsFourInputsOfAColumnWithinEachPanelWithItsScale) {
  std::vector<uint8_t> bytes;
  auto ck = matrix(32, 8, bytes);  // 32 outputs (two panels of 16), 8 inputs (two quads)
  std::vector<float> values(32 * 8);
  for (size_t v = 0; v < values.size(); ++v) values[v] = float(v);
  const int8::QuantizedWeight want = int8::quantizeWeight(values.data(), 32, 8, false);
  WeightPacker packer(*ck);
  const PackedWeight q = packer.weights()[size_t(packer.use("w", WeightLayout::int8Panels(false, 0)))];
  const PackedWeight sc = packer.weights()[size_t(packer.use("w", WeightLayout::int8Scales(false, 0)))];
  EXPECT_EQ(q.dtype, KIME_DTYPE_I8);
  EXPECT_EQ(q.layout.name(), "quads.i8");
  EXPECT_EQ(q.shape, (std::vector<int64_t>{4, 64}));  // [out / 16 * in / 4, 16 * 4]
  EXPECT_EQ(sc.dtype, KIME_DTYPE_F32);
  EXPECT_EQ(sc.layout.name(), "scales.i8");
  EXPECT_EQ(sc.shape, (std::vector<int64_t>{2, 32}));
  const std::string section = packer.sectionBytes();
  ASSERT_GE(section.size(), size_t(sc.offset + 2 * 32 * 4));
  for (int64_t i = 0; i < 32; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      const int64_t at = (((i / 16) * 2 + j / 4) * 16 + i % 16) * 4 + j % 4;
      EXPECT_EQ(int8_t(section[size_t(q.offset + at)]), want.q[size_t(i * 8 + j)]) << "output " << i << ", input " << j;
    }
    float scale, sum;
    std::memcpy(&scale, section.data() + sc.offset + i * 4, 4);
    std::memcpy(&sum, section.data() + sc.offset + (32 + i) * 4, 4);
    EXPECT_EQ(scale, want.scale[size_t(i)]);
    EXPECT_EQ(sum, float(want.rowSum[size_t(i)]));
  }
  // Output 0's largest input (input 7: quad 1, place 3) is the top of the int8 range.
  EXPECT_EQ(int8_t(section[size_t(q.offset + (1 * 16 + 0) * 4 + 3)]), 127);
  // int8pairs: the same weight quantized with its pairs bounded, packed apart from the other.
  const PackedWeight p = packer.weights()[size_t(packer.use("w", WeightLayout::int8Panels(true, 0)))];
  EXPECT_EQ(p.layout.name(), "quads.i8pairs");
  EXPECT_NE(p.offset, q.offset);
  const int8::QuantizedWeight paired = int8::quantizeWeight(values.data(), 32, 8, true);
  const std::string again = packer.sectionBytes();
  EXPECT_EQ(int8_t(again[size_t(p.offset + (1 * 16 + 0) * 4 + 3)]), paired.q[7]);
  EXPECT_LE(paired.q[6] + paired.q[7], int8::kPairMax);
}

// An int8 token table: its rows as stored, a byte an element, each row with its own scale
// ([rows] f32): any widths, no panels.
TEST(WeightPacker, Int8RowsKeepTheTableOrderWithAScaleARow) {
  std::vector<uint8_t> bytes;
  auto ck = matrix(5, 3, bytes);  // 5 rows (tokens) of 3
  std::vector<float> values(5 * 3);
  for (size_t v = 0; v < values.size(); ++v) values[v] = float(v);
  const int8::QuantizedWeight want = int8::quantizeTable(values.data(), 5, 3);
  WeightPacker packer(*ck);
  const PackedWeight q = packer.weights()[size_t(packer.use("w", WeightLayout::int8Rows()))];
  const PackedWeight sc = packer.weights()[size_t(packer.use("w", WeightLayout::int8RowScales()))];
  EXPECT_EQ(q.dtype, KIME_DTYPE_I8);
  EXPECT_EQ(q.layout.name(), "rows.i8");
  EXPECT_EQ(q.shape, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(sc.dtype, KIME_DTYPE_F32);
  EXPECT_EQ(sc.layout.name(), "rowscales.i8");
  EXPECT_EQ(sc.shape, (std::vector<int64_t>{5}));
  const std::string section = packer.sectionBytes();
  ASSERT_GE(section.size(), size_t(sc.offset + 5 * 4));
  for (size_t i = 0; i < 15; ++i) EXPECT_EQ(int8_t(section[size_t(q.offset) + i]), want.q[i]) << i;
  for (size_t r = 0; r < 5; ++r) {
    float scale;
    std::memcpy(&scale, section.data() + sc.offset + int64_t(r) * 4, 4);
    EXPECT_EQ(scale, want.scale[r]) << r;
    EXPECT_EQ(int8_t(section[size_t(q.offset) + r * 3 + 2]), 127) << r;  // each row's largest
  }
  EXPECT_NEAR(float(int8_t(section[size_t(q.offset) + 4])) * want.scale[1], 4.0f, 4.0f / 254);
}

TEST(WeightPacker, RefusesQuadsOfInputsNotInFours) {
  std::vector<uint8_t> bytes;
  auto ck = matrix(32, 6, bytes);
  WeightPacker packer(*ck);
  EXPECT_THROW(packer.use("w", WeightLayout::int8Panels(false, 0)), CompileError);
}

TEST(WeightPacker, RefusesPairsOfAnOddNumberOfInputs) {
  std::vector<uint8_t> bytes;
  auto ck = matrix(16, 3, bytes);
  WeightPacker packer(*ck);
  EXPECT_THROW(packer.use("w", WeightLayout::panels(true)), CompileError);
  EXPECT_THROW(packer.use("w", WeightLayout::table(4)), CompileError);  // tables are generated, not packed
}

// The manifest's spellings of the layouts (the runtime shows them; the artifact format keeps them).
TEST(WeightLayout, NamesAreTheManifestsSpellings) {
  EXPECT_EQ(WeightLayout::rows().name(), "rows");
  EXPECT_EQ(WeightLayout::rows(64).name(), "rows:rope64");
  EXPECT_EQ(WeightLayout::transposed().name(), "transposed");
  EXPECT_EQ(WeightLayout::panels(false).name(), "panels");
  EXPECT_EQ(WeightLayout::panels(true, 32).name(), "pairs.bf16:rope32");
  EXPECT_EQ(WeightLayout::table(128).name(), "table128");
  EXPECT_EQ(WeightLayout::panels(true).dtype(), KIME_DTYPE_BF16);
  EXPECT_EQ(WeightLayout::panels(false).dtype(), KIME_DTYPE_F32);
  EXPECT_EQ(WeightLayout::panels(false).panel, kWeightPanel);
  EXPECT_FALSE(WeightLayout::rows() == WeightLayout::rows(16));
  EXPECT_EQ(WeightLayout::int8Panels(false, 32).name(), "quads.i8:rope32");
  EXPECT_EQ(WeightLayout::int8Panels(true, 32).name(), "quads.i8pairs:rope32");
  EXPECT_EQ(WeightLayout::int8Scales(true, 0).name(), "scales.i8pairs");
  EXPECT_FALSE(WeightLayout::int8Panels(true, 0) == WeightLayout::int8Panels(false, 0));
  EXPECT_EQ(WeightLayout::int8Panels(false, 0).dtype(), KIME_DTYPE_I8);
  EXPECT_EQ(WeightLayout::int8Scales(false, 0).dtype(), KIME_DTYPE_F32);
  EXPECT_FALSE(WeightLayout::int8Panels(false, 0) == WeightLayout::panels(false));
}

TEST(WeightPacker, RopeColumnsAreInterleavedPairsWithinGroupsOf16) {
  // Heads of 32: packed column p of a head holds element ropeColumnSource(p, 32); every element
  // once, and in each group of 16, 8 of the first half with their partners (+16) 8 columns on.
  std::vector<int64_t> seen(64, 0);
  for (int64_t p = 0; p < 64; ++p) {
    const int64_t src = ropeColumnSource(p, 32), head = p / 32;
    EXPECT_EQ(src / 32, head) << p;
    ++seen[size_t(src)];
    if (p % 16 < 8) {
      EXPECT_EQ(ropeColumnSource(p + 8, 32), src + 16) << p;
    }
  }
  EXPECT_EQ(ropeColumnSource(8, 32), 16);
  EXPECT_EQ(ropeColumnSource(16, 32), 8);
  for (int64_t n : seen) EXPECT_EQ(n, 1);

  std::vector<uint8_t> bytes;
  auto ck = matrix(64, 2, bytes);  // 64 outputs (two heads of 32), 2 inputs
  WeightPacker packer(*ck);
  const PackedWeight& w = packer.weights()[size_t(packer.use("w", WeightLayout::panels(false, 32)))];
  EXPECT_EQ(w.shape, (std::vector<int64_t>{8, 16}));  // panels of the interleaved columns
  for (int64_t p = 0; p < 64; ++p)
    for (int64_t k = 0; k < 2; ++k)
      EXPECT_EQ(w.values[size_t(((p / 16) * 2 + k) * 16 + p % 16)], float(ropeColumnSource(p, 32) * 2 + k)) << p;
  // Heads whose width is no multiple of 16 cannot be interleaved.
  EXPECT_THROW(packer.use("w", WeightLayout::panels(false, 8)), CompileError);
}

}  // namespace
}  // namespace kime
