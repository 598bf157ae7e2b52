#include "HalideKernels.h"

#include "CpuCodegen.h"
#include "GenericKernels.h"
#include "Schedule.h"

#include <algorithm>
#include <functional>

#include "support/Diagnostic.h"

namespace kime::cpu {

using namespace Halide;

namespace {

// An index read from a buffer, clamped into `table`'s rows (dimension 1) so a bad index can
// never read outside it; the batch check already refused ids past the vocabulary.
Expr rowOf(Expr i, const ImageParam& table) { return clamp(cast<int>(i), 0, table.dim(1).extent() - 1); }

// Per row r, the sum over k < width of term(k, r): `lanes` partial sums in one vector (vertical
// adds), then one sum across them (not a scalar loop over k).
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

// The norm of each row of `x` (width k), times gain (+ bias): a Func of (c, r). `stat(r)` is
// (mean, sum of squared deviations) for layer norm, (0, sum of squares) for rms; the caller
// places it.
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

HalideKernel embed(const KernelSpec& s, const IsaInfo& isa) {
  ImageParam ids(UInt(32), 1, "ids"), tokseq(Int(32), 1, "tokseq"), tokpos(Int(32), 1, "tokpos"),
      qtype(UInt(8), 1, "qtype"), tok(s.int8() ? Int(8) : Float(32), 2, "tok"), tokScale(Float(32), 1, "tok_scale"),
      type(Float(32), 2, "type"), pos(Float(32), 2, "pos");
  Var c("c"), r("r");
  Func out("embed");
  Expr seq = clamp(tokseq(r), 0, qtype.dim(0).extent() - 1);
  Expr row = rowOf(ids(r), tok);
  Expr e = s.int8() ? cast<float>(tok(c, row)) * tokScale(row) : tok(c, row);
  if (s.typeTable) e += type(c, rowOf(qtype(seq), type));
  if (s.learnedPos) e += pos(c, rowOf(tokpos(r), pos));
  out(c, r) = e;

  out.bound(c, 0, int(s.out));
  Var ro("ro"), ri("ri");
  const RowSchedule sch = rowSchedule(s, isa);
  out.split(r, ro, ri, sch.taskRows, TailStrategy::GuardWithIf).parallel(ro).vectorize(c, sch.lanes);
  return {Pipeline(out), {ids, tokseq, tokpos, qtype, tok, tokScale, type, pos}};
}

// A linear kernel's parameters and Funcs: the algorithm (defineLinear), then its schedule
// (scheduleLinear).
struct Linear {
  explicit Linear(Type wt)
      : x(Float(32), 2, "x"),
        w(wt, 2, "weight"),
        bias(Float(32), 1, "bias"),
        wu(wt, 2, "weight_up"),
        biasu(Float(32), 1, "bias_up"),
        tokpos(Int(32), 1, "tokpos"),
        rcos(Float(32), 2, "rope_cos"),
        rsin(Float(32), 2, "rope_sin"),
        res(Float(32), 2, "residual"),
        wscale(Float(32), 2, "weight_scale"),
        wuscale(Float(32), 2, "weight_up_scale"),
        in{ImageParam(Float(32), 2, "in1"), ImageParam(Float(32), 2, "in2"), ImageParam(Float(32), 2, "in3")} {}
  ImageParam x, w, bias, wu, biasu, tokpos, rcos, rsin, res, wscale, wuscale;
  ImageParam in[3];  // the epilogue program's inputs 1 to 3
  Var o{"o"}, r{"r"};
  Func acc{"acc"}, accu{"acc_up"}, xbGate{"x_bf16"}, xbUp{"x_bf16_up"}, out{"linear"};
  Func xScale{"x_scale"}, xq{"x_int8"};       // int8: each row's scale, its inputs quantized (+ 128 for u8)
  Func xMax{"x_max"}, xInverse{"x_inverse"};  // int8: each row's largest |x|, and 127 over it
  Func laneMax{"x_lane_max"};                 // int8: each row's largest |x| of every 16th input, a lane each
  // int8 by i16 pairs: the sums of each quad's first pair (h = 0) and of its second (h = 1).
  Func accPairs{"acc_pairs"}, accuPairs{"acc_up_pairs"};
  Var h{"h"};
  RDom k, kp, kq, kh;
  // The batch fills at least one register block's rows (the schedule's specialization).
  Expr enoughRows;
};

// int8 (quant/Int8.h): each row's scale is its largest |x| / 127; its inputs are rounded to
// whole multiples of it in [-127, 127] (times 127 over the largest: a multiply, not a division),
// offset by 128 for vpdpbusd (its u8 operand), widened to i16 for vpmaddwd (so that each row's
// quad is one broadcast load).
void quantizeRows(Linear& L, const KernelSpec& s, Int8Dot dot, const std::function<Expr(Expr)>& xrow) {
  Var i("i"), rb("rb"), lane("lane");
  // The largest |x| as 16 lanes' largest, then theirs (a max is the same in any order).
  const int lanes = s.in % 16 == 0 ? 16 : 1;
  RDom chunk(0, int(s.in) / lanes, "chunk"), across(0, lanes, "across");
  L.laneMax(lane, rb) = 0.0f;
  L.laneMax(lane, rb) = max(L.laneMax(lane, rb), abs(L.x(chunk * lanes + lane, xrow(rb))));
  L.xMax(rb) = maximum(L.laneMax(across, rb));
  L.xScale(rb) = L.xMax(rb) / 127.0f;
  L.xInverse(rb) = 127.0f / L.xMax(rb);
  Expr q = clamp(round(L.x(i, xrow(rb)) * L.xInverse(rb)), -127.0f, 127.0f);
  Expr qi = select(L.xScale(rb) > 0.0f, cast<int>(q), 0);
  L.xq(i, rb) = dot == Int8Dot::U8S8Quads  ? cast<uint8_t>(qi + 128)
                : dot == Int8Dot::S16Pairs ? cast<int16_t>(qi)
                                           : cast<int8_t>(qi);
}

// One int8 product of a sweep. The weights are int8 quads ([out / P * in / 4, P * 4]) and a sweep
// goes over quads of k (kq.y): each quad's four products summed by one dot-product instruction
// (kq.x, vectorized with the outputs: 4 x 16 bytes in, 16 sums out). In pairs (vpmaddwd, smull +
// sadalp), each pair's two (kh.x); the quad's pairs, h, are vectorized with the outputs too, and
// added in the epilogue.
Expr int8Product(Linear& L, const KernelSpec& s, Int8Dot dot, ImageParam& m) {
  const int P = int(s.panel);
  Var o = L.o, r = L.r;
  if (inPairs(dot)) {
    Expr j = 2 * L.h + L.kh.x;
    Expr wv = cast<int16_t>(m((o % P) * 4 + j, (o / P) * int(s.in / 4) + L.kh.y));
    Expr xv = cast<int16_t>(L.xq(L.kh.y * 4 + j, r));
    // vpmaddwd multiplies i16s into i32s; smull multiplies s8s into i16s (|product| < 2^14).
    return dot == Int8Dot::S16Pairs ? cast<int32_t>(xv) * cast<int32_t>(wv) : cast<int32_t>(xv * wv);
  }
  Expr wv = m((o % P) * 4 + L.kq.x, (o / P) * int(s.in / 4) + L.kq.y);
  return cast<int32_t>(L.xq(L.kq.y * 4 + L.kq.x, r)) * cast<int32_t>(wv);
}

// The matmul, its accumulators (gate, and up for SwiGLU) and the epilogue: bias, RoPE, GELU or
// SwiGLU, residual.
void defineLinear(Linear& L, const KernelSpec& s, const LinearSchedule& sch) {
  // Weights are packed transposed ([in, out], out fastest), so a vector of outputs takes one FMA
  // per input element; in panels of P columns, a block's sweep over k reads one stream a panel.
  L.k = RDom(0, int(s.in));
  auto weightAt = [&](ImageParam& m, Expr col, Expr kk) -> Expr {
    if (s.weightRows) return m(kk, col);
    if (!s.panel) return m(col, kk);
    const int P = int(s.panel);
    return m(col % P, (col / P) * int(s.in) + kk);
  };
  // bf16: a sweep over pairs of k (kp.y), each pair's two products summed by one dot-product
  // instruction (kp.x, vectorized with the outputs: 2 x 16 lanes in, 16 out). The weights are
  // packed in pairs ([out / P * in / 2, P * 2]); the input rows are rounded to bf16 by `xb`, a
  // Func of each sweep's own, filled a chunk of k at a time.
  L.kp = RDom(0, 2, 0, int(s.in / 2), "kp");
  L.kq = RDom(0, 4, 0, int(s.in / 4), "kq");
  L.kh = RDom(0, 2, 0, int(s.in / 4), "kh");
  // A register block computes whole row groups. Where the batch has fewer rows than a group,
  // the rows past it read the last row again (their results are never stored), so that x is
  // read inside its extent; otherwise the last group is shifted inwards and every row is real.
  L.enoughRows = L.x.dim(1).extent() >= std::max(sch.rows, 1);
  Expr last = L.x.dim(1).min() + L.x.dim(1).extent() - 1;
  auto xrow = [&](Expr row) { return select(L.enoughRows, row, clamp(row, L.x.dim(1).min(), last)); };
  Var o = L.o, r = L.r;
  const Int8Dot dot = sch.int8;
  if (s.int8()) quantizeRows(L, s, dot, xrow);
  auto product = [&](ImageParam& m, Func& xb) -> Expr {
    if (s.int8()) return int8Product(L, s, dot, m);
    if (!s.bf16()) return L.x(L.k, xrow(r)) * weightAt(m, o, L.k);
    const int P = int(s.panel);
    Var i("i"), rb("rb");
    xb(i, rb) = cast(BFloat(16), L.x(i, xrow(rb)));
    Expr wv = m((o % P) * 2 + L.kp.x, (o / P) * int(s.in / 2) + L.kp.y);
    return cast<float>(wv) * cast<float>(xb(L.kp.y * 2 + L.kp.x, r));
  };
  // A column's value after the sums: int8's sums taken back to the inputs' and weights' scales,
  // the u8 offset taken out (128 x the column's row sum) and the bias added.
  auto value = [&](Func& acc, ImageParam& scales, ImageParam& b, bool hasBias, Expr col) -> Expr {
    if (!s.int8()) return acc(col, r);
    Expr sum = acc(col, r);
    if (dot == Int8Dot::U8S8Quads) sum -= 128 * cast<int32_t>(scales(col, 1));
    Expr v = cast<float>(sum) * (L.xScale(r) * scales(col, 0));
    return hasBias ? v + b(col) : v;
  };
  // The sums over k: int8's start at 0 (the bias is added after the scales).
  auto sums = [&](Func& acc, Func& pairs, ImageParam& m, Func& xb, bool hasBias, ImageParam& b) {
    if (s.int8() && inPairs(dot)) {
      pairs(L.h, o, r) = 0;
      pairs(L.h, o, r) += product(m, xb);
      acc(o, r) = pairs(0, o, r) + pairs(1, o, r);
      return;
    }
    if (s.int8())
      acc(o, r) = 0;
    else
      acc(o, r) = hasBias ? b(o) : 0.0f;
    acc(o, r) += product(m, xb);
  };
  sums(L.acc, L.accPairs, L.w, L.xbGate, s.bias, L.bias);
  Expr y = value(L.acc, L.wscale, L.bias, s.bias, o);
  if (s.act == Activation::swiglu) {
    sums(L.accu, L.accuPairs, L.wu, L.xbUp, s.biasUp, L.biasu);
    const Expr gatedUp[] = {applyFn(eltwise::Fn::silu, &y), value(L.accu, L.wuscale, L.biasu, s.biasUp, o)};
    y = applyFn(eltwise::Fn::mul, gatedUp);
  } else if (s.act == Activation::gelu) {
    y = applyFn(eltwise::Fn::gelu, &y);
  }
  if (s.ropeHeads > 0) {
    // Rotation pairs: in each group of G columns (a head, or 16 interleaved ones: KernelSpec.h)
    // column i < G/2 pairs with i + G/2. The partner's index is written so that bounds inference
    // keeps it inside the group, and so inside a block.
    const int hd = int(s.out / s.ropeHeads), G = int(ropePairGroup(s));
    Expr i = o % G;
    Expr first = i < G / 2;
    Expr partner = value(L.acc, L.wscale, L.bias, s.bias, (o / G) * G + (i + G / 2) % G);
    Expr angle = (o % hd) / G * (G / 2) + o % (G / 2);
    Expr p = clamp(L.tokpos(r), 0, L.rcos.dim(1).extent() - 1);
    y = y * L.rcos(angle, p) + select(first, -partner, partner) * L.rsin(angle, p);
  }
  if (s.residual) y = L.res(L.o, L.r) + y;
  if (!s.program.empty()) y = programValue(s.program, [&](int i) { return i == 0 ? y : L.in[i - 1](L.o, L.r); });
  L.out(L.o, L.r) = y;
}

// The output's loops when blocked: tasks of row ranges times column chunks; in a task, for each
// block of columns, groups of rows sweep k with their accumulators in registers while the
// block's weight panel stays in cache. `tail`: how the last row group is made whole.
void scheduleBlocks(Linear& L, Stage st, const KernelSpec& s, const LinearSchedule& sch, TailStrategy tail) {
  Var g("g"), ro("ro"), rg("rg"), rr("rr"), ob("ob"), oc("oc"), task("task");
  // Ranges of at most taskGroups row groups, as even as the batch allows (numbered chunks first,
  // the threads sweep each chunk of weights together only while their ranges are alike).
  Expr groups = (L.x.dim(1).extent() + sch.rows - 1) / sch.rows;
  Expr ranges = (groups + sch.taskGroups - 1) / sch.taskGroups;
  Expr perRange = max((groups + ranges - 1) / ranges, 1);
  st.split(L.r, g, rr, sch.rows, tail).split(g, ro, rg, perRange, TailStrategy::GuardWithIf);
  const int width = sch.vecs * sch.lanes;  // columns a block
  Var oo("oo"), oi("oi");
  st.split(L.o, oo, oi, width).split(oo, oc, ob, int(s.out / width) / sch.chunks);
  // int8: a row group's inputs are quantized once for the chunk's column blocks (their int8
  // weights stay in cache meanwhile), so the groups go outside the blocks.
  if (sch.rowsFirst)
    s.int8() ? st.reorder(oi, rr, ob, rg, oc, ro).fuse(oc, ro, task)
             : st.reorder(oi, rr, rg, ob, oc, ro).fuse(oc, ro, task);
  else
    s.int8() ? st.reorder(oi, rr, ob, rg, ro, oc).fuse(ro, oc, task)
             : st.reorder(oi, rr, rg, ob, ro, oc).fuse(ro, oc, task);
  st.vectorize(oi, sch.lanes).parallel(task);
}

void scheduleLinear(Linear& L, const KernelSpec& s, const LinearSchedule& sch) {
  L.out.bound(L.o, 0, int(s.out));
  LoopLevel at, task;
  if (sch.blocked) {
    scheduleBlocks(L, L.out.specialize(L.enoughRows), s, sch, TailStrategy::ShiftInwards);
    scheduleBlocks(L, L.out, s, sch, TailStrategy::GuardWithIf);
    at = LoopLevel(L.out, Var(s.int8() ? "ob" : "rg"));
    task = LoopLevel(L.out, Var("rg"));
  } else {
    Var ro("ro"), ri("ri");
    L.out.split(L.r, ro, ri, sch.tileRows, TailStrategy::GuardWithIf).parallel(ro).vectorize(L.o, sch.lanes);
    at = task = LoopLevel(L.out, ro);
  }
  if (s.int8()) {  // a row group's rows quantized once, for every column block it computes
    for (Func* f : {&L.xMax, &L.xScale, &L.xInverse}) f->compute_at(task).store_in(MemoryType::Stack);
    L.laneMax.compute_at(task).store_in(MemoryType::Stack);
    if (s.in % 16 == 0) L.laneMax.vectorize(L.laneMax.args()[0], 16).update().vectorize(L.laneMax.args()[0], 16);
    L.xq.compute_at(task).store_in(MemoryType::Stack).vectorize(L.xq.args()[0], 16, TailStrategy::GuardWithIf);
  }
  const bool pairs = s.int8() && inPairs(sch.int8);
  const std::vector<Func*> sums =
      pairs ? std::vector<Func*>{&L.accPairs, &L.accuPairs} : std::vector<Func*>{&L.acc, &L.accu};
  for (Func* f : sums) {
    if (!f->defined()) continue;
    f->compute_at(at).store_in(MemoryType::Stack).vectorize(L.o, sch.lanes);
    if (pairs) {
      f->bound(L.h, 0, 2).vectorize(L.h);
      f->update()
          .reorder(L.kh.x, L.h, L.o, L.r, L.kh.y)
          .atomic()
          .vectorize(L.kh.x)
          .vectorize(L.h)
          .vectorize(L.o, sch.lanes);
    } else if (s.int8()) {
      f->update().reorder(L.kq.x, L.o, L.r, L.kq.y).atomic().vectorize(L.kq.x).vectorize(L.o, sch.lanes);
    } else if (s.bf16()) {
      RVar ko("ko"), ki("ki");
      f->update()
          .split(L.kp.y, ko, ki, sch.kChunk)
          .reorder(L.kp.x, L.o, L.r, ki, ko)
          .atomic()
          .vectorize(L.kp.x)
          .vectorize(L.o, sch.lanes);
      Func& xb = f == &L.acc ? L.xbGate : L.xbUp;
      xb.compute_at(*f, ko).store_in(MemoryType::Stack);
      if ((2 * sch.kChunk) % (2 * sch.lanes) == 0) xb.vectorize(xb.args()[0], 2 * sch.lanes);
    } else {
      f->update().reorder(L.o, L.r, L.k).vectorize(L.o, sch.lanes);
    }
    if (!sch.blocked) continue;
    // A group's accumulators unrolled into registers, whole groups (the last too).
    f->update().unroll(L.o).unroll(L.r);
    f->bound_extent(L.r, sch.rows);
  }
}

HalideKernel linear(const KernelSpec& s, const IsaInfo& isa) {
  // The input rows come normed when a norm is in front (kime-fuse makes it a kernel of its own).
  Linear L(s.bf16() ? BFloat(16) : s.int8() ? Int(8) : Float(32));
  const LinearSchedule sch = linearSchedule(s, isa);
  defineLinear(L, s, sch);
  scheduleLinear(L, s, sch);
  return {Pipeline(L.out),
          {L.x, L.w, L.bias, L.wu, L.biasu, L.wscale, L.wuscale, L.tokpos, L.rcos, L.rsin, L.res, L.in[0], L.in[1],
           L.in[2]}};
}

HalideKernel attention(const KernelSpec& s, const AttentionSchedule& sch) {
  // qseq: the sequence of each query row (the tokens', or the output rows')
  ImageParam q(Float(32), 2, "q"), k(Float(32), 2, "k"), v(Float(32), 2, "v"), qseq(Int(32), 1, "qseq"),
      cu(UInt(32), 1, "cu");
  const int hd = int(s.in / s.heads), group = int(s.heads / s.kvHeads);
  Var c("c"), t("t"), h("h"), d("d"), jv("jv");
  // The query's sequence: its tokens are [start, start + len).
  Expr seq = clamp(qseq(t), 0, cu.dim(0).extent() - 2);
  Expr start = cast<int>(cu(seq));
  Expr len = cast<int>(cu(seq + 1)) - cast<int>(cu(seq));
  RDom j(0, int(s.maxLen));
  j.where(j < len);
  Expr kh = h / group;
  Func qs("qs");
  qs(d, h, t) = q(h * hd + d, t) * float(s.scale);
  // Per (query, head): the scores of the sequence's keys once, into a row of the bucket's
  // longest sequence on the stack (no [T, T] buffer); their max; the exponentials and their sum;
  // then the weighted sum of values. Every loop over keys is trimmed to the sequence by its
  // `where`; the max, the exponentials and the sum run over vectors of W keys (li), the last
  // vector masked.
  const int W = sch.keyLanes;
  Func dot("dot"), sc("scores"), mxv("mx_lanes"), mx("mx"), p("p"), denv("den_lanes"), den("den"), num("num");
  Var li("li"), jtv("jtv");
  RDom jt(0, int((s.maxLen + W - 1) / W), "jt");
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

// The norm of each row (the rows linears read): the row's statistics, then the row normed.
HalideKernel normKernel(const KernelSpec& s, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), ng(Float(32), 1, "norm_weight"), nb(Float(32), 1, "norm_bias");
  Var c("c"), r("r");
  Func xin("xin"), stat("stat");
  xin(c, r) = x(c, r);
  Func xn = normRows(s.norm, s.eps, xin, s.in, &ng, &nb, c, r, stat, sch.lanes);
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

// The output rows of kime-prune-rows: row r is x's row rows[r], or zeros where that is -1 (an
// empty sequence's first row).
HalideKernel selectRows(const KernelSpec& s, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), rows(Int(32), 1, "rows");
  Var c("c"), r("r");
  Func out("select");
  out(c, r) = select(rows(r) >= 0, x(c, clamp(rows(r), 0, x.dim(1).extent() - 1)), 0.0f);
  out.bound(c, 0, int(s.out)).vectorize(c, sch.lanes);
  return {Pipeline(out), {x, rows}};
}

// Attention over the tokens, a tile of Q queries (the schedule's) per task and head:
// the tile's keys are those of the sequences its queries are in (one sequence but at a boundary),
// each masked to its own query's. Scores are vectors over the tile's queries, so q.k is vertical
// FMAs (the tile's queries transposed once, a key's element broadcast) and p.v too (a value
// broadcast per head element), never a sum across lanes. Two passes over the keys in blocks of
// KB: the first keeps each query's running max and the sum of exponentials (rescaled when the max
// grows), the second the weighted values; each computes its block's scores (cheaper than a
// [queries, keys] buffer, which for a bucket's longest sequence would not fit on the stack).
HalideKernel attentionTiles(const KernelSpec& s, const AttentionSchedule& sch) {
  ImageParam q(Float(32), 2, "q"), k(Float(32), 2, "k"), v(Float(32), 2, "v"), qseq(Int(32), 1, "qseq"),
      cu(UInt(32), 1, "cu");
  const int hd = int(s.in / s.heads), group = int(s.heads / s.kvHeads), Q = sch.queries, KB = sch.keyBlock;
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
  qT(qi, d, h, tile) = q(h * hd + d, tq) * float(s.scale);
  RDom e(0, hd, "e");
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
  RDom rb(0, int((s.maxLen + KB - 1) / KB), "rb");
  rb.where(rb * KB < klen);
  auto own = [&](Expr key) { return key >= lo(qi, tile) && key < hi(qi, tile); };
  // A finite stand-in for -inf: exp(none - none) is 1, not NaN, while a query has no key yet.
  const float none = -1e30f;
  Func ml("max_sum");
  ml(qi, h, tile) = Tuple(none, 0.0f);
  Expr mOld = ml(qi, h, tile)[0], bmax = none;
  std::vector<Expr> s1;
  for (int x = 0; x < KB; ++x) {
    Expr key = rb * KB + x;
    s1.push_back(select(own(key), sc1(qi, key, h, tile), none));
    bmax = max(bmax, s1.back());
  }
  Expr mNew = max(mOld, bmax), sum = ml(qi, h, tile)[1] * exp(mOld - mNew);
  for (int x = 0; x < KB; ++x) sum += select(own(rb * KB + x), exp(s1[size_t(x)] - mNew), 0.0f);
  ml(qi, h, tile) = Tuple(mNew, sum);
  Func p("p"), num("num");
  p(qi, j, h, tile) = select(own(j), exp(sc2(qi, j, h, tile) - ml(qi, h, tile)[0]), 0.0f);
  num(qi, d, h, tile) = 0.0f;
  Expr acc = num(qi, d, h, tile);
  for (int x = 0; x < KB; ++x) {
    Expr key = rb * KB + x;
    acc += p(qi, key, h, tile) * v(kh * hd + d, keyRow(key, v));
  }
  num(qi, d, h, tile) = acc;
  Func out("attention");
  out(c, t) = num(t % Q, c % hd, c / hd, t / Q) / ml(t % Q, c / hd, t / Q)[1];

  out.bound(c, 0, int(s.in));
  Var to("to"), ti("ti"), ho("ho"), di("di"), task("task");
  out.split(t, to, ti, Q, TailStrategy::GuardWithIf)
      .split(c, ho, di, hd)
      .reorder(di, ti, ho, to)
      .fuse(ho, to, task)
      .parallel(task)
      .vectorize(di, sch.lanes);
  for (Func* f : {&lo, &hi, &qT, &ml, &num}) f->compute_at(out, task).store_in(MemoryType::Stack).vectorize(qi);
  ml.update().reorder(qi, rb).vectorize(qi);
  // Blocks outermost, each head element's sum in a register across the block's keys. (Halide
  // trims the loop over blocks to the tile's keys only in the RDom's default order, as in the
  // first pass; here the blocks past them are each one test.)
  num.update().reorder(qi, d, rb).vectorize(qi);
  sc1.compute_at(ml, rb).store_in(MemoryType::Stack).vectorize(qi).unroll(j);
  sc1.update().reorder(qi, j, e).vectorize(qi).unroll(j);
  p.compute_at(num, rb).store_in(MemoryType::Stack).vectorize(qi).unroll(j);
  sc2.compute_at(num, rb).store_in(MemoryType::Stack).vectorize(qi).unroll(j);
  sc2.update().reorder(qi, j, e).vectorize(qi).unroll(j);
  return {Pipeline(out), {q, k, v, qseq, cu}};
}

HalideKernel head(const KernelSpec& s, const RowSchedule& sch) {
  ImageParam x(Float(32), 2, "x"), ng(Float(32), 1, "norm_weight"), nb(Float(32), 1, "norm_bias"),
      rows(Int(32), 1, "rows"), w(Float(32), 2, "weight"), bias(Float(32), 1, "bias");
  Var c("c"), n("n"), o("o");
  // A row index of -1 (an empty sequence's first row) reads zeros after the norm.
  Expr ri = rows(n);
  Func xr("xr");
  xr(c, n) = x(c, clamp(ri, 0, x.dim(1).extent() - 1));
  Func stat("stat");
  Func xn = normRows(s.norm, s.eps, xr, s.in, &ng, &nb, c, n, stat, sch.lanes);
  RDom k(0, int(s.in));
  Func acc("acc");
  acc(o, n) = s.bias ? bias(o) : 0.0f;
  acc(o, n) += select(ri >= 0, xn(k, n), 0.0f) * w(o, k);
  Func out("head");
  out(o, n) = acc(o, n);
  out.bound(o, 0, int(s.out));
  xn.compute_at(out, n).store_in(MemoryType::Stack);
  if (s.norm != NormKind::none) stat.compute_at(out, n).store_in(MemoryType::Stack);
  acc.compute_at(out, n).store_in(MemoryType::Stack);
  return {Pipeline(out), {x, ng, nb, rows, w, bias}};
}

HalideKernel buildAnyKernel(const KernelSpec& s, const IsaInfo& isa) {
  if (s.kind == KIME_CLASS_EMBED) return embed(s, isa);
  if (s.kind == KIME_CLASS_LINEAR) return linear(s, isa);
  if (s.kind == KIME_CLASS_ATTENTION) {
    const AttentionSchedule sch = attentionSchedule(s, isa);
    return sch.tiled ? attentionTiles(s, sch) : attention(s, sch);
  }
  if (s.kind == KIME_CLASS_HEAD) return head(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_SELECT) return selectRows(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_NORM) return normKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_GATHER) return gatherKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_ELTWISE) return eltwiseKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_ROPE) return ropeKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_POOL) return poolKernel(s, rowSchedule(s, isa));
  throw CompileError(std::string("internal: no CPU kernel for class \"") + className(s.kind) + "\"");
}

}  // namespace

