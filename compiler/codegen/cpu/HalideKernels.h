// One Halide pipeline per kernel class: the algorithm first, then its schedule.
#ifndef KIME_CODEGEN_CPU_HALIDEKERNELS_H
#define KIME_CODEGEN_CPU_HALIDEKERNELS_H

#include <vector>

#include "Halide.h"
#include "Schedule.h"
#include "kernels/KernelSpec.h"

namespace kime::cpu {

struct HalideKernel {
  Halide::Pipeline pipeline;
  // From a class's builder: its parameters, each named as its plan.h slot; from buildKernel:
  // the spec's slots in plan order (slotArgs). The output is the pipeline's own.
  std::vector<Halide::Argument> args;
};

// The kernel of `spec`, scheduled for `isa` (Schedule.h), its arguments plan.h's slots.
HalideKernel buildKernel(const KernelSpec& spec, const IsaInfo& isa);

// The argument list of a kernel of `spec`: for each of its slots (argSlots, the output aside) the
// parameter of that name and the slot's type (a bf16 linear's weights are bf16). The slot list
// is written once, in plan.h and KernelSpec.cpp; a builder lists every parameter it has. Throws
// CompileError where one is missing or of another type.
std::vector<Halide::Argument> slotArgs(const KernelSpec& spec, const std::vector<Halide::Argument>& params);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_HALIDEKERNELS_H
