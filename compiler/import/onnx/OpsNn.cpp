// The ops that make an encoder: MatMul and Gemm (linears by constant weights; q·kᵀ and p·v of
// attention), Softmax over attention scores, LayerNormalization, and the reductions (a norm's
// mean over the features, pooling over each sequence's tokens, a row's L2 norm).
#include <algorithm>
#include <cmath>

#include "OpsCommon.h"
#include "Templates.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

bool featuresOnly(const Dim& d) {
  return !d.empty() && std::all_of(d.begin(), d.end(), [](const Atom& a) { return a.kind == Atom::Kind::Feat; });
}

// x · W for rows x and a constant W [K, N] (as ONNX multiplies), plus a bias [N]: a linear whose
// weight is Wᵀ [N, K]. `key` names W (a weight read twice is packed once).
ActVal linear(Importer& im, const ActVal& rows, const Tensor& w, const Tensor* bias, const std::string& key,
              double alpha = 1, double beta = 1) {
  const ActVal x = im.materialize(rows);
  const Layout& l = x.layout;
  if (l.rank() == 0 || !featuresOnly(l.dims.back()) || l.size(l.rank() - 1).k != x.width)
    im.refuse("multiplies rows " + describe(l) + " by a matrix over part of each row (kime's linears read whole rows)");
  if (w.shape.size() != 2 || w.shape[0] != x.width)
    im.refuse("multiplies rows of width " + std::to_string(x.width) + " by " + describe(w));
  const int64_t k = w.shape[0], n = w.shape[1];
  std::vector<float> wt(size_t(n * k));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) wt[size_t(c * k + r)] = float(alpha * double(w.f[size_t(r * n + c)]));
  std::vector<std::string> operands = {x.value, im.graph().weight(key, {n, k}, std::move(wt), w.stored), ""};
  if (bias) {
    if (bias->size() != size_t(n) && bias->size() != 1)
      im.refuse("a bias " + describe(*bias) + " for " + std::to_string(n) + " outputs");
    std::vector<float> b(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) b[size_t(c)] = float(beta * bias->at(bias->size() == 1 ? 0 : size_t(c)));
    operands[2] = im.graph().weight(key + ".bias", {n}, std::move(b));
  }
  Layout out = l;
  out.dims.back() = n == 1 ? Dim{} : Dim{{Atom::Kind::Feat, n}};
  return ActVal::rows(im.graph().node(OpKind::Linear, im.hint(), operands), n, out);
}

Tensor asFloatMatrix(const Importer& im, const Tensor& t, bool transposed) {
  if (t.shape.size() != 2 || !t.isFloat()) im.refuse("a weight " + describe(t) + " that is not a float matrix");
  return transposed ? constTranspose(t, {1, 0}) : t;
}

// The atoms of a value's dims before its last two (the batch and the heads).
std::vector<Atom> leadingAtoms(const Layout& l) {
  std::vector<Atom> atoms;
  for (size_t d = 0; d + 2 < l.rank(); ++d) atoms.insert(atoms.end(), l.dims[d].begin(), l.dims[d].end());
  return atoms;
}

// Where the batch lies among the heads: "BH" for [B, H, ...] or [B*H, ...], "HB" for [H*B, ...].
std::string batchPlace(const std::vector<Atom>& atoms) {
  std::string s;
  for (const Atom& a : atoms) {
    const char c = a.kind == Atom::Kind::Batch ? 'B' : 'H';
    if (s.empty() || s.back() != c) s += c;
  }
  return s;
}

// The heads' atoms (features and repeats), without the batch.
std::vector<Atom> headAtoms(const std::vector<Atom>& atoms) {
  std::vector<Atom> out;
  for (const Atom& a : atoms)
    if (a.kind != Atom::Kind::Batch) out.push_back(a);
  return normalized(Layout{{out}}).dims[0];
}

int64_t product(const std::vector<Atom>& atoms, Atom::Kind kind) {
  int64_t p = 1;
  for (const Atom& a : atoms)
    if (a.kind == kind) p *= a.size;
  return p;
}

