// int8's arithmetic (quant/Int8.h): weights per output channel, rows at run time, which linears.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "quant/Int8.h"

namespace kime::int8 {
namespace {

TEST(Int8, WeightsAreQuantizedPerOutputChannel) {
  // Rows of different sizes and signs, and a zero row.
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 0.1f,  // largest 1.0
                                30.f, 10.f,  -7.f,  2.f,   // largest 30
                                0.f,  0.f,   0.f,   0.f};
  const QuantizedWeight q = quantizeWeight(w.data(), 3, 4, false);
  ASSERT_EQ(q.q.size(), 12u);
  EXPECT_FLOAT_EQ(q.scale[0], 1.0f / 127);
  EXPECT_FLOAT_EQ(q.scale[1], 30.0f / 127);
  EXPECT_EQ(q.scale[2], 0.0f);
  EXPECT_EQ(q.q[1], -127);  // each row's largest maps to +-127
  EXPECT_EQ(q.q[4], 127);
  for (size_t o = 0; o < 3; ++o) {
    int32_t sum = 0;
    for (size_t i = 0; i < 4; ++i) {
      const float back = float(q.q[o * 4 + i]) * q.scale[o];
      EXPECT_LE(std::fabs(back - w[o * 4 + i]), q.scale[o] / 2 * 1.0001f) << o << "," << i;
      if (w[o * 4 + i] != 0) {
        EXPECT_EQ(std::signbit(back), std::signbit(w[o * 4 + i]));
      }
      sum += q.q[o * 4 + i];
    }
    EXPECT_EQ(q.rowSum[o], sum);
  }
  for (size_t i = 8; i < 12; ++i) EXPECT_EQ(q.q[i], 0);
}

// int8pairs: a channel's scale also makes room for its largest pair (|w[2p]| + |w[2p + 1]| within
// 128 after rounding, so that 255 x a pair fits i16); a channel whose pairs are small keeps 127.
TEST(Int8, PairedWeightsKeepEachPairWithinTheBound) {
  const std::vector<float> w = {1.0f, 0.9f, -0.2f, 0.1f,    // largest pair 1.9: scale 1.9 / 128
                                1.0f, 0.0f, 0.01f, -0.2f,   // pairs within 1.0 + 0.0: 1.0 / 127
                                0.5f, 0.5f, -0.5f, -0.5f};  // pairs at the bound: 64 + 64
  const QuantizedWeight full = quantizeWeight(w.data(), 3, 4, false), q = quantizeWeight(w.data(), 3, 4, true);
  EXPECT_FLOAT_EQ(q.scale[0], 1.9f / 128);
  EXPECT_FLOAT_EQ(q.scale[1], full.scale[1]);
  EXPECT_EQ(std::vector<int8_t>(q.q.begin() + 4, q.q.begin() + 8),
            std::vector<int8_t>(full.q.begin() + 4, full.q.begin() + 8));
  EXPECT_GT(q.scale[0], full.scale[0]);  // the bound costs channel 0 precision
  EXPECT_EQ(std::vector<int8_t>(q.q.begin() + 8, q.q.end()), (std::vector<int8_t>{64, 64, -64, -64}));
  for (size_t o = 0; o < 3; ++o) {
    int32_t sum = 0;
    for (size_t i = 0; i < 4; i += 2) {
      EXPECT_LE(std::abs(q.q[o * 4 + i]) + std::abs(q.q[o * 4 + i + 1]), kPairMax) << o << "," << i;
      for (size_t j = i; j < i + 2; ++j) {  // within one step of the value (a pair's trim: a whole step)
        EXPECT_LE(std::fabs(float(q.q[o * 4 + j]) * q.scale[o] - w[o * 4 + j]), q.scale[o] * 1.0001f) << o << "," << j;
        sum += q.q[o * 4 + j];
      }
    }
    EXPECT_EQ(q.rowSum[o], sum);
  }
}

TEST(Int8, RowsRoundHalfToEvenAndANaNBecomesZero) {
  const std::vector<float> x = {127.f, 0.5f, 1.5f, -2.5f, -127.f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<int8_t> q(x.size());
  EXPECT_EQ(quantizeRow(x.data(), x.size(), q.data()), 1.0f);
  EXPECT_EQ(q, (std::vector<int8_t>{127, 0, 2, -2, -127, 0}));

  const std::vector<float> zero(5, 0.f);
  EXPECT_EQ(quantizeRow(zero.data(), zero.size(), q.data()), 0.0f);
  for (size_t i = 0; i < zero.size(); ++i) EXPECT_EQ(q[i], 0);
}

TEST(Int8, HeadsPartPanelsAndInputsOutsideGroupsOfFourStayF32) {
  EXPECT_FALSE(takesInt8(16, 64));  // a head: at most 16 outputs
  EXPECT_FALSE(takesInt8(1, 64));
  EXPECT_FALSE(takesInt8(24, 64));  // not whole panels of 16 outputs
  EXPECT_FALSE(takesInt8(40, 64));
  EXPECT_TRUE(takesInt8(32, 64));
  EXPECT_TRUE(takesInt8(256, 1024));
  EXPECT_FALSE(takesInt8(256, 30));  // not whole groups of 4
  EXPECT_TRUE(takesInt8(256, 8192));
  EXPECT_FALSE(takesInt8(256, 8196));  // a quantized row past the kernels' stack buffer
}

}  // namespace
}  // namespace kime::int8
