#include "CpuCodegen.h"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "HalideKernels.h"
#include "Schedule.h"
#include "kime/format.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace kime::cpu {

// The runtime calls kernels through kime_kernel_buffer, which must be halide_buffer_t exactly.
static_assert(sizeof(kime_kernel_buffer) == sizeof(halide_buffer_t), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, host) == offsetof(halide_buffer_t, host), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, type) == offsetof(halide_buffer_t, type), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, dimensions) == offsetof(halide_buffer_t, dimensions), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, dim) == offsetof(halide_buffer_t, dim), "buffer ABI drift");
static_assert(sizeof(kime_kernel_dimension) == sizeof(halide_dimension_t), "buffer ABI drift");

namespace fs = std::filesystem;

std::string halideTarget(const std::string& target) {
  switch (parseTarget(target)) {
    case KIME_CPU_X86_64_AVX2:
      return "x86-64-linux-avx-avx2-f16c-fma-sse41";
    case KIME_CPU_X86_64_AVX512:
      return "x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake";
    case KIME_CPU_ARM_64:
      return "arm-64-linux";
    // Halide 14 has AVX512-BF16 (vdpbf16ps) under its Sapphire Rapids feature only.
    case KIME_CPU_X86_64_AVX512BF16:
      return "x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake-avx512_sapphirerapids";
    default:
      break;
  }
  throw CompileError("internal: no Halide target for \"" + target + "\"");
}

// The C library the kernels link against, so that their calls bind to its current symbol
// versions: unversioned references to pthread_cond_wait bind to glibc's 2.2.5 compatibility
// version, which allocates on every wait of a fresh condition variable (the thread pool parks
// threads on such), and a warm run would no longer be allocation-free.
static std::string libcFor(const std::string& target) {
  // Where each glibc is: CMake's KIME_X86_64_LIBC and KIME_AARCH64_LIBC (Debian's by default).
  const bool arm = parseTarget(target) == KIME_CPU_ARM_64;
  const std::string libc = arm ? KIME_AARCH64_LIBC : KIME_X86_64_LIBC;
  if (fs::exists(libc)) return libc;
  throw CompileError("linking the " + target + " kernels needs that target's glibc at " + libc +
                     (arm ? " (Debian package libc6-arm64-cross; CMake's KIME_AARCH64_LIBC says where)"
                          : " (CMake's KIME_X86_64_LIBC says where)"));
}

static Halide::Target kernelTarget(const std::string& target) {
  // Kernels carry no runtime of their own: the shared object gets exactly one.
  return Halide::Target(halideTarget(target)).with_feature(Halide::Target::NoRuntime);
}

std::string compileSharedObject(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names,
                                const std::string& target, int jobs) {
  TempDir dir;
  std::vector<std::string> objects(specs.size());
  std::atomic<size_t> next{0};
  std::mutex errorMutex;
  std::string error;
  // The pipelines are built and lowered here, in order, and only turned into machine code in
  // parallel: Halide names Funcs, loops and the functions of parallel loops from global
  // counters, so building or lowering on several threads would name them (and so the symbols of
  // the object) differently from one compile to the next.
  std::vector<Halide::Module> lowered;
  for (size_t i = 0; i < specs.size(); ++i) {
    HalideKernel k = buildKernel(specs[i], isaOf(target));
    lowered.push_back(k.pipeline.compile_to_module(k.args, names[i], kernelTarget(target)));
  }
  auto worker = [&] {
    for (size_t i = next++; i < specs.size(); i = next++) {
      try {
        objects[i] = (dir.path() / (names[i] + ".o")).string();
        lowered[i].compile({{Halide::OutputFileType::object, objects[i]}});  // this thread's alone
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (error.empty()) error = "kernel " + names[i] + " for " + target + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, jobs); ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (!error.empty()) throw CompileError(error);

  std::string runtime = (dir.path() / "halide_runtime.o").string();
  Halide::compile_standalone_runtime(runtime, Halide::Target(halideTarget(target)));
  std::string so = (dir.path() / "kernels.so").string();
  std::vector<std::string> argv = {KIME_LLD, "-shared", "--build-id=none", "--strip-all", "--hash-style=both",
                                   "-o",     so};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.push_back(runtime);
  argv.push_back(libcFor(target));
  std::string log;
  if (runProgram(argv, log) != 0) throw CompileError("linking the " + target + " kernels failed: " + log);
  return json::readFile(so);
}

// One kernel compiled to one text output (Halide's statement or assembly).
static std::string kernelText(const KernelSpec& spec, const std::string& name, const std::string& target,
                              Halide::OutputFileType type, const char* ext) {
  TempDir dir;
  HalideKernel k = buildKernel(spec, isaOf(target));
  fs::path file = dir.path() / (name + ext);
  k.pipeline.compile_to({{type, file.string()}}, k.args, name, kernelTarget(target));
  return json::readFile(file.string());
}

std::string loweredKernel(const KernelSpec& spec, const std::string& name, const std::string& target) {
  return kernelText(spec, name, target, Halide::OutputFileType::stmt, ".stmt");
}

std::string kernelAssembly(const KernelSpec& spec, const std::string& name, const std::string& target) {
  return kernelText(spec, name, target, Halide::OutputFileType::assembly, ".s");
}

}  // namespace kime::cpu