// q · kᵀ: per head and sequence, the scores of each query against the keys.
ScoresVal scores(Importer& im, const ActVal& qv, const ActVal& kv) {
  const Layout &ql = qv.layout, &kl = kv.layout;
  const Dim len{{Atom::Kind::Len, 1}};
  if (ql.rank() < 2 || kl.rank() < 2 || ql.dims[ql.rank() - 2] != len || kl.dims.back() != len ||
      !featuresOnly(ql.dims.back()) || !featuresOnly(kl.dims[kl.rank() - 2]))
    im.refuse("multiplies rows " + describe(ql) + " by rows " + describe(kl) +
              ": kime's attention multiplies queries [.., L, head] by keys [.., head, L]");
  ScoresVal s;
  s.headDim = ql.size(ql.rank() - 1).k;
  if (kl.size(kl.rank() - 2).k != s.headDim) im.refuse("queries and keys of different head sizes");
  const std::vector<Atom> qa = leadingAtoms(ql), ka = leadingAtoms(kl);
  s.heads = product(qa, Atom::Kind::Feat);
  s.kvHeads = product(ka, Atom::Kind::Feat);
  const int64_t rep = product(ka, Atom::Kind::Bcast);
  if (batchPlace(qa) != batchPlace(ka))
    im.refuse("queries " + describe(ql) + " and keys " + describe(kl) +
              " hold the batch and the heads in other orders");
  if (product(qa, Atom::Kind::Bcast) != 1 || s.kvHeads * rep != s.heads)
    im.refuse(std::to_string(s.heads) + " query heads meet " + std::to_string(s.kvHeads) + " key heads repeated " +
              std::to_string(rep) + " times");
  // kime's head h reads kv head h / (heads / kv_heads): each kv head repeated in place
  // (repeat_interleave, or expand then reshape), not the kv heads tiled.
  bool seenRepeat = false;
  for (const Atom& a : ka) {
    if (a.kind == Atom::Kind::Bcast) seenRepeat = true;
    if (a.kind == Atom::Kind::Feat && seenRepeat)
      im.refuse(
          "repeats the key heads as a tile (head h reads kv head h % kv_heads); kime's grouped-query "
          "attention reads kv head h / (heads / kv_heads) (repeat_interleave)");
  }
  double qScale = 1, kScale = 1;
  s.kLayout = kl;
  s.q = materializeScaled(im, qv, qScale);
  s.k = materializeScaled(im, kv, kScale);
  s.scale = qScale * kScale;
  s.layout.dims.assign(ql.dims.begin(), ql.dims.end() - 1);
  s.layout.dims.push_back(len);
  return s;
}

// softmax(q · kᵀ) · v: a Graph attention, rows [.., L, head] like the queries.
ActVal attention(Importer& im, const ScoresVal& s, const ActVal& v) {
  const Layout& vl = v.layout;
  const Dim len{{Atom::Kind::Len, 1}};
  if (vl.rank() < 2 || vl.dims[vl.rank() - 2] != len || !featuresOnly(vl.dims.back()) ||
      vl.size(vl.rank() - 1).k != s.headDim)
    im.refuse("multiplies attention probabilities by " + describe(vl) +
              ": kime's values are [.., L, head] like the keys");
  const std::vector<Atom> va = leadingAtoms(vl), ka = leadingAtoms(s.kLayout);
  if (product(va, Atom::Kind::Feat) != s.kvHeads)
    im.refuse("values of " + std::to_string(product(va, Atom::Kind::Feat)) + " heads for keys of " +
              std::to_string(s.kvHeads));
  if (batchPlace(va) != batchPlace(ka) || !(headAtoms(va) == headAtoms(ka)))
    im.refuse("values " + describe(vl) + " hold their batch and heads otherwise than the keys " + describe(s.kLayout) +
              " (each query head must read the kv head its key came from)");
  const ActVal vm = im.materialize(v);
  const std::string out = im.graph().node(OpKind::Attention, im.hint(), {s.q.value, s.k.value, vm.value, "cu"},
                                          {double(s.heads), double(s.kvHeads), s.scale});
  return ActVal::rows(out, s.heads * s.headDim, s.q.layout);
}

void matmul(Importer& im) {
  const Value &a = im.in(0), &b = im.in(1);
  auto ca = std::get_if<ConstVal>(&a);
  auto cb = std::get_if<ConstVal>(&b);
  if (ca && cb) return im.out(0, ConstVal{constMatMul(ca->t, cb->t)});
  auto aa = std::get_if<ActVal>(&a);
  if (aa && cb) return im.out(0, linear(im, *aa, asFloatMatrix(im, cb->t, false), nullptr, im.node().input(1)));
  auto ab = std::get_if<ActVal>(&b);
  if (aa && ab) return im.out(0, scores(im, *aa, *ab));
  if (auto s = std::get_if<ScoresVal>(&a); s && ab) {
    if (!s->probabilities) im.refuse("multiplies attention scores by values before a softmax over the keys");
    return im.out(0, attention(im, *s, *ab));
  }
  im.refuse("multiplies " + describeValue(a) + " by " + describeValue(b));
}

