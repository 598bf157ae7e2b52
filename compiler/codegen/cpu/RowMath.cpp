// Row sums and row norms, shared by the norm, head and generic kernels (ClassKernels.h).
#include "ClassKernels.h"

namespace kime::cpu {

using namespace Halide;

Func rowSum(const std::string& name, const std::function<Expr(Expr, Var)>& term, int64_t width, int lanes, Var r) {
  Var u("u");
  RDom kv(0, int(width / lanes), name + "_k");
  Func part(name + "_lanes"), total(name);
  part(u, r) = 0.0f;
  part(u, r) += term(kv * lanes + u, r);
  RDom lane(0, lanes, name + "_lane");
  total(r) = 0.0f;
  total(r) += part(lane, r);
  part.compute_at(total, r).vectorize(u);
  part.update().vectorize(u);
  return total;
}

Func normRows(NormKind kind, double eps, Func x, int64_t k, const ImageParam* g, const ImageParam* b, Var c, Var r,
              Func& stat, int lanes) {
  Func out("normed");
  if (kind == NormKind::none) {
    out(c, r) = x(c, r);
    return out;
  }
  Expr n = float(k);
  if (kind == NormKind::rms) {
    Func sq = rowSum("sum_sq", [&](Expr kk, Var rr) { return x(kk, rr) * x(kk, rr); }, k, lanes, r);
    stat(r) = Tuple(0.0f, sq(r));
    sq.compute_at(stat, r);
    Expr inv = 1.0f / sqrt(stat(r)[1] / n + float(eps));
    out(c, r) = x(c, r) * inv * (*g)(c);
  } else {
    // Mean first, then the variance around it: the two-pass form keeps f32 error small.
    Func sum = rowSum("sum", [&](Expr kk, Var rr) { return x(kk, rr); }, k, lanes, r);
    Func mean("mean");
    mean(r) = sum(r) / n;
    Func dev = rowSum(
        "sum_dev", [&](Expr kk, Var rr) { return (x(kk, rr) - mean(rr)) * (x(kk, rr) - mean(rr)); }, k, lanes, r);
    stat(r) = Tuple(mean(r), dev(r));
    for (Func* f : {&sum, &mean, &dev}) f->compute_at(stat, r);
    Expr inv = 1.0f / sqrt(stat(r)[1] / n + float(eps));
    out(c, r) = (x(c, r) - stat(r)[0]) * inv * (*g)(c) + (*b)(c);
  }
  return out;
}

}  // namespace kime::cpu
