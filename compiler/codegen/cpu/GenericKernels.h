// The generic kernel classes' Halide pipelines (gather, eltwise, rope, pool): what kime-fuse makes of
// the Graph ops no fused kernel takes.
#ifndef KIME_CODEGEN_CPU_GENERICKERNELS_H
#define KIME_CODEGEN_CPU_GENERICKERNELS_H

#include <functional>
#include <string>

#include "HalideKernels.h"

namespace kime::cpu {

// One elementwise function of `args` (kime/core/Eltwise.h): the Halide back end of a program.
Halide::Expr applyFn(eltwise::Fn f, const Halide::Expr* args);
// The value of a program: `input(i)` is input i's element.
Halide::Expr programValue(const eltwise::Program& program, const std::function<Halide::Expr(int)>& input);

HalideKernel gatherKernel(const KernelShape& s, const GatherSpec& g, const RowSchedule& sch);
HalideKernel eltwiseKernel(const KernelShape& s, const EltwiseSpec& e, const RowSchedule& sch);
HalideKernel ropeKernel(const KernelShape& s, const RopeSpec& rope, const RowSchedule& sch);
HalideKernel poolKernel(const KernelShape& s, const RowSchedule& sch);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_GENERICKERNELS_H