void gemm(Importer& im) {
  const Value& a = im.in(0);
  auto rows = std::get_if<ActVal>(&a);
  if (!rows) im.refuse("multiplies " + describeValue(a) + " (kime's Gemm is a linear of rows by a constant)");
  if (im.attrInt("transA", 0)) im.refuse("multiplies transposed rows");
  const Tensor w = asFloatMatrix(im, im.constIn(1, "the weight"), im.attrInt("transB", 0) != 0);
  const Tensor* bias = im.has(2) ? &im.constIn(2, "the bias") : nullptr;
  im.out(0, linear(im, *rows, w, bias, im.node().input(1), im.attrFloat("alpha", 1), im.attrFloat("beta", 1)));
}

void softmax(Importer& im) {
  const Value& v = im.in(0);
  auto s = std::get_if<ScoresVal>(&v);
  if (!s) im.refuse("a softmax of " + describeValue(v) + ": kime's softmax is attention's, over its keys");
  if (s->probabilities) im.refuse("a softmax of attention probabilities (kime's attention takes one)");
  if (axisIn(im, im.attrInt("axis", -1), s->layout.rank()) != int64_t(s->layout.rank()) - 1)
    im.refuse("a softmax over the queries, not the keys");
  if (im.hasMask() && !(s->padding <= -1e4))
    im.refuse(
        "the attention scores are not masked by attention_mask: with padding in the batch, tokens would "
        "attend to it (add the key mask, (1 - mask) * -10000 or -inf where the mask is 0)");
  ScoresVal p = *s;
  p.probabilities = true;
  im.out(0, p);
}

void layerNormalization(Importer& im) {
  const Value& v = im.in(0);
  auto a = std::get_if<ActVal>(&v);
  if (!a) im.refuse("normalizes " + describeValue(v));
  const ActVal x = im.materialize(*a);
  if (axisIn(im, im.attrInt("axis", -1), x.layout.rank()) != int64_t(x.layout.rank()) - 1 ||
      !featuresOnly(x.layout.dims.back()) || x.layout.size(x.layout.rank() - 1).k != x.width)
    im.refuse("normalizes " + describe(x.layout) + " over other than its whole rows");
  const Tensor& g = im.constIn(1, "the scale");
  std::vector<float> bias(size_t(x.width), 0.0f);
  if (im.has(2)) {
    if (!im.constIn(2, "the bias").isFloat()) im.refuse("a bias that is not float");
    bias = im.constIn(2, "the bias").f;
  }
  if (!g.isFloat()) im.refuse("a scale that is not float");
  if (g.size() != size_t(x.width) || bias.size() != size_t(x.width))
    im.refuse("a scale or bias not of the row's width");
  const std::string w = im.graph().weight(im.node().input(1), {x.width}, g.f, g.stored);
  const std::string b = im.graph().weight(im.has(2) ? im.node().input(2) : im.hint() + ".bias", {x.width}, bias);
  const std::string out =
      im.graph().node(OpKind::LayerNorm, im.hint(), {x.value, w, b}, {asWritten(im.attrFloat("epsilon", 1e-5))});
  im.out(0, ActVal::rows(out, x.width, x.layout));
}

// The dims `axes` name, sorted and non-negative (all of them where none are given).
std::vector<int64_t> reduceAxes(Importer& im, size_t rank) {
  std::vector<int64_t> axes = im.attrInts("axes");
  if (axes.empty() && im.has(1)) {
    const Tensor& t = im.constIn(1, "the axes");
    for (size_t k = 0; k < t.size(); ++k) axes.push_back(t.intAt(k));
  }
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  for (int64_t& a : axes) a = axisIn(im, a, rank);
  std::sort(axes.begin(), axes.end());
  return axes;
}

Layout reducedLayout(const Layout& l, size_t d, bool keep) {
  Layout out = l;
  if (keep)
    out.dims[d] = Dim{};
  else
    out.dims.erase(out.dims.begin() + int64_t(d));
  return out;
}

