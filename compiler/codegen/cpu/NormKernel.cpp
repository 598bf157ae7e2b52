// The norm kernel.
#include "ClassKernels.h"

namespace kime::cpu {

using namespace Halide;

// The norm of each row (the rows linears read): the row's statistics, then the row normed.
HalideKernel normKernel(const KernelShape& s, const NormSpec& n, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), ng(Float(32), 1, "norm_weight"), nb(Float(32), 1, "norm_bias");
  Var c("c"), r("r");
  Func xin("xin"), stat("stat");
  xin(c, r) = x(c, r);
  Func xn = normRows(n.norm, n.eps, xin, s.in, &ng, &nb, c, r, stat, sch.lanes);
  Func out("norm");
  out(c, r) = xn(c, r);
  Var ro("ro"), ri("ri");
  out.bound(c, 0, int(s.in))
      .split(r, ro, ri, sch.taskRows, TailStrategy::GuardWithIf)
      .parallel(ro)
      .vectorize(c, sch.lanes);
  stat.compute_at(out, ri).store_in(MemoryType::Stack);
  return {Pipeline(out), {x, ng, nb}};
}

}  // namespace kime::cpu
