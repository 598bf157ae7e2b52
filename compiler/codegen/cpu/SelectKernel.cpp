// The select kernel.
#include "ClassKernels.h"

namespace kime::cpu {

using namespace Halide;

// The output rows of kime-prune-rows: row r is x's row rows[r], or zeros where that is -1 (an
// empty sequence's first row).
HalideKernel selectKernel(const KernelShape& s, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), rows(Int(32), 1, "rows");
  Var c("c"), r("r");
  Func out("select");
  out(c, r) = select(rows(r) >= 0, x(c, clamp(rows(r), 0, x.dim(1).extent() - 1)), 0.0f);
  out.bound(c, 0, int(s.out)).vectorize(c, sch.lanes);
  return {Pipeline(out), {x, rows}};
}

}  // namespace kime::cpu
