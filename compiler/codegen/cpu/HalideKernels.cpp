#include "HalideKernels.h"

#include "CpuCodegen.h"

#include <functional>

#include "support/Diagnostic.h"

namespace kime::cpu {

using namespace Halide;

namespace {

// Rows of output each parallel task computes; a row is computed the same way whatever the
// number of threads or rows, so results are bit-identical across both.
constexpr int kRowTile = 4;
// Row groups in a blocked linear kernel's parallel task: 128 rows of 8-row groups, so that a
// batch of up to 128 rows reads each weight from memory once (its tasks are column chunks), not
// once per 64 rows (base 8x16: 62 -> 57 ms; neutral at 512 rows and on small).
constexpr int kTaskGroups = 16;
// The largest weights (bytes, both of SwiGLU's) of a blocked linear whose tasks are numbered row
// range by row range (see `linear`): small's are 2 MB at most, base's 2.4 (f32) and 9.4 MB.
constexpr int64_t kRowsFirstWeightBytes = 2 << 20;

// The largest of 16/8/4/2/1 lanes that divides `width` and fits `vector`.
int lanesFor(int64_t width, int vector) {
  for (int l = vector; l > 1; l /= 2)
    if (width % l == 0) return l;
  return 1;
}

// An index read from a buffer, clamped into `table`'s rows (dimension 1) so a bad index can
// never read outside it; the batch check already refused ids past the vocabulary.
Expr rowOf(Expr i, const ImageParam& table) {
  return clamp(cast<int>(i), 0, table.dim(1).extent() - 1);
}

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
Func normRows(const std::string& kind, double eps, Func x, int64_t k, const ImageParam* g,
              const ImageParam* b, Var c, Var r, Func& stat, int vector) {
  Func out("normed");
  if (kind == "none") {
    out(c, r) = x(c, r);
    return out;
  }
  const int lanes = lanesFor(k, vector);
  Expr n = float(k);
  if (kind == "rms") {
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
    Func dev = rowSum("sum_dev", [&](Expr kk, Var rr) { return (x(kk, rr) - mean(rr)) * (x(kk, rr) - mean(rr)); },
                      k, lanes, r);
    stat(r) = Tuple(mean(r), dev(r));
    for (Func* f : {&sum, &mean, &dev}) f->compute_at(stat, r);
    Expr inv = 1.0f / sqrt(stat(r)[1] / n + float(eps));
    out(c, r) = (x(c, r) - stat(r)[0]) * inv * (*g)(c) + (*b)(c);
  }
  return out;
}

std::vector<Argument> argsOf(std::initializer_list<const ImageParam*> params) {
  std::vector<Argument> a;
  for (const ImageParam* p : params)
    if (p) a.push_back(*p);
  return a;
}

HalideKernel embed(const KernelSpec& s, int vector) {
  ImageParam ids(UInt(32), 1, "ids"), tokseq(Int(32), 1, "tokseq"), tokpos(Int(32), 1, "tokpos"),
      qtype(UInt(8), 1, "qtype"), tok(Float(32), 2, "tok"), type(Float(32), 2, "type"),
      pos(Float(32), 2, "pos");
  Var c("c"), r("r");
  Func out("embed");
  Expr seq = clamp(tokseq(r), 0, qtype.dim(0).extent() - 1);
  Expr e = tok(c, rowOf(ids(r), tok)) + type(c, rowOf(qtype(seq), type));
  if (s.learnedPos) e += pos(c, rowOf(tokpos(r), pos));
  out(c, r) = e;

  out.bound(c, 0, int(s.out));
  Var ro("ro"), ri("ri");
  out.split(r, ro, ri, kRowTile, TailStrategy::GuardWithIf).parallel(ro)
      .vectorize(c, lanesFor(s.out, vector));
  std::vector<Argument> args = argsOf({&ids, &tokseq, &tokpos, &qtype, &tok, &type});
  if (s.learnedPos) args.push_back(pos);
  return {Pipeline(out), args};
}

HalideKernel linear(const KernelSpec& s, int vector) {
  // The input rows come normed when a norm is in front (kime-fuse makes it a kernel of its own).
  const Type wt = s.bf16 ? BFloat(16) : Float(32);
  ImageParam x(Float(32), 2, "x"), w(wt, 2, "weight"), bias(Float(32), 1, "bias"),
      wu(wt, 2, "weight_up"), biasu(Float(32), 1, "bias_up"), tokpos(Int(32), 1, "tokpos"),
      rcos(Float(32), 2, "rope_cos"), rsin(Float(32), 2, "rope_sin"), res(Float(32), 2, "residual");
  Var r("r"), o("o");

  // The matmul: weights are packed transposed ([in, out], out fastest), so a vector of outputs
  // takes one FMA per input element; in panels of P columns, a block's sweep over k reads one
  // contiguous stream per panel.
  RDom k(0, int(s.in));
  auto weightAt = [&](ImageParam& m, Expr col, Expr kk) -> Expr {
    if (!s.panel) return m(col, kk);
    const int P = int(s.panel);
    return m(col % P, (col / P) * int(s.in) + kk);
  };
  // bf16: a sweep over pairs of k (kp.y), each pair's two products summed by one dot-product
  // instruction (kp.x, vectorized with the outputs: 2 x 16 lanes in, 16 out). The weights are
  // packed in pairs ([out / P * in / 2, P * 2]); the input rows are rounded to bf16 by `xb`, a
  // Func of each sweep's own, filled a chunk of k at a time.
  RDom kp(0, 2, 0, int(s.in / 2), "kp");
  // A register block computes whole row groups; past the last row it reads the last row again
  // (its results are never stored), so that x is read inside its extent.
  auto xrow = [&](Expr row) { return clamp(row, x.dim(1).min(), x.dim(1).min() + x.dim(1).extent() - 1); };
  Func xbGate("x_bf16"), xbUp("x_bf16_up");
  auto product = [&](ImageParam& m, Func& xb) -> Expr {
    if (!s.bf16) return x(k, xrow(r)) * weightAt(m, o, k);
    const int P = int(s.panel);
    Var i("i"), rb("rb");
    xb(i, rb) = cast(BFloat(16), x(i, xrow(rb)));
    Expr wv = m((o % P) * 2 + kp.x, (o / P) * int(s.in / 2) + kp.y);
    return cast<float>(wv) * cast<float>(xb(kp.y * 2 + kp.x, r));
  };
  Func acc("acc"), accu("acc_up");
  acc(o, r) = s.bias ? bias(o) : 0.0f;
  acc(o, r) += product(w, xbGate);
  Expr y = acc(o, r);
  if (s.act == "swiglu") {
    accu(o, r) = s.bias ? biasu(o) : 0.0f;
    accu(o, r) += product(wu, xbUp);
    y = y / (1.0f + exp(-y)) * accu(o, r);
  } else if (s.act == "gelu") {
    y = 0.5f * y * (1.0f + erf(y * float(M_SQRT1_2)));
  }
  const int hd = s.ropeHeads > 0 ? int(s.out / s.ropeHeads) : 0;
  if (s.ropeHeads > 0) {
    // Rotate half within each head: element i < hd/2 pairs with i + hd/2. The partner's index
    // is written so that bounds inference keeps it inside the head (and so inside a column
    // block of whole heads).
    const int half = hd / 2;
    Expr i = o % hd, j = i % half;
    Expr first = i < half;
    Expr partner = acc((o / hd) * hd + (i + half) % hd, r);
    Expr p = clamp(tokpos(r), 0, rcos.dim(1).extent() - 1);
    y = y * rcos(j, p) + select(first, -partner, partner) * rsin(j, p);
  }
  if (s.residual) y = res(o, r) + y;
  Func out("linear");
  out(o, r) = y;

  // Schedule: tasks of kTaskGroups row groups. The outputs are blocked further (with RoPE, when
  // a block holds whole heads): for each block of `vecs` output vectors, groups of `groupRows`
  // rows sweep k with their accumulators (rows x vecs) unrolled into registers, while the block's
  // weight panel stays in cache for all the groups of the task.
  const int lanes = lanesFor(s.out, vector);
  out.bound(o, 0, int(s.out));
  Var ro("ro"), ri("ri"), oo("oo"), oi("oi"), rg("rg"), rr("rr");
  // A register block, rows x vectors of accumulators; the rest of the registers hold the weight
  // vectors and the broadcast input. With RoPE a block must hold whole heads, so that each
  // output's partner is in it. SwiGLU's gate and up products are swept one after the other, each
  // with a whole block.
  auto fits = [&](int v) { return s.out % (v * lanes) == 0 && (s.ropeHeads == 0 || (v * lanes) % hd == 0); };
  int groupRows = 4, vecs = 2;  // NEON (not measured on hardware here): 8 of its 32 registers
  if (vector >= 16 && s.fewRows && linearDependsOnFewRows(s)) {
    // AVX-512 where the bucket allows at most 16 rows: 8 x 3 (24 of 32 registers). 16 rows fill
    // two groups (6-row groups would compute 18 in three), and the weights, which such a batch
    // streams from memory, are swept twice instead of three times (base 1x16 12.1 -> 9.8 ms).
    groupRows = 8;
    vecs = 3;
  } else if (vector >= 16) {
    // AVX-512: 6 x 4 (24 of 32 registers). Past 16 rows it beats 8 x 3 where both fit (base
    // 2x16 22.4 -> 21.0 ms, 8x16 58.5 -> 57.1, 8x64 229.6 -> 219.7, 128x32 1953 -> 1860).
    groupRows = 6;
    vecs = 4;
  } else if (vector == 8) {
    groupRows = 6;  // AVX2: 6 x 2 (12 of 16 registers)
    vecs = 2;
  }
  while (vecs > 1 && s.out % (vecs * lanes) != 0) vecs /= 2;
  const bool blocked = lanes > 1 && fits(vecs);
  Var at = ro, task("task"), oc("oc"), ob("ob");
  // Tasks are row ranges times column chunks. Where the weights are small (they stay in the
  // caches), the tasks are numbered range by range: the pool gives each thread a contiguous
  // share of them, so the threads split the rows as the other kernels do and mostly read rows
  // they wrote (small 8x64: 10.9 -> 9.6 ms f32, 8.0 -> 6.4 bf16). Larger weights are numbered
  // chunk by chunk, so that the threads sweep the same chunk at once and read it from memory
  // once (row ranges first there: base's MLP 6-8% slower). A few-row batch has one range: its
  // tasks are the column chunks either way.
  const int64_t weightBytes = s.in * s.out * (s.bf16 ? 2 : 4) * (s.act == "swiglu" ? 2 : 1);
  const bool rowsFirst = weightBytes <= kRowsFirstWeightBytes;
  if (blocked) {
    const int blocks = int(s.out / (vecs * lanes));
    const int chunks = blocks % 4 == 0 ? 4 : blocks % 2 == 0 ? 2 : 1;
    if (rowsFirst) {
      // Ranges of at most kTaskGroups row groups, as even as the batch allows.
      Var g("g");
      Expr groups = (out.output_buffer().dim(1).extent() + groupRows - 1) / groupRows;
      Expr ranges = (groups + kTaskGroups - 1) / kTaskGroups;
      Expr groupsPerRange = max((groups + ranges - 1) / ranges, 1);
      out.split(r, g, rr, groupRows, TailStrategy::GuardWithIf)
          .split(g, ro, rg, groupsPerRange, TailStrategy::GuardWithIf);
    } else {
      out.split(r, ro, ri, groupRows * kTaskGroups, TailStrategy::GuardWithIf)
          .split(ri, rg, rr, groupRows, TailStrategy::GuardWithIf);
    }
    // Within a task the weight panel of a block stays in cache across its row groups (it is
    // 147 KB for base: 3 panels x 768 inputs).
    out.split(o, oo, oi, vecs * lanes).split(oo, oc, ob, blocks / chunks);
    if (rowsFirst) out.reorder(oi, rr, rg, ob, oc, ro).fuse(oc, ro, task);
    else out.reorder(oi, rr, rg, ob, ro, oc).fuse(ro, oc, task);
    out.vectorize(oi, lanes).parallel(task);
    at = rg;
  } else {
    out.split(r, ro, ri, kRowTile, TailStrategy::GuardWithIf).parallel(ro).vectorize(o, lanes);
  }
  // bf16: the rounded inputs are made a chunk of k ahead of its sweep, small enough for the
  // stack (Halide 14 puts a stack buffer over 16 KB on the heap): up to 256 pairs, 8 KB for a
  // group of 8 rows.
  int chunk = int(s.in / 2);
  while (chunk > 256 || (s.in / 2) % chunk != 0) --chunk;
  for (Func* f : {&acc, &accu}) {
    if (!f->defined()) continue;
    f->compute_at(out, at).store_in(MemoryType::Stack).vectorize(o, lanes);
    if (s.bf16) {
      RVar ko("ko"), ki("ki");
      f->update()
          .split(kp.y, ko, ki, chunk)
          .reorder(kp.x, o, r, ki, ko)
          .atomic()
          .vectorize(kp.x)
          .vectorize(o, lanes);
      Func& xb = f == &acc ? xbGate : xbUp;
      xb.compute_at(*f, ko).store_in(MemoryType::Stack);
      if ((2 * chunk) % (2 * lanes) == 0) xb.vectorize(xb.args()[0], 2 * lanes);
    } else {
      f->update().reorder(o, r, k).vectorize(o, lanes);
    }
    if (blocked) f->update().unroll(o).unroll(r);
    // Rows first: a block's accumulators are whole groups, the last group too (its rows past
    // the batch read the last row again and are never stored), so that the last range's sweep
    // is the same unguarded code (chunks first gets that from Halide's loop trimming).
    if (blocked && rowsFirst) f->bound_extent(r, groupRows);
  }
  std::vector<Argument> args = {x, w};
  if (s.bias) args.push_back(bias);
  if (s.act == "swiglu") {
    args.push_back(wu);
    if (s.bias) args.push_back(biasu);
  }
  if (s.ropeHeads > 0) {
    args.push_back(tokpos);
    args.push_back(rcos);
    args.push_back(rsin);
  }
  if (s.residual) args.push_back(res);
  return {Pipeline(out), args};
}

HalideKernel attention(const KernelSpec& s, int vector) {
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
  const int W = lanesFor(s.maxLen, vector);
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

  const int lanes = lanesFor(hd, vector);
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
HalideKernel normKernel(const KernelSpec& s, int vector) {
  ImageParam x(Float(32), 2, "x"), ng(Float(32), 1, "norm_weight"), nb(Float(32), 1, "norm_bias");
  Var c("c"), r("r");
  Func xin("xin"), stat("stat");
  xin(c, r) = x(c, r);
  Func xn = normRows(s.norm, s.eps, xin, s.in, &ng, &nb, c, r, stat, vector);
  Func out("norm");
  out(c, r) = xn(c, r);
  // 16 rows a task: a batch of a few rows is one task, not a hand-off per 4 rows of
  // microseconds' work.
  Var ro("ro"), ri("ri");
  out.bound(c, 0, int(s.in))
      .split(r, ro, ri, 16, TailStrategy::GuardWithIf)
      .parallel(ro)
      .vectorize(c, lanesFor(s.in, vector));
  stat.compute_at(out, ri).store_in(MemoryType::Stack);
  std::vector<Argument> args = {x, ng};
  if (s.norm == "layer") args.push_back(nb);
  return {Pipeline(out), args};
}

// The output rows of kime-prune-rows: row r is x's row rows[r], or zeros where that is -1 (an
// empty sequence's first row).
HalideKernel selectRows(const KernelSpec& s, int vector) {
  ImageParam x(Float(32), 2, "x"), rows(Int(32), 1, "rows");
  Var c("c"), r("r");
  Func out("select");
  out(c, r) = select(rows(r) >= 0, x(c, clamp(rows(r), 0, x.dim(1).extent() - 1)), 0.0f);
  out.bound(c, 0, int(s.out)).vectorize(c, lanesFor(s.out, vector));
  return {Pipeline(out), {x, rows}};
}

// Attention over the tokens, a tile of Q queries (32 on AVX-512) per task and head:
// the tile's keys are those of the sequences its queries are in (one sequence but at a boundary),
// each masked to its own query's. Scores are vectors over the tile's queries, so q.k is vertical
// FMAs (the tile's queries transposed once, a key's element broadcast) and p.v too (a value
// broadcast per head element), never a sum across lanes. Two passes over the keys in blocks of
// KB: the first keeps each query's running max and the sum of exponentials (rescaled when the max
// grows), the second the weighted values; each computes its block's scores (cheaper than a
// [queries, keys] buffer, which for a bucket's longest sequence would not fit on the stack).
HalideKernel attentionTiles(const KernelSpec& s, int vector) {
  ImageParam q(Float(32), 2, "q"), k(Float(32), 2, "k"), v(Float(32), 2, "v"), qseq(Int(32), 1, "qseq"),
      cu(UInt(32), 1, "cu");
  // Q queries a tile: two vectors on AVX-512, whose 32 registers hold a block's scores for both
  // (16) beside the queries' element and the broadcast key's: each key element loaded feeds twice
  // the FMAs (small 32x128 attention 15.2 -> 12.5 ms, base 32x128 1913 -> 1850 ms, base 8x16
  // +1%: a tile then spans two 16-token sequences). One vector on AVX2 (16 registers) and NEON,
  // and where no sequence is longer than one (a bucket of 16 tokens: a second vector would be
  // the last query repeated).
  const int hd = int(s.in / s.heads), group = int(s.heads / s.kvHeads),
            Q = vector >= 16 && s.maxLen > vector ? 2 * vector : vector, KB = 8;
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
      .vectorize(di, lanesFor(hd, vector));
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

HalideKernel head(const KernelSpec& s, int vector) {
  ImageParam x(Float(32), 2, "x"), ng(Float(32), 1, "norm_weight"), nb(Float(32), 1, "norm_bias"),
      rows(Int(32), 1, "rows"), w(Float(32), 2, "weight"), bias(Float(32), 1, "bias");
  Var c("c"), n("n"), o("o");
  // A row index of -1 (an empty sequence's first row) reads zeros after the norm.
  Expr ri = rows(n);
  Func xr("xr");
  xr(c, n) = x(c, clamp(ri, 0, x.dim(1).extent() - 1));
  Func stat("stat");
  Func xn = normRows(s.norm, s.eps, xr, s.in, &ng, &nb, c, n, stat, vector);
  RDom k(0, int(s.in));
  Func acc("acc");
  acc(o, n) = s.bias ? bias(o) : 0.0f;
  acc(o, n) += select(ri >= 0, xn(k, n), 0.0f) * w(o, k);
  Func out("head");
  out(o, n) = acc(o, n);
  out.bound(o, 0, int(s.out));
  xn.compute_at(out, n).store_in(MemoryType::Stack);
  if (s.norm != "none") stat.compute_at(out, n).store_in(MemoryType::Stack);
  acc.compute_at(out, n).store_in(MemoryType::Stack);
  std::vector<Argument> args = {x};
  if (s.norm != "none") args.push_back(ng);
  if (s.norm == "layer") args.push_back(nb);
  args.push_back(rows);
  args.push_back(w);
  if (s.bias) args.push_back(bias);
  return {Pipeline(out), args};
}

}  // namespace

bool linearDependsOnFewRows(const KernelSpec& s) {
  const int64_t block = 3 * 16;  // 8 x 3 vectors of 16 lanes
  return s.kind == "linear" && s.panel && s.out % block == 0 &&
         (s.ropeHeads == 0 || block % (s.out / s.ropeHeads) == 0);
}

HalideKernel buildKernel(const KernelSpec& s, int vector) {
  if (s.kind == "embed") return embed(s, vector);
  if (s.kind == "linear") return linear(s, vector);
  // Tiles of queries need a vector of them; the output rows (few, each of its own sequence)
  // keep one query per task.
  if (s.kind == "attention") return s.outputRows || vector < 4 ? attention(s, vector) : attentionTiles(s, vector);
  if (s.kind == "head") return head(s, vector);
  if (s.kind == "select") return selectRows(s, vector);
  if (s.kind == "norm") return normKernel(s, vector);
  throw CompileError("internal: no CPU kernel for class \"" + s.kind + "\"");
}

}  // namespace kime::cpu
