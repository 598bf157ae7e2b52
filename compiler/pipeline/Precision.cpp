#include "Precision.h"

#include <algorithm>

#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/Schedule.h"
#include "support/Diagnostic.h"

namespace kime {

Tolerance cpuTolerance(const CompileOptions& o) {
  return o.cpuPrecision == "bf16" ? kBf16Tolerance : o.cpuPrecision == "int8" ? kInt8Tolerance : kF32Tolerance;
}

std::vector<std::string> PrecisionTargets::all() const {
  std::vector<std::string> out = byDefault;
  out.insert(out.end(), others.begin(), others.end());
  return out;
}

bool PrecisionTargets::has(const std::string& t) const {
  const std::vector<std::string> a = all();
  return std::find(a.begin(), a.end(), t) != a.end();
}

PrecisionTargets precisionTargets(const std::string& precision) {
  auto name = [](kime_cpu_target t) { return std::string(kime_cpu_target_names[t]); };
  if (precision == "bf16") return {{cpu::kBf16Target}, {}};
  if (precision == "int8")
    return {{name(KIME_CPU_X86_64_AVX2), name(KIME_CPU_X86_64_AVX512), cpu::kInt8Target},
            {name(KIME_CPU_ARM_64), name(KIME_CPU_ARM_64_DOTPROD)}};
  return {defaultCpuTargets(), {name(KIME_CPU_ARM_64)}};
}

void checkPrecision(const CompileOptions& o) {
  if (o.cpuPrecision != "f32" && o.cpuPrecision != "bf16" && o.cpuPrecision != "int8")
    throw CompileError("--cpu-precision must be f32, bf16 or int8, not \"" + o.cpuPrecision + "\"");
  const PrecisionTargets own = precisionTargets(o.cpuPrecision);
  for (const std::string& t : o.targets) {
    cpu::parseTarget(t);  // an unknown name is refused as one
    if (own.has(t)) continue;
    for (const char* p : {"bf16", "int8"})
      if (o.cpuPrecision == "f32" && precisionTargets(p).has(t))
        throw CompileError("target " + t + " is for --cpu-precision " + p + "; for f32 kernels use " +
                           (cpu::isaOf(t).isa == cpu::Isa::Neon ? "arm-64" : "x86-64-avx512"));
    std::string list;
    for (const std::string& n : own.all()) list += (list.empty() ? "" : ", ") + n;
    throw CompileError("--cpu-precision " + o.cpuPrecision + " packs the linears' weights in " + o.cpuPrecision +
                       " for " + list + " only; target " + t + " cannot read them (compile a second artifact for it)");
  }
  if (o.cpuPrecision != "f32" && !o.cudaArchs.empty())
    throw CompileError("--cpu-precision " + o.cpuPrecision +
                       " is for the CPU kernels; compile with --cuda-arch none (the CUDA kernels read f32 weights)");
}

}  // namespace kime
