// The embed kernel: each token's row of the token table, plus its sequence's type row and its
// position row (the token and position tables' int8 rows read back with their scales).
#include "ClassKernels.h"

namespace kime::cpu {

using namespace Halide;

HalideKernel embedKernel(const KernelShape& s, const EmbedSpec& e, const RowSchedule& sch) {
  ImageParam ids(UInt(32), 1, "ids"), tokseq(Int(32), 1, "tokseq"), tokpos(Int(32), 1, "tokpos"),
      qtype(UInt(8), 1, "qtype"), tok(e.int8() ? Int(8) : Float(32), 2, "tok"), tokScale(Float(32), 1, "tok_scale"),
      type(Float(32), 2, "type"), pos(e.int8() ? Int(8) : Float(32), 2, "pos"), posScale(Float(32), 1, "pos_scale");
  Var c("c"), r("r");
  Func out("embed");
  Expr seq = clamp(tokseq(r), 0, qtype.dim(0).extent() - 1);
  Expr row = rowOf(ids(r), tok);
  Expr v = tableValue(tok, tokScale, e.int8(), c, row);
  if (e.typeTable) v += type(c, rowOf(qtype(seq), type));
  if (e.learnedPos) v += tableValue(pos, posScale, e.int8(), c, rowOf(tokpos(r), pos));
  out(c, r) = v;

  out.bound(c, 0, int(s.out));
  Var ro("ro"), ri("ri");
  out.split(r, ro, ri, sch.taskRows, TailStrategy::GuardWithIf).parallel(ro).vectorize(c, sch.lanes);
  return {Pipeline(out), {ids, tokseq, tokpos, qtype, tok, tokScale, type, pos, posScale}};
}

}  // namespace kime::cpu
