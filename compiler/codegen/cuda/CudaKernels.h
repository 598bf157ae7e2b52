// CUDA C++ for each kernel class, specialized with the kernel's constants, and its compilation
// by NVRTC to PTX, checked by ptxas.
//
// A kernel takes `counts` (device int[3]: the batch's T, S, M) and then one pointer per plan
// argument, in the plan's order (the same order as the CPU kernels'). Grids are sized for the
// bucket's bounds; threads past the actual counts return at once, so a plan can be captured
// once as a graph and replayed for any batch the bucket holds.
#ifndef KIME_CODEGEN_CUDA_CUDAKERNELS_H
#define KIME_CODEGEN_CUDA_CUDAKERNELS_H

#include <string>
#include <vector>

#include "cache/KernelCache.h"
#include "kernels/KernelSpec.h"
#include "kime/batch.h"

namespace kime::cuda {

// The arithmetic of the linear layers: tensor cores (mma.sync, TF32 inputs, f32 accumulation),
// or f32 FMA, exact to the reference's 1e-4. An artifact may carry PTX for both.
// plan.h's kime_cuda_math, named as there ("tf32", "f32").
enum class Math { Tf32 = KIME_CUDA_TF32, F32 = KIME_CUDA_F32 };
const char* mathName(Math m);
Math parseMath(const std::string& name);  // throws CompileError for another name

// How a kernel is launched for a bucket: a grid sized for the bucket's bounds, `block` threads.
struct Launch {
  int64_t gridX = 1, gridY = 1, block = 128;
};
Launch launchFor(const KernelSpec& spec, const Bucket& bucket, Math math);

// The source of one kernel named `name`.
std::string kernelSource(const KernelSpec& spec, const std::string& name, Math math);

// All kernels of an artifact as one translation unit.
std::string moduleSource(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names, Math math);

// Whether this build makes PTX: it was configured with a CUDA Toolkit (NVRTC, ptxas). Without
// one the CUDA C++ is still written (--emit=cuda), but no PTX.
bool canMakePtx();

// Refuses an arch not of the form sm_NN, and any arch in a build that cannot make PTX (saying
// so plainly), with a CompileError.
void checkArch(const std::string& arch);

// NVRTC: the PTX of `source` for `arch` (e.g. "sm_90"), then assembled by ptxas for that arch
// to prove it is valid. Throws CompileError with NVRTC's or ptxas's log.
std::string compileToPtx(const std::string& source, const std::string& arch);

// What besides the compiler itself decides the PTX and its check: NVRTC's version, and ptxas
// (its path, size and time). Part of the kernel cache's key for PTX; empty without NVRTC.
std::string ptxToolchain();

// The PTX module of one CUDA math and arch, made a kernel at a time: each kernel compiled alone
// (a module of one entry named kernelSymbol, checked by ptxas, kept in `cache` where given), in
// child processes `jobs` at once, then the entries joined under one header and given their names
// in the artifact. A kernel added to a model compiles only itself.
struct PtxJob {
  std::string arch, math;
  std::string ptx;  // the result
};
struct PtxCounts {
  size_t compiled = 0, cached = 0;  // kernels' PTX made now, found in the cache (all modules)
};
PtxCounts compilePtx(std::vector<PtxJob>& modules, const std::vector<KernelSpec>& specs,
                     const std::vector<std::string>& names, int jobs, KernelCache* cache);

}  // namespace kime::cuda

#endif  // KIME_CODEGEN_CUDA_CUDAKERNELS_H
