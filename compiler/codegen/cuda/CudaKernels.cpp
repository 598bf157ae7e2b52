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

// The columns of a tensor-core linear's warp tile, or 0 (no tensor cores, or not a linear that fits).
int64_t tensorCoreTile(const KernelSpec& s, Math math) {
  const LinearSpec* l = s.maybe<LinearSpec>();
  return math == Math::Tf32 && l ? tensorCoreWidth(s, *l) : 0;
}

Launch launchFor(const KernelSpec& s, const Bucket& b, Math math) {
  // Four warps a block; the kernels read the warp count from blockDim, so this is the one place
  // that decides it.
  constexpr int64_t warps = kWarps, threads = 32 * warps;
  auto blocksFor = [&](int64_t rows) { return std::max<int64_t>(1, (rows + warps - 1) / warps); };
  const int64_t T = rowBound(s, b.tokens, b.seqs, b.markers);  // the kernel's rows
  if (int64_t w = tensorCoreTile(s, math))                     // a warp per 16 x w tile
    return {std::max<int64_t>(1, (T + kTcRows * warps - 1) / (kTcRows * warps)), s.out / w, threads};
  const Launch blockPerRow{std::max<int64_t>(T, 1), 1, threads}, warpPerRow{blocksFor(T), 1, threads};
  return std::visit(
      Overloaded{[&](const EltwiseSpec&) {  // a thread per element
                   return Launch{std::max<int64_t>(1, (T * s.out + threads - 1) / threads), 1, threads};
                 },
                 [&](const LinearSpec&) { return warpPerRow; }, [&](const NormSpec&) { return warpPerRow; },
                 // a warp per (query, head)
                 [&](const AttentionSpec& a) { return Launch{blocksFor(T), a.heads, threads}; },
                 [&](const HeadSpec& h) {
                   return Launch{blocksFor(int64_t(h.rows == HeadRows::markers ? b.markers : b.seqs)), 1, threads};
                 },
                 // embed, select, gather, rope, pool: a block per row
                 [&](const auto&) { return blockPerRow; }},
      s.choices);
}

std::string kernelSource(const KernelSpec& s, const std::string& name, Math math) {
  if (int64_t w = tensorCoreTile(s, math)) return linearTensorCoresSource(s, s.as<LinearSpec>(), name, w);
  return std::visit(Overloaded{[&](const EmbedSpec& c) { return embedSource(s, c, name); },
                               [&](const NormSpec& c) { return normSource(s, c, name); },
                               [&](const LinearSpec& c) { return linearSource(s, c, name); },
                               [&](const AttentionSpec& c) { return attentionSource(s, c, name); },
                               [&](const HeadSpec& c) { return headSource(s, c, name); },
                               [&](const SelectSpec&) { return selectSource(s, name); },
                               [&](const GatherSpec& c) { return gatherSource(s, c, name); },
                               [&](const EltwiseSpec& c) { return eltwiseSource(s, c, name); },
                               [&](const RopeSpec& c) { return ropeSource(s, c, name); },
                               [&](const PoolSpec&) { return poolSource(s, name); }},
                    s.choices);
}

std::string moduleSource(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names, Math math) {
  std::string src = prelude();
  if (math == Math::Tf32) src += kTensorCores;
  auto hasProgram = [](const KernelSpec& s) {
    const LinearSpec* l = s.maybe<LinearSpec>();
    const EltwiseSpec* e = s.maybe<EltwiseSpec>();
    return (l && !l->program.empty()) || (e && !e->program.empty());
  };
  if (std::any_of(specs.begin(), specs.end(), hasProgram)) src += kActivations;
  for (size_t i = 0; i < specs.size(); ++i)
    src += "\n// " + specs[i].describe() + "\n" + kernelSource(specs[i], names[i], math);
  return src;
}

}  // namespace kime::cuda
