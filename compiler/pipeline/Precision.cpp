#include "Precision.h"

#include <algorithm>

#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/Schedule.h"
#include "support/Diagnostic.h"

namespace kime {

Tolerance cpuTolerance(const CompileOptions& o) {
  switch (o.cpuPrecision) {
    case Arithmetic::bf16:
      return kBf16Tolerance;
    case Arithmetic::int8:
    case Arithmetic::int8pairs:
      return kInt8Tolerance;
    case Arithmetic::f32:
      break;
  }
  return kF32Tolerance;
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

Arithmetic parseCpuPrecision(const std::string& name) {
  if (std::optional<Arithmetic> a = parseChoice<Arithmetic>(name)) return *a;
  throw CompileError("--cpu-precision must be " + choiceList<Arithmetic>() + ", not \"" + name + "\"");
}

PrecisionTargets precisionTargets(Arithmetic precision) {
  auto name = [](kime_cpu_target t) { return std::string(kime_cpu_target_names[t]); };
  if (precision == Arithmetic::bf16) return {{cpu::kBf16Target}, {}};
  if (isInt8(precision))
    return {{name(KIME_CPU_X86_64_AVX2), name(KIME_CPU_X86_64_AVX512), cpu::kInt8Target},
            {name(KIME_CPU_ARM_64), name(KIME_CPU_ARM_64_DOTPROD)}};
  return {defaultCpuTargets(), {name(KIME_CPU_ARM_64)}};
}

void checkPrecision(const CompileOptions& o) {
  const std::string precision = nameOf(o.cpuPrecision);
  const PrecisionTargets own = precisionTargets(o.cpuPrecision);
  for (const std::string& t : o.targets) {
    cpu::parseTarget(t);  // an unknown name is refused as one
    if (own.has(t)) continue;
    for (Arithmetic p : {Arithmetic::bf16, Arithmetic::int8})
      if (o.cpuPrecision == Arithmetic::f32 && precisionTargets(p).has(t))
        throw CompileError("target " + t + " is for --cpu-precision " + nameOf(p) + "; for f32 kernels use " +
                           (cpu::isaOf(t).isa == cpu::Isa::Neon ? "arm-64" : "x86-64-avx512"));
    std::string list;
    for (const std::string& n : own.all()) list += (list.empty() ? "" : ", ") + n;
    throw CompileError("--cpu-precision " + precision + " packs the linears' weights in " + precision + " for " + list +
                       " only; target " + t + " cannot read them (compile a second artifact for it)");
  }
  if (o.cpuPrecision != Arithmetic::f32 && !o.cudaArchs.empty())
    throw CompileError("--cpu-precision " + precision +
                       " is for the CPU kernels; compile with --cuda-arch none (the CUDA kernels read f32 weights)");
}

}  // namespace kime
