// CPU code: every distinct kernel compiled by Halide for each target, linked with one Halide
// runtime into one ELF shared object per target.
#ifndef KIME_CODEGEN_CPU_CPUCODEGEN_H
#define KIME_CODEGEN_CPU_CPUCODEGEN_H

#include <string>
#include <vector>

#include "cache/KernelCache.h"
#include "kernels/KernelSpec.h"

namespace kime::cpu {

// The CPU targets kime ships are plan.h's kime_cpu_target: x86-64-avx2 (the baseline),
// x86-64-avx512, arm-64, x86-64-avx512bf16 (the target of --cpu-precision bf16 only) and
// x86-64-avx512vnni and arm-64-dotprod (of --cpu-precision int8 only, which also compiles for
// x86-64-avx2, x86-64-avx512 and arm-64).
inline const char* const kBf16Target = kime_cpu_target_names[KIME_CPU_X86_64_AVX512BF16];
inline const char* const kInt8Target = kime_cpu_target_names[KIME_CPU_X86_64_AVX512VNNI];
// Halide's spelling of one of them; throws CompileError naming the known ones otherwise.
std::string halideTarget(const std::string& target);

// The kernels named `names[i]` for `specs[i]`, as one shared object per target in `targets`.
// Each kernel's object is made in a process of its own (forked, `jobs` at once), so that its
// bytes depend on its spec and target alone, never on what was compiled before it: Halide names
// Funcs and the functions of parallel loops from process-wide counters. It is compiled under a
// name made from its spec (kernelSymbol), found in `cache` where given, and the linker gives its
// entry the artifact's name too (`names[i]` + KIME_KERNEL_ENTRY_SUFFIX). Throws CompileError
// (with Halide's or the linker's output) on failure.
struct SharedObjects {
  std::vector<std::string> bytes;   // per target
  size_t compiled = 0, cached = 0;  // objects made now, objects found in the cache (all targets)
};
SharedObjects compileSharedObjects(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names,
                                   const std::vector<std::string>& targets, int jobs, KernelCache* cache);
std::string compileSharedObject(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names,
                                const std::string& target, int jobs);

// Halide's lowered statement of one kernel, for --emit=halide.
std::string loweredKernel(const KernelSpec& spec, const std::string& name, const std::string& target);

// The assembly of one kernel, for tests that look at the instructions.
std::string kernelAssembly(const KernelSpec& spec, const std::string& name, const std::string& target);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_CPUCODEGEN_H
