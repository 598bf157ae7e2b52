#include "quant/Int8.h"

#include <algorithm>
#include <cmath>

#include "kime/core/LinearArithmetic.h"

namespace kime::int8 {

namespace {

// round(v * inverse), ties to even, within [-kMax, kMax]; v * inverse is in that range up to
// rounding. A NaN (a non-finite weight or input) becomes 0, not an undefined conversion.
int8_t quantize(float v, float inverse) {
  const float r = std::nearbyint(v * inverse);
  if (std::isnan(r)) return 0;
  return int8_t(std::clamp(r, float(-kMax), float(kMax)));
}

float largestOf(const float* v, size_t n) {
  float largest = 0;
  for (size_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(v[i]));
  return largest;
}

}  // namespace

QuantizedWeight quantizeWeight(const float* w, size_t out, size_t in) {
  QuantizedWeight r;
  r.out = out, r.in = in;
  r.q.resize(out * in);
  r.scale.resize(out);
  r.rowSum.resize(out);
  for (size_t o = 0; o < out; ++o) {
    r.scale[o] = quantizeRow(w + o * in, in, r.q.data() + o * in);
    int32_t sum = 0;
    for (size_t i = 0; i < in; ++i) sum += r.q[o * in + i];
    r.rowSum[o] = sum;
  }
  return r;
}

float quantizeRow(const float* x, size_t n, int8_t* q) {
  const float largest = largestOf(x, n), scale = largest / float(kMax), inverse = float(kMax) / largest;
  for (size_t i = 0; i < n; ++i) q[i] = scale > 0 ? quantize(x[i], inverse) : int8_t(0);
  return scale;
}

bool takesInt8(size_t out, size_t in) { return ::kime::takesInt8(int64_t(out), int64_t(in)); }

}  // namespace kime::int8
