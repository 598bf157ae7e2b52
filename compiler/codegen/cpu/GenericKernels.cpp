#include "GenericKernels.h"

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

Expr gelu(Expr a) { return 0.5f * a * (1.0f + erf(a * float(M_SQRT1_2))); }
Expr silu(Expr a) { return a / (1.0f + exp(-a)); }

}  // namespace

Expr programValue(const std::string& program, const std::function<Expr(int)>& input) {
  std::vector<Expr> stack;
  auto pop = [&]() {
    if (stack.empty()) throw CompileError("internal: eltwise program \"" + program + "\" runs out of values");
    Expr e = stack.back();
    stack.pop_back();
    return e;
  };
  for (char step : program) {
    if (step >= '0' && step <= '3') {
      stack.push_back(input(step - '0'));
    } else if (step == '+' || step == '*') {
      Expr b = pop(), a = pop();
      stack.push_back(step == '+' ? a + b : a * b);
    } else if (step == 's' || step == 'g') {
      Expr a = pop();
      stack.push_back(step == 's' ? silu(a) : gelu(a));
    } else {
      throw CompileError("internal: eltwise program \"" + program + "\" has an unknown step");
    }
  }
  if (stack.size() != 1) throw CompileError("internal: eltwise program \"" + program + "\" leaves no single value");
  return stack.back();
}

// Row r of the output is x's row index[r], or zeros where the index is -1 (an empty sequence's
// first row); an index is clamped into x, so no batch can read past it (the batch checks and the
// gather limits refuse one that would).
// An int8 token table's row is its int8 values times the row's scale.
HalideKernel gatherKernel(const KernelSpec& s, const RowSchedule& sch) {
  ImageParam x(s.int8 ? Int(8) : Float(32), 2, "x"), xScale(Float(32), 1, "x_scale"), index(Int(32), 1, "index"),
      indexU8(UInt(8), 1, "index_u8");
  Var c("c"), r("r");
  Expr i = s.indexU8 ? cast<int>(indexU8(r)) : index(r);
  Expr row = clamp(i, 0, x.dim(1).extent() - 1);
  Expr value = s.int8 ? cast<float>(x(c, row)) * xScale(row) : x(c, row);
  Func out("gather");
  out(c, r) = select(i >= 0, value, 0.0f);
  scheduleRows(out, c, r, s.out, sch);
  return {Pipeline(out), {x, xScale, index, indexU8}};
}

// The program over whole rows (or vectors): every input has the output's shape.
HalideKernel eltwiseKernel(const KernelSpec& s, const RowSchedule& sch) {
  const int dims = s.vector ? 1 : 2;
  const char* names[] = {"x", "in1", "in2", "in3"};
  std::vector<ImageParam> in;
  for (const char* n : names) in.emplace_back(Float(32), dims, n);
  Var c("c"), r("r");
  Func out("eltwise");
  if (s.vector) {
    out(r) = programValue(s.program, [&](int i) { return in[size_t(i)](r); });
    Var ro("ro"), ri("ri");
    out.split(r, ro, ri, 1024, TailStrategy::GuardWithIf).parallel(ro);
    out.vectorize(ri, sch.lanes > 1 ? sch.lanes : 8, TailStrategy::GuardWithIf);
  } else {
    out(c, r) = programValue(s.program, [&](int i) { return in[size_t(i)](c, r); });
    scheduleRows(out, c, r, s.out, sch);
  }
  return {Pipeline(out), {in[0], in[1], in[2], in[3]}};
}

// Rotate-half RoPE per head: element i < hd/2 pairs with i + hd/2, the angles' cos and sin read
// from tables by the row's position (clamped into them).
HalideKernel ropeKernel(const KernelSpec& s, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), pos(Int(32), 1, "pos"), rcos(Float(32), 2, "rope_cos"),
      rsin(Float(32), 2, "rope_sin");
  const int hd = int(s.out / s.ropeHeads), half = hd / 2;
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

}  // namespace kime::cpu
