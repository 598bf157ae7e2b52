// The head kernel: the rows a head reads, normed, times its weight.
#include "ClassKernels.h"

namespace kime::cpu {

using namespace Halide;

HalideKernel headKernel(const KernelShape& s, const HeadSpec& h, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), ng(Float(32), 1, "norm_weight"), nb(Float(32), 1, "norm_bias"),
      rows(Int(32), 1, "rows"), w(Float(32), 2, "weight"), bias(Float(32), 1, "bias");
  Var c("c"), n("n"), o("o");
  // A row index of -1 (an empty sequence's first row) reads zeros after the norm.
  Expr ri = rows(n);
  Func xr("xr");
  xr(c, n) = x(c, clamp(ri, 0, x.dim(1).extent() - 1));
  Func stat("stat");
  Func xn = normRows(h.norm.norm, h.norm.eps, xr, s.in, &ng, &nb, c, n, stat, sch.lanes);
  RDom k(0, int(s.in));
  Func acc("acc");
  acc(o, n) = h.bias ? bias(o) : 0.0f;
  acc(o, n) += select(ri >= 0, xn(k, n), 0.0f) * w(o, k);
  Func out("head");
  out(o, n) = acc(o, n);
  out.bound(o, 0, int(s.out));
  xn.compute_at(out, n).store_in(MemoryType::Stack);
  if (h.norm.norm != NormKind::none) stat.compute_at(out, n).store_in(MemoryType::Stack);
  acc.compute_at(out, n).store_in(MemoryType::Stack);
  return {Pipeline(out), {x, ng, nb, rows, w, bias}};
}

}  // namespace kime::cpu
