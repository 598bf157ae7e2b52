// CPU code: every distinct kernel compiled by Halide for each target, linked with one Halide
// runtime into one ELF shared object per target.
#ifndef KIME_CODEGEN_CPU_CPUCODEGEN_H
#define KIME_CODEGEN_CPU_CPUCODEGEN_H

#include <string>
#include <vector>

#include "kernels/KernelSpec.h"

namespace kime::cpu {

// The CPU targets kime ships are plan.h's kime_cpu_target: x86-64-avx2 (the baseline),
// x86-64-avx512, arm-64, and x86-64-avx512bf16 (the target of --cpu-precision bf16 only).
inline const char* const kBf16Target = kime_cpu_target_names[KIME_CPU_X86_64_AVX512BF16];
// Halide's spelling of one of them; throws CompileError naming the known ones otherwise.
std::string halideTarget(const std::string& target);

// The kernels named `names[i]` for `specs[i]`, as one shared object for `target`. `jobs`
// kernels compile at once. Throws CompileError (with the linker's output) on failure.
std::string compileSharedObject(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names,
                                const std::string& target, int jobs);

// Halide's lowered statement of one kernel, for --emit=halide.
std::string loweredKernel(const KernelSpec& spec, const std::string& name, const std::string& target);

// The assembly of one kernel, for tests that look at the instructions.
std::string kernelAssembly(const KernelSpec& spec, const std::string& name, const std::string& target);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_CPUCODEGEN_H
