// The dense loops of DenseF64.h as one table per instruction set (DenseF64Kernels.cpp, built once
// per ISA); DenseF64.cpp picks the widest the CPU has.
#ifndef KIME_REFERENCE_DENSEKERNELS_H
#define KIME_REFERENCE_DENSEKERNELS_H

#include "DenseF64.h"

namespace kime::ref {

struct DenseKernels {
  void (*linearRows)(const double* x, const PackedWeight& w, const double* bias, double* y, size_t begin, size_t end);
  void (*scoreRow)(const double* q, const double* kT, size_t hd, size_t stride, size_t n, double* s);
  void (*weightedSum)(const double* p, size_t n, const double* v, size_t vStride, size_t hd, double* o);
};

extern const DenseKernels denseGeneric;
#if defined(__x86_64__)
extern const DenseKernels denseAvx2, denseAvx512;
#endif

}  // namespace kime::ref

#endif  // KIME_REFERENCE_DENSEKERNELS_H
