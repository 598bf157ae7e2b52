// The dense loops, built once per instruction set (CMake names the table: KIME_DENSE_TABLE) and
// picked at run time by DenseF64.cpp. The vectors are GCC/Clang vector types as wide as the ISA's
// registers; lanes are outputs side by side, never parts of one sum. Everything here but the table has
// internal linkage and no header template is used: a weak symbol built with -mavx512f could be
// the one the linker keeps for every other file, on CPUs without it.
#include <cstring>

#include "DenseKernels.h"

// The ISA's own vector width (a wider generic vector would be split and spilled), and rows per
// register tile: as many rows of kPanel / kLanes accumulators as the registers hold beside the
// weights' vectors (32 zmm, 16 ymm, 16 xmm).
#if defined(__AVX512F__)
#define KIME_DENSE_LANES 8
#define KIME_DENSE_TILE_ROWS 8
#elif defined(__AVX__)
#define KIME_DENSE_LANES 4
#define KIME_DENSE_TILE_ROWS 3
#define KIME_DENSE_LOAD_BY_CAST 1
#else
#define KIME_DENSE_LANES 2
#define KIME_DENSE_TILE_ROWS 1
#endif
#define KIME_INLINE inline __attribute__((always_inline))
#define KIME_UNROLL _Pragma("GCC unroll 16")

namespace kime::ref {
namespace {

constexpr size_t kLanes = KIME_DENSE_LANES;
typedef double Vec __attribute__((vector_size(kLanes * sizeof(double))));
typedef double UnalignedVec __attribute__((vector_size(kLanes * sizeof(double)), aligned(alignof(double))));

KIME_INLINE size_t smaller(size_t a, size_t b) { return a < b ? a : b; }
// Loads and stores as GCC keeps each ISA's accumulators in registers (bench/NOTES.md): through an
// unaligned vector type for AVX2 (with memcpy its ymm accumulators lived on the stack), memcpy
// elsewhere.
#if defined(KIME_DENSE_LOAD_BY_CAST)
KIME_INLINE void load(Vec& v, const double* p) { v = *reinterpret_cast<const UnalignedVec*>(p); }
KIME_INLINE void store(double* p, const Vec& v) { *reinterpret_cast<UnalignedVec*>(p) = v; }
#else
KIME_INLINE void load(Vec& v, const double* p) { std::memcpy(&v, p, sizeof v); }
KIME_INLINE void store(double* p, const Vec& v) { std::memcpy(p, &v, sizeof v); }
#endif
// Written out lane by lane: the form GCC turns into one broadcast (a loop becomes lane inserts).
KIME_INLINE void broadcast(Vec& v, double x) {
#if KIME_DENSE_LANES == 8
  v = Vec{x, x, x, x, x, x, x, x};
#elif KIME_DENSE_LANES == 4
  v = Vec{x, x, x, x};
#else
  v = Vec{x, x};
#endif
}

// R rows of y by one panel of kPanel outputs, all accumulators in registers.
template <size_t R>
KIME_INLINE void linearTile(const double* x, size_t in, const double* panel, const double* bias, size_t outs, double* y,
                            size_t yStride) {
  constexpr size_t kVecs = kPanel / kLanes;
  Vec acc[R][kVecs];
  for (size_t v = 0; v < kVecs; ++v) {
    Vec b{};
    if (bias)
      for (size_t l = 0; l < kLanes && v * kLanes + l < outs; ++l) b[l] = bias[v * kLanes + l];
    for (size_t r = 0; r < R; ++r) acc[r][v] = b;
  }
  for (size_t i = 0; i < in; ++i) {
    Vec w[kVecs];
    for (size_t v = 0; v < kVecs; ++v) load(w[v], panel + i * kPanel + v * kLanes);
    KIME_UNROLL for (size_t r = 0; r < R; ++r) {
      Vec xr;
      broadcast(xr, x[r * in + i]);
      KIME_UNROLL for (size_t v = 0; v < kVecs; ++v) acc[r][v] += xr * w[v];
    }
  }
  for (size_t r = 0; r < R; ++r) {
    double row[kPanel];
    for (size_t v = 0; v < kVecs; ++v) store(row + v * kLanes, acc[r][v]);
    std::memcpy(y + r * yStride, row, outs * sizeof(double));
  }
}

// N x kLanes columns of a weighted sum of rows, out[c] = sum over i ascending of
// weight[i] * rows[i * stride + c]; the first `keep` columns are stored. Both attention loops are
// one: scores (the query weighs the transposed keys) and the output (probabilities weigh values).
template <size_t N>
KIME_INLINE void weightedRowsTile(const double* weight, size_t n, const double* rows, size_t stride, double* out,
                                  size_t keep) {
  Vec acc[N] = {};
  for (size_t i = 0; i < n; ++i) {
    Vec wi;
    broadcast(wi, weight[i]);
    KIME_UNROLL for (size_t t = 0; t < N; ++t) {
      Vec ri;
      load(ri, rows + i * stride + t * kLanes);
      acc[t] += wi * ri;
    }
  }
  double lanes[N * kLanes];
  for (size_t t = 0; t < N; ++t) store(lanes + t * kLanes, acc[t]);
  std::memcpy(out, lanes, keep * sizeof(double));
}

// Rows go in blocks that stay in cache while every panel passes over them.
void linear(const double* x, const PackedWeight& w, const double* bias, double* y, size_t begin, size_t end) {
  constexpr size_t kRowBlock = 64, kTile = KIME_DENSE_TILE_ROWS;
  for (size_t rb = begin; rb < end; rb += kRowBlock) {
    const size_t re = smaller(end, rb + kRowBlock);
    for (size_t o = 0; o < w.out; o += kPanel) {
      const double* panel = w.panels.data() + o * w.in;
      const double* b = bias ? bias + o : nullptr;
      const size_t outs = smaller(kPanel, w.out - o);
      size_t r = rb;
      for (; r + kTile <= re; r += kTile)
        linearTile<kTile>(x + r * w.in, w.in, panel, b, outs, y + r * w.out + o, w.out);
      for (; r < re; ++r) linearTile<1>(x + r * w.in, w.in, panel, b, outs, y + r * w.out + o, w.out);
    }
  }
}

void scores(const double* q, const double* kT, size_t hd, size_t stride, size_t n, double* s) {
  constexpr size_t kWide = 4 * kLanes;
  size_t j = 0;
  for (; j + kWide <= n; j += kWide) weightedRowsTile<4>(q, hd, kT + j, stride, s + j, kWide);
  for (; j < n; j += kLanes) weightedRowsTile<1>(q, hd, kT + j, stride, s + j, smaller(kLanes, n - j));
}

void weighted(const double* p, size_t n, const double* v, size_t vStride, size_t hd, double* o) {
  constexpr size_t kWide = 8 * kLanes;
  size_t c = 0;
  for (; c + kWide <= hd; c += kWide) weightedRowsTile<8>(p, n, v + c, vStride, o + c, kWide);
  for (; c + kLanes <= hd; c += kLanes) weightedRowsTile<1>(p, n, v + c, vStride, o + c, kLanes);
  for (; c < hd; ++c) {
    double acc = 0;
    for (size_t j = 0; j < n; ++j) acc += p[j] * v[j * vStride + c];
    o[c] = acc;
  }
}

}  // namespace

extern const DenseKernels KIME_DENSE_TABLE = {linear, scores, weighted};

}  // namespace kime::ref
