// The arithmetic of int8 linears (--cpu-precision int8), written once for the weight packer, the
// kernels' generators and the reference that simulates them:
//  - weights symmetric per output channel: scale[o] = max_i |w[o][i]| / 127 (0 for a zero row),
//    q[o][i] = round(w[o][i] / scale[o]) in [-127, 127];
//  - activations symmetric per row, at run time: scale = max_i |x[i]| / 127 in f32, q[i] =
//    round(x[i] / scale) in [-127, 127] (f32 division, ties to even);
//  - y[o] = float(sum_i qx[i] * qw[o][i]) * (scale_x * scale[o]) + bias[o], the sum in int32
//    (exact: |sum| <= 127 * 127 * in, below 2^31 for in < 133,000).
// Both operands stay within [-127, 127] so that every ISA computes the same sum: AVX2's
// vpmaddubsw multiplies |x| (u8, <= 127) by w with x's sign, whose pair sums (<= 32,258) never
// saturate, and VNNI's vpdpbusd reads x + 128 as u8 and subtracts 128 * sum_i qw[o][i].
#ifndef KIME_QUANT_INT8_H
#define KIME_QUANT_INT8_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kime::int8 {

constexpr int kMax = 127;

// A linear's weight [out][in], quantized per output channel.
struct QuantizedWeight {
  size_t out = 0, in = 0;
  std::vector<int8_t> q;        // [out][in]
  std::vector<float> scale;     // [out]
  std::vector<int32_t> rowSum;  // [out]: sum_i q[o][i], for the u8 offset of vpdpbusd
};
QuantizedWeight quantizeWeight(const float* w, size_t out, size_t in);

// Quantizes one row of activations into q[0, n); returns its scale (0 for a zero row, whose q
// are all 0).
float quantizeRow(const float* x, size_t n, int8_t* q);

// Whether a linear of these widths gets int8: kime-fuse's rule (kime/Transforms/LinearArithmetic.h).
bool takesInt8(size_t out, size_t in);

}  // namespace kime::int8

#endif  // KIME_QUANT_INT8_H
