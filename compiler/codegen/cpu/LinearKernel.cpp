// The linear kernel: its matmul in f32, bf16 pairs or int8 quads, its epilogue, its schedule.
#include "ClassKernels.h"
#include "GenericKernels.h"

namespace kime::cpu {

// Inputs fewer than this: the linear's sum over them is one LLVM would unroll whole.
constexpr int64_t kShortSum = 64;

using namespace Halide;

namespace {

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
  // int8 by i16 pairs: the sums of each quad's first pair (h = 0) and of its second (h = 1);
  // by u8 x s8 pairs, a quad's pair sums in i16 (`two`: a pair's products), for vpmaddwd by ones.
  Func accPairs{"acc_pairs"}, accuPairs{"acc_up_pairs"};
  Var h{"h"}, quad{"quad"};
  RDom k, kp, kq, kh, two;
  // u8 x s8 pairs: the i16 ones (of pair h) that vpmaddwd adds each lane's pair with. Ones the
  // simplifier cannot fold (the runtime's row strides are never negative) nor make one broadcast
  // (they differ by h), since it takes a multiply by either out of the sum, and with it Halide's
  // vpmaddwd pattern.
  Expr ones(Expr h) { return cast<int16_t>(x.dim(1).stride() >= h - 1); }
  // The batch fills at least one register block's rows (the schedule's specialization).
  Expr enoughRows;
};

// int8 (quant/Int8.h): each row's scale is its largest |x| / 127; its inputs are rounded to
// whole multiples of it in [-127, 127] (times 127 over the largest: a multiply, not a division),
// offset by 128 for vpdpbusd and vpmaddubsw (their u8 operand), widened to i16 for vpmaddwd (so
// that each row's quad is one broadcast load).
void quantizeRows(Linear& L, const KernelShape& s, const LinearSpec& l, Int8Dot dot,
                  const std::function<Expr(Expr)>& xrow) {
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
  L.xq(i, rb) = offsetsInputs(dot)         ? cast<uint8_t>(qi + 128)
                : dot == Int8Dot::S16Pairs ? cast<int16_t>(qi)
                                           : cast<int8_t>(qi);
}

// u8 x s8 pairs (vpmaddubsw): a quad's two pair sums (h), each of x + 128 (u8) by the weights
// (s8), added in i16. int8pairs bounds each pair's |w| to 128 in sum, so no pair of 255 x 128
// saturates: the sums are exact.
void quadPairs(Linear& L, const KernelShape& s, const LinearSpec& l, ImageParam& m, Func& pairs) {
  const int P = int(l.panel);
  Var o = L.o, r = L.r;
  Expr j = 2 * L.h + L.two;
  Expr wv = m((o % P) * 4 + j, (o / P) * int(s.in / 4) + L.quad);
  Expr xv = L.xq(L.quad * 4 + j, r);
  Expr product = cast<int16_t>(xv) * cast<int16_t>(wv);
  pairs(L.h, o, r, L.quad) = cast<int16_t>(0);
  pairs(L.h, o, r, L.quad) = Internal::saturating_add(pairs(L.h, o, r, L.quad), product);
}

// One int8 product of a sweep. The weights are int8 quads ([out / P * in / 4, P * 4]) and a sweep
// goes over quads of k (kq.y): each quad's four products summed by one dot-product instruction
// (kq.x, vectorized with the outputs: 4 x 16 bytes in, 16 sums out). In pairs (vpmaddwd, smull +
// sadalp), each pair's two (kh.x); the quad's pairs, h, are vectorized with the outputs too, and
// added in the epilogue.
Expr int8Product(Linear& L, const KernelShape& s, const LinearSpec& l, Int8Dot dot, ImageParam& m) {
  const int P = int(l.panel);
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
void defineLinear(Linear& L, const KernelShape& s, const LinearSpec& l, const LinearSchedule& sch) {
  // Weights are packed transposed ([in, out], out fastest), so a vector of outputs takes one FMA
  // per input element; in panels of P columns, a block's sweep over k reads one stream a panel.
  // A short sum's extent read from x, not a constant: LLVM unrolls a short constant sum whole,
  // and Halide's reassociating flags let it order each row's terms its own way in each version of
  // the loop, so that a row's bits would follow its place in the batch (docs/batch.md). Longer
  // sums stay loops over k (a constant keeps NEON's 6 x 4 block free of spills).
  L.k = s.in < kShortSum ? RDom(0, L.x.dim(0).extent()) : RDom(0, int(s.in));
  auto weightAt = [&](ImageParam& m, Expr col, Expr kk) -> Expr {
    if (l.weightRows) return m(kk, col);
    if (!l.panel) return m(col, kk);
    const int P = int(l.panel);
    return m(col % P, (col / P) * int(s.in) + kk);
  };
  // bf16: a sweep over pairs of k (kp.y), each pair's two products summed by one dot-product
  // instruction (kp.x, vectorized with the outputs: 2 x 16 lanes in, 16 out). The weights are
  // packed in pairs ([out / P * in / 2, P * 2]); the input rows are rounded to bf16 by `xb`, a
  // Func of each sweep's own, filled a chunk of k at a time.
  L.kp = RDom(0, 2, 0, int(s.in / 2), "kp");
  L.kq = RDom(0, 4, 0, int(s.in / 4), "kq");
  L.kh = RDom(0, 2, 0, int(s.in / 4), "kh");
  L.two = RDom(0, 2, "two");
  // A register block computes whole row groups. Where the batch has fewer rows than a group,
  // the rows past it read the last row again (their results are never stored), so that x is
  // read inside its extent; otherwise the last group is shifted inwards and every row is real.
  L.enoughRows = L.x.dim(1).extent() >= std::max(sch.rows, 1);
  Expr last = L.x.dim(1).min() + L.x.dim(1).extent() - 1;
  auto xrow = [&](Expr row) { return select(L.enoughRows, row, clamp(row, L.x.dim(1).min(), last)); };
  Var o = L.o, r = L.r;
  const Int8Dot dot = sch.int8;
  if (l.int8()) quantizeRows(L, s, l, dot, xrow);
  auto product = [&](ImageParam& m, Func& xb) -> Expr {
    if (l.int8()) return int8Product(L, s, l, dot, m);
    if (!l.bf16()) return L.x(L.k, xrow(r)) * weightAt(m, o, L.k);
    const int P = int(l.panel);
    Var i("i"), rb("rb");
    xb(i, rb) = cast(BFloat(16), L.x(i, xrow(rb)));
    Expr wv = m((o % P) * 2 + L.kp.x, (o / P) * int(s.in / 2) + L.kp.y);
    return cast<float>(wv) * cast<float>(xb(L.kp.y * 2 + L.kp.x, r));
  };
  // A column's value after the sums: int8's sums taken back to the inputs' and weights' scales,
  // the u8 offset taken out (128 x the column's row sum) and the bias added.
  auto value = [&](Func& acc, ImageParam& scales, ImageParam& b, bool hasBias, Expr col) -> Expr {
    if (!l.int8()) return acc(col, r);
    Expr sum = acc(col, r);
    if (offsetsInputs(dot)) sum -= 128 * cast<int32_t>(scales(col, 1));
    Expr v = cast<float>(sum) * (L.xScale(r) * scales(col, 0));
    return hasBias ? v + b(col) : v;
  };
  // The sums over k: int8's start at 0 (the bias is added after the scales).
  auto sums = [&](Func& acc, Func& pairs, ImageParam& m, Func& xb, bool hasBias, ImageParam& b) {
    if (l.int8() && dot == Int8Dot::U8S8Pairs) {  // kh: a quad's pairs (x), the quads (y)
      quadPairs(L, s, l, m, pairs);
      acc(o, r) = 0;
      acc(o, r) += cast<int32_t>(pairs(L.kh.x, o, r, L.kh.y)) * cast<int32_t>(L.ones(L.kh.x));
      return;
    }
    if (l.int8() && inPairs(dot)) {
      pairs(L.h, o, r) = 0;
      pairs(L.h, o, r) += product(m, xb);
      acc(o, r) = pairs(0, o, r) + pairs(1, o, r);
      return;
    }
    if (l.int8())
      acc(o, r) = 0;
    else
      acc(o, r) = hasBias ? b(o) : 0.0f;
    acc(o, r) += product(m, xb);
  };
  sums(L.acc, L.accPairs, L.w, L.xbGate, l.bias, L.bias);
  Expr y = value(L.acc, L.wscale, L.bias, l.bias, o);
  if (l.act == Activation::swiglu) {
    sums(L.accu, L.accuPairs, L.wu, L.xbUp, l.biasUp, L.biasu);
    const Expr gatedUp[] = {applyFn(eltwise::Fn::silu, &y), value(L.accu, L.wuscale, L.biasu, l.biasUp, o)};
    y = applyFn(eltwise::Fn::mul, gatedUp);
  } else if (l.act == Activation::gelu) {
    y = applyFn(eltwise::Fn::gelu, &y);
  }
  if (l.rope.heads > 0) {
    // Rotation pairs: in each group of G columns (a head, or 16 interleaved ones: KernelSpec.h)
    // column i < G/2 pairs with i + G/2. The partner's index is written so that bounds inference
    // keeps it inside the group, and so inside a block.
    const int hd = int(s.out / l.rope.heads), G = int(ropePairGroup(l.rope, s.out));
    Expr i = o % G;
    Expr first = i < G / 2;
    Expr partner = value(L.acc, L.wscale, L.bias, l.bias, (o / G) * G + (i + G / 2) % G);
    Expr angle = (o % hd) / G * (G / 2) + o % (G / 2);
    Expr p = clamp(L.tokpos(r), 0, L.rcos.dim(1).extent() - 1);
    y = y * L.rcos(angle, p) + select(first, -partner, partner) * L.rsin(angle, p);
  }
  if (l.residual) y = L.res(L.o, L.r) + y;
  if (!l.program.empty()) y = programValue(l.program, [&](int i) { return i == 0 ? y : L.in[i - 1](L.o, L.r); });
  // The whole epilogue in the order written (int8's scales, the activation, RoPE, the residual,
  // the program): the rows of a batch run through several versions of the loop (the register
  // blocks' specialization, the shifted last group, the guarded rows), and Halide's flags let
  // LLVM fuse and regroup each version's float ops its own way, so that a row's bits would
  // follow its place (docs/batch.md). The sums over k are Funcs of their own, not in it.
  L.out(L.o, L.r) = strict_float(y);
}

// The output's loops when blocked: tasks of row ranges times column chunks; in a task, for each
// block of columns, groups of rows sweep k with their accumulators in registers while the
// block's weight panel stays in cache. `tail`: how the last row group is made whole.
void scheduleBlocks(Linear& L, Stage st, const KernelShape& s, const LinearSpec& l, const LinearSchedule& sch,
                    TailStrategy tail) {
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
    l.int8() ? st.reorder(oi, rr, ob, rg, oc, ro).fuse(oc, ro, task)
             : st.reorder(oi, rr, rg, ob, oc, ro).fuse(oc, ro, task);
  else
    l.int8() ? st.reorder(oi, rr, ob, rg, ro, oc).fuse(ro, oc, task)
             : st.reorder(oi, rr, rg, ob, ro, oc).fuse(ro, oc, task);
  st.vectorize(oi, sch.lanes).parallel(task);
}

// u8 x s8 pairs: a quad's pair sums computed where the sweep takes the quad, in registers.
void scheduleQuadPairs(Linear& L, Func& pairs, Func& acc, const LinearSchedule& sch) {
  pairs.compute_at(acc, L.kh.y).store_in(MemoryType::Stack).bound(L.h, 0, 2);
  pairs.vectorize(L.h).vectorize(L.o, sch.lanes);
  if (sch.blocked) pairs.unroll(L.o).unroll(L.r);
  Stage sweep = pairs.update();
  // Halide cannot prove a saturating add associative; a pair of two products has one order.
  sweep.reorder(L.two, L.h, L.o, L.r, L.quad).atomic(true).vectorize(L.two).vectorize(L.h).vectorize(L.o, sch.lanes);
  if (sch.blocked) sweep.unroll(L.o).unroll(L.r);
}

void scheduleLinear(Linear& L, const KernelShape& s, const LinearSpec& l, const LinearSchedule& sch) {
  L.out.bound(L.o, 0, int(s.out));
  LoopLevel at, task;
  if (sch.blocked) {
    scheduleBlocks(L, L.out.specialize(L.enoughRows), s, l, sch, TailStrategy::ShiftInwards);
    scheduleBlocks(L, L.out, s, l, sch, TailStrategy::GuardWithIf);
    at = LoopLevel(L.out, Var(l.int8() ? "ob" : "rg"));
    task = LoopLevel(L.out, Var("rg"));
  } else {
    Var ro("ro"), ri("ri");
    L.out.split(L.r, ro, ri, sch.tileRows, TailStrategy::GuardWithIf).parallel(ro).vectorize(L.o, sch.lanes);
    at = task = LoopLevel(L.out, ro);
  }
  if (l.int8()) {  // a row group's rows quantized once, for every column block it computes
    for (Func* f : {&L.xMax, &L.xScale, &L.xInverse}) f->compute_at(task).store_in(MemoryType::Stack);
    L.laneMax.compute_at(task).store_in(MemoryType::Stack);
    if (s.in % 16 == 0) L.laneMax.vectorize(L.laneMax.args()[0], 16).update().vectorize(L.laneMax.args()[0], 16);
    L.xq.compute_at(task).store_in(MemoryType::Stack).vectorize(L.xq.args()[0], 16, TailStrategy::GuardWithIf);
  }
  const bool pairs = l.int8() && inPairs(sch.int8);
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
    } else if (sch.int8 == Int8Dot::U8S8Pairs) {
      f->update().reorder(L.kh.x, L.o, L.r, L.kh.y).atomic().vectorize(L.kh.x).vectorize(L.o, sch.lanes);
      scheduleQuadPairs(L, f == &L.acc ? L.accPairs : L.accuPairs, *f, sch);
    } else if (l.int8()) {
      f->update().reorder(L.kq.x, L.o, L.r, L.kq.y).atomic().vectorize(L.kq.x).vectorize(L.o, sch.lanes);
    } else if (l.bf16()) {
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

}  // namespace

HalideKernel linearKernel(const KernelShape& s, const LinearSpec& l, const IsaInfo& isa) {
  // The input rows come normed when a norm is in front (kime-fuse makes it a kernel of its own).
  Linear L(l.bf16() ? BFloat(16) : l.int8() ? Int(8) : Float(32));
  const LinearSchedule sch = linearSchedule(s, l, isa);
  defineLinear(L, s, l, sch);
  scheduleLinear(L, s, l, sch);
  return {Pipeline(L.out),
          {L.x, L.w, L.bias, L.wu, L.biasu, L.wscale, L.wuscale, L.tokpos, L.rcos, L.rsin, L.res, L.in[0], L.in[1],
           L.in[2]}};
}

}  // namespace kime::cpu
