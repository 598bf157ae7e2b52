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

// The largest |v[2p]| + |v[2p + 1]|.
float largestPairOf(const float* v, size_t n) {
  float largest = 0;
  for (size_t i = 0; i < n; i += 2)
    largest = std::max(largest, std::fabs(v[i]) + (i + 1 < n ? std::fabs(v[i + 1]) : 0));
  return largest;
}

// A channel of a linear's weight with its pairs bounded (int8pairs): where the largest pair is
// within 128 steps of the full rule's scale, the full rule's values; else the largest pair's over
// 128 steps. Then a pair that rounded to 129 gives up 1 where it rounded up the most.
float quantizePairedChannel(const float* w, size_t n, int8_t* q) {
  const float largest = largestOf(w, n), largestPair = largestPairOf(w, n);
  if (largestPair / float(kPairMax) <= largest / float(kMax)) {
    quantizeRow(w, n, q);
  } else {
    const float inverse = float(kPairMax) / largestPair;
    for (size_t i = 0; i < n; ++i) q[i] = quantize(w[i], inverse);
  }
  const float scale = std::max(largest / float(kMax), largestPair / float(kPairMax));
  for (size_t i = 0; i + 1 < n; i += 2) {
    if (std::abs(q[i]) + std::abs(q[i + 1]) <= kPairMax) continue;
    const float upA = std::fabs(float(q[i])) - std::fabs(w[i] / scale);
    const float upB = std::fabs(float(q[i + 1])) - std::fabs(w[i + 1] / scale);
    int8_t& give = upA >= upB ? q[i] : q[i + 1];
    give = int8_t(give > 0 ? give - 1 : give + 1);
  }
  return scale;
}

}  // namespace

QuantizedWeight quantizeWeight(const float* w, size_t out, size_t in, bool pairs) {
  QuantizedWeight r;
  r.out = out, r.in = in;
  r.q.resize(out * in);
  r.scale.resize(out);
  r.rowSum.resize(out);
  for (size_t o = 0; o < out; ++o) {
    r.scale[o] = pairs ? quantizePairedChannel(w + o * in, in, r.q.data() + o * in)
                       : quantizeRow(w + o * in, in, r.q.data() + o * in);
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

QuantizedWeight quantizeTable(const float* w, size_t rows, size_t width) {
  return quantizeWeight(w, rows, width, false);
}

bool takesInt8(size_t out, size_t in) { return ::kime::takesInt8(int64_t(out), int64_t(in)); }

}  // namespace kime::int8
