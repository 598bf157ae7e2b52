// The reference evaluator's two dense loops (linear, attention), vectorized across outputs.
//
// Each output is still summed in one fixed order, one product and one add per step (the loops are
// built with -ffp-contract=off, so no fused multiply-add): lanes only compute different outputs
// side by side, so the bits are the same at every vector width and on every CPU.
#ifndef KIME_REFERENCE_DENSEF64_H
#define KIME_REFERENCE_DENSEF64_H

#include <cstddef>

#include "HugePages.h"

namespace kime::ref {

// Outputs are computed kPanel at a time.
constexpr size_t kPanel = 16;

// A weight w[out][in] repacked for linearRows: panel p holds outputs [p*kPanel, (p+1)*kPanel)
// as in x kPanel (input-major), the last panel padded with zero rows.
struct PackedWeight {
  size_t in = 0, out = 0;
  Doubles panels;
};
PackedWeight packWeight(const double* w, size_t out, size_t in);
PackedWeight packWeight(const float* w, size_t out, size_t in);  // each element widened

// y[r][o] = bias[o] + sum over i ascending of x[r][i] * w[o][i], for rows [begin, end).
// `bias` may be null (the sum starts at 0). x rows are `w.in` apart, y rows `w.out` apart.
void linearRows(const double* x, const PackedWeight& w, const double* bias, double* y, size_t begin, size_t end);

// s[j] = sum over c ascending of q[c] * kT[c * stride + j], for j < n; `kT` is a head's keys
// transposed (hd x stride, stride >= n rounded up to 8, padded with anything finite).
void scoreRow(const double* q, const double* kT, size_t hd, size_t stride, size_t n, double* s);

// o[c] = sum over j ascending of p[j] * v[j * vStride + c], for c < hd.
void weightedSum(const double* p, size_t n, const double* v, size_t vStride, size_t hd, double* o);

}  // namespace kime::ref

#endif  // KIME_REFERENCE_DENSEF64_H