void reduce(Importer& im, bool mean) {
  const Value& v = im.in(0);
  const bool keep = im.attrInt("keepdims", 1) != 0;
  if (auto c = std::get_if<ConstVal>(&v))
    return im.out(0, ConstVal{constReduce(c->t, reduceAxes(im, c->t.shape.size()), keep, mean)});
  const auto layout = layoutOf(v);
  if (!layout) im.refuse("reduces " + describeValue(v));
  const std::vector<int64_t> axes = reduceAxes(im, layout->rank());
  if (axes.size() != 1) im.refuse("reduces " + describe(*layout) + " over more than one dim");
  const size_t d = size_t(axes[0]);
  const bool overTokens = layout->dims[d] == Dim{{Atom::Kind::Len, 1}};
  if (auto m = std::get_if<MaskVal>(&v)) {
    if (mean || !overTokens || m->real != 1 || m->pad != 0)
      im.refuse("reduces a function of the mask other than its sum over L");
    return im.out(0, SeqLenVal{reducedLayout(*layout, d, keep)});
  }
  auto a = std::get_if<ActVal>(&v);
  if (!a) im.refuse("reduces " + describeValue(v));
  if (overTokens) {
    if (mean && im.hasMask())
      im.refuse("a mean over each sequence's tokens that counts padding (mask the rows and divide by the mask's sum)");
    if (!mean && im.hasMask() && !a->zeroedPadding)
      im.refuse("a sum over each sequence's tokens that counts padding (multiply the rows by the mask first)");
    if (!mean) return im.out(0, SeqSumVal{*a, reducedLayout(*layout, d, keep)});
    const ActVal x = im.materialize(*a);
    return im.out(0, ActVal::rows(im.graph().node(OpKind::MeanSeqs, im.hint(), {x.value, "cu"}), x.width,
                                  reducedLayout(*layout, d, keep)));
  }
  if (d + 1 != layout->rank() || !featuresOnly(layout->dims[d]))
    im.refuse("reduces dim " + std::to_string(d) + " of " + describe(*layout) +
              " (kime reduces a row's last axis, or L)");
  ActVal out = *a;
  const int64_t last = layout->size(d).k;
  out.tree = rowReduce(mean ? "mean" : "sum", a->tree ? a->tree : rowSource(a->width / last, last));
  out.layout = reducedLayout(*layout, d, keep);
  out.zeroedPadding = false;
  im.out(0, im.settle(out));
}

// Each row's L2 norm over its features (the last dim), for a division of the rows by it.
void reduceL2(Importer& im) {
  const ActVal* a = std::get_if<ActVal>(&im.in(0));
  if (!a) im.refuse("an L2 norm of " + describeValue(im.in(0)) + ": kime's are of rows");
  const std::vector<int64_t> axes = reduceAxes(im, a->layout.rank());
  const size_t last = a->layout.rank() - 1;
  if (axes.size() != 1 || size_t(axes[0]) != last || !featuresOnly(a->layout.dims[last]))
    im.refuse("an L2 norm over other dims of " + describe(a->layout) + " than a row's features (its last)");
  im.out(0, RowNormVal{*a, reducedLayout(a->layout, last, im.attrInt("keepdims", 1) != 0), 0});
}

void lpNormalization(Importer& im) {
  const ActVal* a = std::get_if<ActVal>(&im.in(0));
  const size_t rank = a ? a->layout.rank() : 0;
  if (!a || im.attrInt("p", 2) != 2 || axisIn(im, im.attrInt("axis", -1), rank) != int64_t(rank) - 1 ||
      !featuresOnly(a->layout.dims[rank - 1]))
    im.refuse("an Lp normalization other than L2 over a row's features (its last dim)");
  im.out(0, l2Normalize(im, *a, 0));
}

void reduceMean(Importer& im) { reduce(im, true); }
void reduceSum(Importer& im) { reduce(im, false); }

}  // namespace

void addNnOps(OpTable& t) {
  t["MatMul"] = matmul;
  t["Gemm"] = gemm;
  t["Softmax"] = softmax;
  t["LayerNormalization"] = layerNormalization;
  t["ReduceMean"] = reduceMean;
  t["ReduceSum"] = reduceSum;
  t["ReduceL2"] = reduceL2;
  t["LpNormalization"] = lpNormalization;
}

// x / max(|x|, eps) along the rows: an RMS norm whose weight is 1/sqrt(width) and whose epsilon is
// eps^2 / width (x / sqrt(sum x^2 + eps^2): the same in f32 wherever |x| is past eps by 1e4), at
// least 1e-37 (a norm's epsilon is positive; a row of zeros stays zeros, where x / |x| is NaN).
ActVal l2Normalize(Importer& im, const ActVal& a, double eps) {
  const ActVal x = im.materialize(a);
  const std::vector<float> scale(size_t(x.width), float(1 / std::sqrt(double(x.width))));
  const std::string w = im.graph().weight(im.hint() + ".scale", {x.width}, scale);
  const std::string out =
      im.graph().node(OpKind::RmsNorm, im.hint(), {x.value, w}, {std::max(eps * eps / double(x.width), 1e-37)});
  return ActVal::rows(out, x.width, a.layout);
}

}  // namespace kime::onnx_import
