#include "CudaKernels.h"

#include <algorithm>

#include "CudaSource.h"
#include "support/Diagnostic.h"

namespace kime::cuda {

namespace {

// The activations of the eltwise kernels, in a module that has one.
const char* kActivations = R"(__device__ __forceinline__ float kime_silu(float v) { return v / (1.0f + expf(-v)); }
__device__ __forceinline__ float kime_gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float kime_gelu_tanh(float v) {
  return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
}
__device__ __forceinline__ float kime_relu(float v) { return fmaxf(v, 0.0f); }
__device__ __forceinline__ float kime_sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }
)";

// Tensor cores (sm_80 and later): a float rounded to TF32 (nearest, ties away from zero), and
// D += A * B for one warp, A 16x8 and B 8x8 in the PTX ISA's m16n8k8 .tf32 fragments.
const char* kTensorCores = R"(#ifndef KIME_CUDA_EMULATION
__device__ __forceinline__ unsigned kime_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void kime_mma_tf32(float* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif
)";

}  // namespace

const char* mathName(Math m) { return kime_cuda_math_names[int(m)]; }

Math parseMath(const std::string& name) {
  const int m = kime_name_index(kime_cuda_math_names, KIME_CUDA_MATH_COUNT, name.c_str());
  if (m >= 0) return Math(m);
  throw CompileError("--cuda-math must be tf32 or f32, not \"" + name + "\"");
}

void checkArch(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5)
    throw CompileError("CUDA arch \"" + arch + "\" is not of the form sm_NN (e.g. sm_90)");
  if (!canMakePtx())
    throw CompileError(
        "this build of kime has no NVRTC (it was configured without a CUDA Toolkit), so it makes no PTX for " + arch +
        ": compile for CPU targets only (--cuda-arch none), or rebuild kime with the toolkit");
}

Launch launchFor(const KernelSpec& s, const Bucket& b, Math math) {
  // Four warps a block; the kernels read the warp count from blockDim, so this is the one place
  // that decides it.
  constexpr int64_t warps = kWarps;
  auto blocksFor = [&](int64_t rows) { return std::max<int64_t>(1, (rows + warps - 1) / warps); };
  const int64_t T = rowBound(s, b.tokens, b.seqs, b.markers);  // the kernel's rows
  if (s.kind == KIME_CLASS_EMBED || s.kind == KIME_CLASS_SELECT || s.kind == KIME_CLASS_GATHER ||
      s.kind == KIME_CLASS_ROPE || s.kind == KIME_CLASS_POOL)
    return {std::max<int64_t>(T, 1), 1, 32 * warps};  // a block per row
  if (s.kind == KIME_CLASS_ELTWISE)                   // a thread per element
    return {std::max<int64_t>(1, (T * s.out + 32 * warps - 1) / (32 * warps)), 1, 32 * warps};
  if (int64_t w = math == Math::Tf32 ? tensorCoreWidth(s) : 0)  // a warp per 16 x w tile
    return {std::max<int64_t>(1, (T + kTcRows * warps - 1) / (kTcRows * warps)), s.out / w, 32 * warps};
  if (s.kind == KIME_CLASS_LINEAR || s.kind == KIME_CLASS_NORM) return {blocksFor(T), 1, 32 * warps};  // a warp per row
  if (s.kind == KIME_CLASS_ATTENTION) return {blocksFor(T), s.heads, 32 * warps};  // a warp per (query, head)
  if (s.kind == KIME_CLASS_HEAD)
    return {blocksFor(int64_t(s.rows == HeadRows::markers ? b.markers : b.seqs)), 1, 32 * warps};
  throw CompileError(std::string("internal: no CUDA launch for class \"") + className(s.kind) + "\"");
}

std::string kernelSource(const KernelSpec& s, const std::string& name, Math math) {
  if (int64_t w = math == Math::Tf32 ? tensorCoreWidth(s) : 0) return linearTensorCoresSource(s, name, w);
  if (s.kind == KIME_CLASS_EMBED) return embedSource(s, name);
  if (s.kind == KIME_CLASS_LINEAR) return linearSource(s, name);
  if (s.kind == KIME_CLASS_ATTENTION) return attentionSource(s, name);
  if (s.kind == KIME_CLASS_HEAD) return headSource(s, name);
  if (s.kind == KIME_CLASS_SELECT) return selectSource(s, name);
  if (s.kind == KIME_CLASS_NORM) return normSource(s, name);
  if (s.kind == KIME_CLASS_GATHER) return gatherSource(s, name);
  if (s.kind == KIME_CLASS_ELTWISE) return eltwiseSource(s, name);
  if (s.kind == KIME_CLASS_ROPE) return ropeSource(s, name);
  if (s.kind == KIME_CLASS_POOL) return poolSource(s, name);
  throw CompileError(std::string("internal: no CUDA kernel for class \"") + className(s.kind) + "\"");
}

std::string moduleSource(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names, Math math) {
  std::string src = prelude();
  if (math == Math::Tf32) src += kTensorCores;
  if (std::any_of(specs.begin(), specs.end(), [](const KernelSpec& s) { return !s.program.empty(); }))
    src += kActivations;
  for (size_t i = 0; i < specs.size(); ++i)
    src += "\n// " + specs[i].describe() + "\n" + kernelSource(specs[i], names[i], math);
  return src;
}

}  // namespace kime::cuda
