#include "GenericKernels.h"

#include "ClassKernels.h"

#include <cmath>
#include <functional>

#include "support/Diagnostic.h"

namespace kime::cpu {

using namespace Halide;

namespace {

// Rows in tasks of `sch.taskRows` (one task when 0), the row's columns in vectors.
void scheduleRows(Func out, Var c, Var r, int64_t width, const RowSchedule& sch) {
  out.bound(c, 0, int(width));
  if (sch.taskRows) {
    Var ro("ro"), ri("ri");
    out.split(r, ro, ri, sch.taskRows, TailStrategy::GuardWithIf).parallel(ro);
  }
  if (sch.lanes > 1) out.vectorize(c, sch.lanes);
}

}  // namespace

Expr applyFn(eltwise::Fn f, const Expr* a) {
  switch (f) {
    case eltwise::Fn::add:
      return a[0] + a[1];
    case eltwise::Fn::sub:
      return a[0] - a[1];
    case eltwise::Fn::mul:
      return a[0] * a[1];
    case eltwise::Fn::silu:
      return a[0] / (1.0f + exp(-a[0]));
    case eltwise::Fn::gelu:
      return 0.5f * a[0] * (1.0f + erf(a[0] * float(M_SQRT1_2)));
    case eltwise::Fn::gelu_tanh: {
      const Expr x = a[0];
      return 0.5f * x * (1.0f + tanh(float(std::sqrt(2 / M_PI)) * (x + 0.044715f * x * x * x)));
    }
    case eltwise::Fn::relu:
      return max(a[0], 0.0f);
    case eltwise::Fn::tanh:
      return tanh(a[0]);
    case eltwise::Fn::sigmoid:
      return 1.0f / (1.0f + exp(-a[0]));
  }
  throw CompileError("internal: an elementwise function Halide has no case for");
}

Expr programValue(const eltwise::Program& program, const std::function<Expr(int)>& input) {
  return eltwise::evaluate<Expr>(program, input, applyFn);
}

// Row r of the output is x's row index[r], or zeros where the index is -1 (an empty sequence's
// first row); an index is clamped into x, so no batch can read past it (the batch checks and the
// gather limits refuse one that would).
// An int8 embedding table's row is its int8 values times the row's scale.
HalideKernel gatherKernel(const KernelShape& s, const GatherSpec& g, const RowSchedule& sch) {
  ImageParam x(g.int8() ? Int(8) : Float(32), 2, "x"), xScale(Float(32), 1, "x_scale"), index(Int(32), 1, "index"),
      indexU8(UInt(8), 1, "index_u8");
  Var c("c"), r("r");
  Expr i = g.indexU8 ? cast<int>(indexU8(r)) : index(r);
  Expr row = clamp(i, 0, x.dim(1).extent() - 1);
  Expr value = tableValue(x, xScale, g.int8(), c, row);
  Func out("gather");
  out(c, r) = select(i >= 0, value, 0.0f);
  scheduleRows(out, c, r, s.out, sch);
  return {Pipeline(out), {x, xScale, index, indexU8}};
}

// The program over whole rows (or vectors): every input has the output's shape.
HalideKernel eltwiseKernel(const KernelShape& s, const EltwiseSpec& e, const RowSchedule& sch) {
  const int dims = e.vector ? 1 : 2;
  const char* names[] = {"x", "in1", "in2", "in3"};
  std::vector<ImageParam> in;
  for (const char* n : names) in.emplace_back(Float(32), dims, n);
  Var c("c"), r("r");
  Func out("eltwise");
  if (e.vector) {
    out(r) = programValue(e.program, [&](int i) { return in[size_t(i)](r); });
    Var ro("ro"), ri("ri");
    out.split(r, ro, ri, 1024, TailStrategy::GuardWithIf).parallel(ro);
    out.vectorize(ri, sch.lanes > 1 ? sch.lanes : 8, TailStrategy::GuardWithIf);
  } else {
    out(c, r) = programValue(e.program, [&](int i) { return in[size_t(i)](c, r); });
    scheduleRows(out, c, r, s.out, sch);
  }
  return {Pipeline(out), {in[0], in[1], in[2], in[3]}};
}

// Rotate-half RoPE per head: element i < hd/2 pairs with i + hd/2, the angles' cos and sin read
// from tables by the row's position (clamped into them).
HalideKernel ropeKernel(const KernelShape& s, const RopeSpec& rope, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), pos(Int(32), 1, "pos"), rcos(Float(32), 2, "rope_cos"),
      rsin(Float(32), 2, "rope_sin");
  const int hd = int(s.out / rope.heads), half = hd / 2;
  Var c("c"), r("r");
  // Indices written so that bounds inference keeps them inside the head (a select of two
  // would widen each to both branches' range).
  Expr i = c % hd, first = i < half, j = i % half;
  Expr p = clamp(pos(r), 0, rcos.dim(1).extent() - 1);
  Expr partner = x(c / hd * hd + (i + half) % hd, r);
  Func out("rope");
  out(c, r) = x(c, r) * rcos(j, p) + select(first, -partner, partner) * rsin(j, p);
  scheduleRows(out, c, r, s.out, sch);
  return {Pipeline(out), {x, pos, rcos, rsin}};
}

// Each sequence's mean: the token rows summed into their sequence's row in token order (tokseq
// says which), then divided by the sequence's length; an empty sequence's row stays zeros. The
// sums are made in the output itself, so the kernel needs no buffer of its own.
HalideKernel poolKernel(const KernelShape& s, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), tokseq(Int(32), 1, "tokseq"), cu(UInt(32), 1, "cu");
  Var c("c"), q("q");
  // The batch's tokens, cu's last: x keeps a row when there are none (the runtime's buffers
  // never have zero rows), and that row belongs to no sequence.
  RDom t(0, x.dim(1).extent(), "t");
  t.where(t < cast<int>(cu(cu.dim(0).extent() - 1)));
  Func out("pool");
  out(c, q) = 0.0f;
  out(c, clamp(tokseq(t), 0, cu.dim(0).extent() - 2)) += x(c, t);
  out(c, q) = out(c, q) / max(1.0f, cast<float>(cu(q + 1) - cu(q)));
  out.bound(c, 0, int(s.out));
  const int lanes = sch.lanes > 1 ? sch.lanes : 1;
  if (lanes > 1) {
    out.vectorize(c, lanes);
    out.update(0).vectorize(c, lanes);
    out.update(1).vectorize(c, lanes);
  }
  return {Pipeline(out), {x, tokseq, cu}};
}

}  // namespace kime::cpu
