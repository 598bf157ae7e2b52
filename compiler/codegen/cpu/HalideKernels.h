// One Halide pipeline per kernel class: the algorithm first, then its schedule.
#ifndef KIME_CODEGEN_CPU_HALIDEKERNELS_H
#define KIME_CODEGEN_CPU_HALIDEKERNELS_H

#include <vector>

#include "Halide.h"
#include "pipeline/KernelSpec.h"

namespace kime::cpu {

struct HalideKernel {
  Halide::Pipeline pipeline;
  std::vector<Halide::Argument> args;  // in plan order; the output is the pipeline's
};

// `vector` is the target's f32 lanes (8 for AVX2, 16 for AVX-512, 4 for NEON).
HalideKernel buildKernel(const KernelSpec& spec, int vector);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_HALIDEKERNELS_H
