// Included ahead of the CUDA C++ that kime-compile generates (--emit=cuda), so that the same
// source builds as host C++: the kernels then run on the CPU under the emulator (emulator.cpp),
// one warp at a time, its 32 lanes as fibers that meet at every warp shuffle.
//
// Only what kime's kernels use is here: the thread/block indices, blockDim, __shfl_xor_sync on
// floats, and a few math functions.
#ifndef KIME_CUDA_EMULATION_H
#define KIME_CUDA_EMULATION_H

#include <cmath>
#include <cstring>

#define KIME_CUDA_EMULATION 1  // the generated source leaves its inline PTX out
#define __global__
#define __device__
#define __forceinline__ inline

namespace kime_emu {
struct Index {
  unsigned x, y, z;
};
const Index& threadIndex();
const Index& blockIndex();
const Index& blockDimensions();
float shuffleXor(float v, int laneMask);
// D += A * B of mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32, for the whole warp.
void mmaTf32(float* d, const unsigned* a, const unsigned* b);
}  // namespace kime_emu

#define threadIdx (::kime_emu::threadIndex())
#define blockIdx (::kime_emu::blockIndex())
#define blockDim (::kime_emu::blockDimensions())

inline float __shfl_xor_sync(unsigned, float v, int laneMask) { return kime_emu::shuffleXor(v, laneMask); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline int min(int a, int b) { return a < b ? a : b; }

// cvt.rna.tf32.f32: to the nearest TF32 (10-bit mantissa), ties away from zero, as f32 bits.
inline unsigned kime_tf32(float x) {
  unsigned u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u) u += 0x1000u;  // finite: round the magnitude
  return u & 0xffffe000u;
}
inline void kime_mma_tf32(float* d, const unsigned* a, const unsigned* b) { kime_emu::mmaTf32(d, a, b); }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

#endif  // KIME_CUDA_EMULATION_H
