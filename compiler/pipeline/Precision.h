// The CPU precision policy (--cpu-precision f32, bf16, int8 or int8pairs): which targets read which
// weights, what the outputs are held to, what may be combined.
#ifndef KIME_PIPELINE_PRECISION_H
#define KIME_PIPELINE_PRECISION_H

#include <string>
#include <vector>

#include "Compile.h"
#include "reference/Reference.h"

namespace kime {

// What the CPU code's outputs are held to: bf16 rounds every linear's inputs and weights to 8
// significant bits; int8 quantizes them (compiler/quant/Int8.h).
Tolerance cpuTolerance(const CompileOptions& o);

// The CPU targets whose kernels read a precision's weights, those it compiles by default first:
// bf16's one target; int8's x86 targets (each with its own dot product) and arm-64; f32's all but
// the two that are only for those.
struct PrecisionTargets {
  std::vector<std::string> byDefault, others;
  std::vector<std::string> all() const;
  bool has(const std::string& t) const;
};
PrecisionTargets precisionTargets(Arithmetic precision);

// --cpu-precision's value by name; throws CompileError naming the choices for any other name.
Arithmetic parseCpuPrecision(const std::string& name);

// bf16 and int8 linears are opt-ins: the weights section is shared by every code section, so
// only their own targets' kernels can read it, and no CUDA code. Throws CompileError naming the
// target or option that cannot be combined with o.cpuPrecision.
void checkPrecision(const CompileOptions& o);

}  // namespace kime

#endif  // KIME_PIPELINE_PRECISION_H
