// The arithmetic of int8 linears (--cpu-precision int8), written once for the weight packer, the
// kernels' generators and the reference that simulates them:
//  - every row symmetric: of a weight per output channel, of the activations per row at run time.
//    With m = max_i |x[i]| in f32, scale = m / 127 (0 for a zero row) and q[i] = round(x[i] *
//    (127 / m)) in [-127, 127] (f32, ties to even): one multiply an input in the kernels, the
//    reciprocal once a row;
//  - y[o] = float(sum_i qx[i] * qw[o][i]) * (scale_x * scale[o]) + bias[o], the sum in int32
//    (exact: |sum| <= 127 * 127 * in, below 2^31 for in < 133,000).
// Both operands stay within [-127, 127] so that every ISA computes the same sum exactly: VNNI's
// vpdpbusd reads x + 128 as u8 and subtracts 128 * sum_i qw[o][i]; AVX2's and AVX-512's vpmaddwd
// multiply both widened to i16; AArch64's sdot multiplies s8 by s8, and smull does into i16
// (|product| <= 16,129), whose pairs sadalp adds into i32.
// int8pairs (--cpu-precision int8pairs) also bounds each pair of a channel's weights:
// |qw[2p]| + |qw[2p + 1]| <= kPairMax (the channel's scale grows where its largest pair needs it),
// so that AVX2's vpmaddubsw, x + 128 (u8) by w (s8) with each pair's sum in i16, cannot saturate
// (255 x 128 = 32,640): 3 instructions a 32 products, not vpmaddwd's 4 and a widening. Exact
// without the bound would need |x| and w given x's sign (vpsignb, which Halide 14 does not emit;
// a blend of w and -w was slower than vpmaddwd). The bound costs weight precision (the scale of a
// Gaussian channel grows about 1.4x): bench/NOTES.md, "int8pairs".
#ifndef KIME_QUANT_INT8_H
#define KIME_QUANT_INT8_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kime::int8 {

constexpr int kMax = 127;
// The largest |w[2p]| + |w[2p + 1]| of a linear's quantized channel.
constexpr int kPairMax = 128;

// A linear's weight [out][in], quantized per output channel.
struct QuantizedWeight {
  size_t out = 0, in = 0;
  std::vector<int8_t> q;        // [out][in]
  std::vector<float> scale;     // [out]
  std::vector<int32_t> rowSum;  // [out]: sum_i q[o][i], for the u8 offset of vpdpbusd
};
// With `pairs` (--cpu-precision int8pairs), each pair of a channel's inputs (2p, 2p + 1) is
// bounded: |q[2p]| + |q[2p + 1]| <= kPairMax.
QuantizedWeight quantizeWeight(const float* w, size_t out, size_t in, bool pairs);
// An embedding table [rows][width], each row quantized like a row of activations (no pair bound).
QuantizedWeight quantizeTable(const float* w, size_t rows, size_t width);

// Quantizes one row of activations into q[0, n); returns its scale (0 for a zero row, whose q
// are all 0).
float quantizeRow(const float* x, size_t n, int8_t* q);

// Whether a linear of these widths gets int8: kime-fuse's rule (kime/core/LinearArithmetic.h).
bool takesInt8(size_t out, size_t in);

}  // namespace kime::int8

#endif  // KIME_QUANT_INT8_H
