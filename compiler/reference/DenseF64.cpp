#include "DenseF64.h"

#include "DenseKernels.h"
#include "HugePages.h"

namespace kime::ref {
namespace {

const DenseKernels& kernels() {
#if defined(__x86_64__)
  static const DenseKernels& picked = __builtin_cpu_supports("avx512f") ? denseAvx512
                                      : __builtin_cpu_supports("avx2")  ? denseAvx2
                                                                        : denseGeneric;
  return picked;
#else
  return denseGeneric;
#endif
}

}  // namespace

namespace {

template <typename T>
PackedWeight packRows(const T* w, size_t out, size_t in) {
  const size_t panels = (out + kPanel - 1) / kPanel;
  PackedWeight p{in, out, zeros(panels * in * kPanel)};
  for (size_t o0 = 0; o0 < out; o0 += kPanel) {
    double* panel = p.panels.data() + o0 * in;
    for (size_t o = o0; o < out && o < o0 + kPanel; ++o)
      for (size_t i = 0; i < in; ++i) panel[i * kPanel + o - o0] = double(w[o * in + i]);
  }
  return p;
}

}  // namespace

PackedWeight packWeight(const double* w, size_t out, size_t in) { return packRows(w, out, in); }
PackedWeight packWeight(const float* w, size_t out, size_t in) { return packRows(w, out, in); }

void linearRows(const double* x, const PackedWeight& w, const double* bias, double* y, size_t begin, size_t end) {
  kernels().linearRows(x, w, bias, y, begin, end);
}

void scoreRow(const double* q, const double* kT, size_t hd, size_t stride, size_t n, double* s) {
  kernels().scoreRow(q, kT, hd, stride, n, s);
}

void weightedSum(const double* p, size_t n, const double* v, size_t vStride, size_t hd, double* o) {
  kernels().weightedSum(p, n, v, vStride, hd, o);
}

}  // namespace kime::ref
