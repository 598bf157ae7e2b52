// kime-compile's work: Graph + checkpoint + buckets -> one artifact.
#ifndef KIME_PIPELINE_COMPILE_H
#define KIME_PIPELINE_COMPILE_H

#include <ostream>
#include <string>
#include <vector>

#include "kime/core/KernelChoices.h"
#include "kime/plan.h"

namespace kime {

// The CPU targets of a plain compile: x86-64-avx2 and x86-64-avx512.
inline std::vector<std::string> defaultCpuTargets() {
  return {kime_cpu_target_names[KIME_CPU_X86_64_AVX2], kime_cpu_target_names[KIME_CPU_X86_64_AVX512]};
}

// What --emit prints instead of an artifact: nothing (an artifact), the planned IR per bucket,
// the plans, the manifest (as JSON), each kernel's CPU schedule per target, Halide's lowered
// kernels, their assembly, or the generated CUDA C++.
enum class Emit { None, Mlir, Plan, Manifest, Schedule, Halide, Asm, Cuda };
// --emit's spelling ("" for None); throws CompileError naming the choices for another one.
Emit parseEmit(const std::string& name);

struct CompileOptions {
  std::string graph, weights, buckets, output;
  std::vector<std::string> targets;    // CPU targets, e.g. x86-64-avx2
  std::vector<std::string> cudaArchs;  // PTX for these, e.g. sm_90; none: no CUDA code
  // PTX for each CUDA math: tensor cores, exact f32
  std::vector<std::string> cudaMath = {kime_cuda_math_names[KIME_CUDA_TF32], kime_cuda_math_names[KIME_CUDA_F32]};
  Emit emit = Emit::None;
  bool verify = false;
  bool pruneRows = true;  // kime-prune-rows: the last layer only for the heads' rows
  bool fusion = true;     // kime-fuse's fused patterns (off: to measure what they save)
  // The CPU linears' arithmetic (--cpu-precision): f32, or the opt-ins bf16 (weights in bf16,
  // inputs rounded to bf16 for AVX512-BF16 dot products; the target x86-64-avx512bf16 alone) and
  // int8 (compiler/quant/Int8.h; its own targets); neither with CUDA code (Precision.h).
  Arithmetic cpuPrecision = Arithmetic::f32;
  int jobs = 1;
  size_t selftest = 0;  // batches in the self-test section (0: no section)
  // Or a framework's outputs (ExpectedOutputs.h) as the self-test: checked against the reference,
  // each case in the first bucket of every stage that holds it.
  std::string selftestFrom;
  // --refit OLD.kime: the Graph, buckets and options come from OLD's source section, its code
  // sections are kept byte for byte, and only the weights (and the self-test) are new.
  std::string refit;
  bool dropSelftest = false;
  // --update: where `output` is an artifact this build compiled from the same Graph, bucket file
  // and options, refit it with `weights` (byte-identical to a full compile, and quicker); else
  // compile in full. What kime_add_model() asks for.
  bool update = false;  // with refit: no self-test section (a warning), instead of recomputing it
  // --sign KEY: a secret key file (kime-keygen's); the artifact gets a signature section by it.
  std::string signKey;
  // The kernel cache (KernelCache.h): its directory ("" for KernelCache::openDefault's), or none.
  bool cache = true;
  std::string cacheDir;
};

// kime-compile's defaults, for options that name no targets: x86-64-avx2 and x86-64-avx512
// (x86-64-avx512bf16 with --cpu-precision bf16); with `defaultArchs`, PTX for sm_80 and sm_90
// where this build makes PTX (built with the CUDA Toolkit), except for bf16.
void applyDefaultTargets(CompileOptions& o, bool defaultArchs);

// Compiles, or prints the stage `emit` asks for to `out`. Progress goes to `log`. Throws
// CompileError; the output file is written only once everything succeeded.
void compileModel(const CompileOptions& o, std::ostream& out, std::ostream& log);

}  // namespace kime

#endif  // KIME_PIPELINE_COMPILE_H
