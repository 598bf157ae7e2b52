// The attention kernel: per query, or in tiles of queries (the schedule's choice).
#include "ClassKernels.h"

namespace kime::cpu {

using namespace Halide;

namespace {

// Attention one query a task (the untiled schedule: kime-prune-rows' output rows, each of its
// own sequence): its sequence's keys, their softmax, the weighted values.
HalideKernel attention(const KernelShape& s, const AttentionSpec& a, const AttentionSchedule& sch) {
  // qseq: the sequence of each query row (the tokens', or the output rows')
  ImageParam q(Float(32), 2, "q"), k(Float(32), 2, "k"), v(Float(32), 2, "v"), qseq(Int(32), 1, "qseq"),
      cu(UInt(32), 1, "cu");
  const int hd = int(s.in / a.heads), group = int(a.heads / a.kvHeads);
  Var c("c"), t("t"), h("h"), d("d"), jv("jv");
  // The query's sequence: its tokens are [start, start + len).
  Expr seq = clamp(qseq(t), 0, cu.dim(0).extent() - 2);
  Expr start = cast<int>(cu(seq));
  Expr len = cast<int>(cu(seq + 1)) - cast<int>(cu(seq));
  RDom j(0, int(a.maxLen));
  j.where(j < len);
  Expr kh = h / group;
  Func qs("qs");
  qs(d, h, t) = q(h * hd + d, t) * float(a.scale);
  // Per (query, head): the scores of the sequence's keys once, into a row of the bucket's
  // longest sequence on the stack (no [T, T] buffer); their max; the exponentials and their sum;
  // then the weighted sum of values. Every loop over keys is trimmed to the sequence by its
  // `where`; the max, the exponentials and the sum run over vectors of W keys (li), the last
  // vector masked.
  const int W = sch.keyLanes;
  Func dot("dot"), sc("scores"), mxv("mx_lanes"), mx("mx"), p("p"), denv("den_lanes"), den("den"), num("num");
  Var li("li"), jtv("jtv");
  RDom jt(0, int((a.maxLen + W - 1) / W), "jt");
  jt.where(jt * W < len);
  RDom lane(0, W, "lane");
  Expr valid = jt * W + li < len;
  RDom e(0, hd, "e");
  dot(jv, h, t) = 0.0f;
  dot(jv, h, t) += qs(e, h, t) * k(kh * hd + e, clamp(start + jv, 0, k.dim(1).extent() - 1));
  sc(jv, h, t) = undef<float>();
  sc(j, h, t) = dot(j, h, t);
  const float inf = std::numeric_limits<float>::infinity();
  mxv(li, h, t) = -inf;
  mxv(li, h, t) = max(mxv(li, h, t), select(valid, sc(jt * W + li, h, t), -inf));
  mx(h, t) = -inf;
  mx(h, t) = max(mx(h, t), mxv(lane, h, t));
  // Past the sequence (the last vector's tail) p holds garbage that nothing reads unmasked.
  p(li, jtv, h, t) = undef<float>();
  p(li, jt, h, t) = exp(sc(jt * W + li, h, t) - mx(h, t));
  denv(li, h, t) = 0.0f;
  denv(li, h, t) += select(valid, p(li, jt, h, t), 0.0f);
  den(h, t) = 0.0f;
  den(h, t) += denv(lane, h, t);
  num(d, h, t) = 0.0f;
  num(d, h, t) += p(j % W, j / W, h, t) * v(kh * hd + d, clamp(start + j, 0, v.dim(1).extent() - 1));
  Func out("attention");
  // An empty sequence's output row (kime-prune-rows) has no keys: zeros, not 0/0.
  out(c, t) = select(den(c / hd, t) > 0.0f, num(c % hd, c / hd, t) / den(c / hd, t), 0.0f);

  const int lanes = sch.lanes;
  out.bound(c, 0, int(s.in));
  Var ho("ho"), di("di");
  out.split(c, ho, di, hd).parallel(t).vectorize(di, lanes);
  qs.compute_at(out, t).store_in(MemoryType::Stack).vectorize(d, lanes);
  for (Func* f : {&sc, &mxv, &mx, &p, &denv, &den, &num}) f->compute_at(out, ho).store_in(MemoryType::Stack);
  // Each key's dot product over the head: vectorized along it, summed across the lanes. The
  // loops over keys keep their default order: Halide trims a loop to its `where` only then.
  dot.compute_at(sc, j).store_in(MemoryType::Register);
  if (hd > lanes) {
    // Partial sums in one vector across the head, then a single sum across its lanes.
    RVar eo("eo"), ei("ei");
    Var u("u");
    Func part = dot.update().split(e, eo, ei, lanes).rfactor(ei, u);
    part.compute_at(sc, j).store_in(MemoryType::Register).vectorize(u).update().vectorize(u);
    dot.update().atomic().vectorize(ei);
  } else {
    dot.update().atomic().vectorize(e, lanes);
  }
  for (Func* f : {&mxv, &denv}) f->vectorize(li, W).update().vectorize(li, W);
  p.update().vectorize(li, W);
  num.vectorize(d, lanes);
  num.update().vectorize(d, lanes);
  return {Pipeline(out), {q, k, v, qseq, cu}};
}

// Attention over the tokens, a tile of Q queries (the schedule's) per task and head:
// the tile's keys are those of the sequences its queries are in (one sequence but at a boundary),
// each masked to its own query's. Scores are vectors over the tile's queries, so q.k is vertical
// FMAs (the tile's queries transposed once, a key's element broadcast) and p.v too (a value
// broadcast per head element), never a sum across lanes. Two passes over the keys in blocks of
// KB, each computing its block's scores (cheaper than a [queries, keys] buffer, which for a
// bucket's longest sequence would not fit on the stack): the first finds each query's max, the
// second sums the exponentials and the weighted values. Both sums run over the query's own keys
// in order, the others adding exact zeros, so that a query's result does not depend on where its
// sequence starts in the tile or in the batch (docs/batch.md): no running rescale, whose rounding
// would follow the blocks.
HalideKernel attentionTiles(const KernelShape& s, const AttentionSpec& a, const AttentionSchedule& sch) {
  ImageParam q(Float(32), 2, "q"), k(Float(32), 2, "k"), v(Float(32), 2, "v"), qseq(Int(32), 1, "qseq"),
      cu(UInt(32), 1, "cu");
  const int hd = int(s.in / a.heads), group = int(a.heads / a.kvHeads), Q = sch.queries, KB = sch.keyBlock;
  Var c("c"), t("t"), qi("qi"), j("j"), d("d"), h("h"), tile("tile");
  Expr T = q.dim(1).extent();
  auto seqOf = [&](Expr row) { return clamp(qseq(clamp(row, 0, T - 1)), 0, cu.dim(0).extent() - 2); };
  // The tile's keys [kstart, kstart + klen); a query's own are [lo, hi) of them. Rows past T
  // repeat the last query.
  Expr tq = min(tile * Q + qi, T - 1);
  Expr kstart = cast<int>(cu(seqOf(tile * Q)));
  Expr klen = cast<int>(cu(seqOf(tile * Q + Q - 1) + 1)) - kstart;
  Func lo("lo"), hi("hi");
  lo(qi, tile) = cast<int>(cu(seqOf(tq))) - kstart;
  hi(qi, tile) = cast<int>(cu(seqOf(tq) + 1)) - kstart;
  Expr kh = h / group;
  Func qT("qT");
  qT(qi, d, h, tile) = q(h * hd + d, tq) * float(a.scale);
  // The head's extent read from q, not a constant: with a constant LLVM unrolls the sum whole and,
  // with Halide's reassociating fast-math flags, orders each unrolled key's terms its own way, so
  // that a score would depend on the key's place in its block (docs/batch.md).
  RDom e(0, q.dim(0).extent() / int(a.heads), "e");
  auto keyRow = [&](Expr jj, const ImageParam& m) { return clamp(kstart + jj, 0, m.dim(1).extent() - 1); };
  auto scores = [&](const char* name) {
    Func f(name);
    f(qi, j, h, tile) = 0.0f;
    f(qi, j, h, tile) += qT(qi, e, h, tile) * k(kh * hd + e, keyRow(j, k));
    return f;
  };
  Func sc1 = scores("scores_max"), sc2 = scores("scores");
  // Blocks of keys; a block's KB keys are written out in each update, so that the loop over
  // blocks is the RDom's only one.
  RDom rb(0, int((a.maxLen + KB - 1) / KB), "rb");
  rb.where(rb * KB < klen);
  auto own = [&](Expr key) { return key >= lo(qi, tile) && key < hi(qi, tile); };
  // A finite stand-in for -inf while a query has no key yet.
  const float none = -1e30f;
  Func mx("max");
  mx(qi, h, tile) = none;
  Expr bmax = mx(qi, h, tile);
  for (int x = 0; x < KB; ++x) bmax = max(bmax, select(own(rb * KB + x), sc1(qi, rb * KB + x, h, tile), none));
  mx(qi, h, tile) = bmax;
  // num over d in [0, hd]: element hd sums the exponentials alone (a value of 1), in the loop
  // and key order of the weighted values.
  Func p("p"), num("num");
  p(qi, j, h, tile) = select(own(j), exp(sc2(qi, j, h, tile) - mx(qi, h, tile)), 0.0f);
  num(qi, d, h, tile) = 0.0f;
  Expr acc = num(qi, d, h, tile);
  for (int x = 0; x < KB; ++x) {
    Expr key = rb * KB + x;
    acc += p(qi, key, h, tile) * select(likely(d < hd), v(kh * hd + min(d, hd - 1), keyRow(key, v)), 1.0f);
  }
  // In the order written: the blocks start where the tile's first sequence does, not where the
  // query's does, so a sum LLVM regrouped by block (Halide's flags allow it) would follow the
  // query's place in the batch.
  num(qi, d, h, tile) = strict_float(acc);
  Func out("attention");
  out(c, t) = num(t % Q, c % hd, c / hd, t / Q) / num(t % Q, hd, c / hd, t / Q);

  out.bound(c, 0, int(s.in));
  Var to("to"), ti("ti"), ho("ho"), di("di"), task("task");
  out.split(t, to, ti, Q, TailStrategy::GuardWithIf)
      .split(c, ho, di, hd)
      .reorder(di, ti, ho, to)
      .fuse(ho, to, task)
      .parallel(task)
      .vectorize(di, sch.lanes);
  for (Func* f : {&lo, &hi, &qT, &mx, &num}) f->compute_at(out, task).store_in(MemoryType::Stack).vectorize(qi);
  qT.bound(d, 0, hd);  // its rows are a head, though the sums over them read their extent from q
  mx.update().reorder(qi, rb).vectorize(qi);
  // Blocks outermost, each head element's sum in a register across the block's keys. (Halide
  // trims the loop over blocks to the tile's keys only in the RDom's default order, as in the
  // first pass; here the blocks past them are each one test.) Each sum is a chain of dependent
  // adds in key order (strict: no FMA), so several head elements at once keep the adders busy.
  Var dO("dO"), dI("dI");
  num.update()
      .split(d, dO, dI, sch.headUnroll, TailStrategy::GuardWithIf)
      .reorder(qi, dI, dO, rb)
      .vectorize(qi)
      .unroll(dI);
  sc1.compute_at(mx, rb).store_in(MemoryType::Stack).vectorize(qi).unroll(j);
  sc1.update().reorder(qi, j, e).vectorize(qi).unroll(j);
  p.compute_at(num, rb).store_in(MemoryType::Stack).vectorize(qi).unroll(j);
  sc2.compute_at(num, rb).store_in(MemoryType::Stack).vectorize(qi).unroll(j);
  sc2.update().reorder(qi, j, e).vectorize(qi).unroll(j);
  return {Pipeline(out), {q, k, v, qseq, cu}};
}

}  // namespace

HalideKernel attentionKernel(const KernelShape& s, const AttentionSpec& a, const IsaInfo& isa) {
  const AttentionSchedule sch = attentionSchedule(s, a, isa);
  return sch.tiled ? attentionTiles(s, a, sch) : attention(s, a, sch);
}

}  // namespace kime::cpu