HalideKernel buildKernel(const KernelSpec& s, const IsaInfo& isa) {
  HalideKernel k = buildAnyKernel(s, isa);
  k.args = slotArgs(s, k.args);
  return k;
}

std::vector<Argument> slotArgs(const KernelSpec& s, const std::vector<Argument>& params) {
  // plan.h's slots of the spec, in order, but the output (the pipeline's own).
  std::vector<kime_arg_slot> slots = argSlots(s);
  slots.pop_back();
  std::vector<Argument> out;
  for (const kime_arg_slot& slot : slots) {
    auto p = std::find_if(params.begin(), params.end(), [&](const Argument& a) { return a.name == slot.name; });
    if (p == params.end())
      throw CompileError(std::string("internal: the CPU ") + className(s.kind) + " kernel has no parameter \"" +
                         slot.name + "\"");
    // A linear's weights are bf16 with --cpu-precision bf16, int8 with int8; every other type is the slot's.
    const bool narrowWeight = (s.bf16() && p->type == BFloat(16)) || (s.int8() && p->type == Int(8));
    if (!narrowWeight &&
        (p->type.code() != kime_dtype_codes[slot.dtype] || p->type.bits() != kime_dtype_bits[slot.dtype]))
      throw CompileError(std::string("internal: the CPU ") + className(s.kind) + " kernel's \"" + slot.name +
                         "\" is not " + kime_dtype_names[slot.dtype]);
    out.push_back(*p);
  }
  return out;
}

}  // namespace kime::cpu
