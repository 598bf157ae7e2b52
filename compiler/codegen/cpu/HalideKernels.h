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
  std::vector<Halide::Argument> args;  // in plan order; the output is the pipeline's
};

// The kernel of `spec`, scheduled for `isa` (Schedule.h).
HalideKernel buildKernel(const KernelSpec& spec, const IsaInfo& isa);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_HALIDEKERNELS_H
