// The elementwise ops, on every kind of value: folded on constants and sizes, tracked as a pair
// of numbers on functions of the mask, a scale and a key mask on attention scores, a RowExpr on
// rows of one source, and a Graph op between rows of two.
#include <algorithm>
#include <cmath>

#include "OpsCommon.h"
#include "Templates.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

const std::map<std::string, ConstOp>& constOps() {
  static const std::map<std::string, ConstOp> ops = {
      {"add", ConstOp::Add},   {"sub", ConstOp::Sub},         {"mul", ConstOp::Mul}, {"div", ConstOp::Div},
      {"pow", ConstOp::Pow},   {"max", ConstOp::Max},         {"min", ConstOp::Min}, {"equal", ConstOp::Equal},
      {"less", ConstOp::Less}, {"greater", ConstOp::Greater}, {"and", ConstOp::And}, {"or", ConstOp::Or}};
  return ops;
}

double number(const std::string& fn, double x, double y) {
  const Tensor r = constBinary(constOps().at(fn), Tensor::scalar(x), Tensor::scalar(y));
  return r.at(0);
}

RowExprPtr treeOf(const ActVal& a) {
  if (a.tree) return a.tree;
  const auto [g, w] = groupsOf(a.layout, a.width);
  return rowSource(g, w);
}

// Sizes: elementwise on integers that may involve B and L.
Value sizesBinary(Importer& im, const std::string& fn, const std::vector<SymInt>& a, bool scalarA,
                  const std::vector<SymInt>& b, bool scalarB) {
  const size_t n = std::max(a.size(), b.size());
  if ((a.size() != n && a.size() != 1) || (b.size() != n && b.size() != 1)) im.refuse("sizes of different lengths");
  std::vector<SymInt> out;
  std::vector<int64_t> flags;
  for (size_t k = 0; k < n; ++k) {
    const SymInt x = a[a.size() == 1 ? 0 : k], y = b[b.size() == 1 ? 0 : k];
    std::optional<SymInt> r;
    if (fn == "add" || fn == "sub") r = addSym(x, y, fn == "sub");
    if (fn == "mul") r = x * y;
    if (fn == "div") r = divide(x, y);
    if (fn == "equal") {
      if (x.isConst() && y.isConst())
        flags.push_back(x == y);
      else if ((x.isConst() && x.k <= 0) || (y.isConst() && y.k <= 0))
        flags.push_back(0);  // B, L >= 1
      else if (x == y)
        flags.push_back(1);
      else
        im.refuse("compares the sizes " + x.str() + " and " + y.str());
      continue;
    }
    if (!r) im.refuse(fn + " of the sizes " + x.str() + " and " + y.str() + " is not a size kime can follow");
    out.push_back(*r);
  }
  if (fn == "equal") {
    Tensor t = Tensor::integers(flags, scalarA && scalarB ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(n)});
    t.kind = Tensor::Kind::Bool;
    return ConstVal{t};
  }
  const bool scalar = scalarA && scalarB;
  if (std::all_of(out.begin(), out.end(), [](const SymInt& s) { return s.isConst(); })) {
    std::vector<int64_t> ints;
    for (const SymInt& s : out) ints.push_back(s.k);
    return ConstVal{Tensor::integers(ints, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(n)})};
  }
  return SymVal{out, scalar};
}

bool isSizes(const Value& v) {
  if (std::holds_alternative<SymVal>(v)) return true;
  auto c = std::get_if<ConstVal>(&v);
  return c && !c->t.isFloat() && c->t.shape.size() <= 1;
}

// A constant (or one number over a shape) as an operand of rows of layout `l`.
RowExprPtr constOperand(Importer& im, const Layout& l, const Value& c) {
  if (auto u = uniformValue(c)) return rowScalar(*u);
  const Tensor& t = std::get<ConstVal>(c).t;
  if (!variesAlongFeaturesOnly(l, t.shape))
    im.refuse("a constant " + describe(t) + " varies along more than the features of " + describe(l));
  const auto coords = featureCoords(l);
  std::vector<double> values;
  for (const auto& cd : coords) {
    size_t flat = 0;
    for (size_t k = 0; k < t.shape.size(); ++k) {
      const size_t d = l.rank() - t.shape.size() + k;
      flat = flat * size_t(t.shape[k]) + (t.shape[k] == 1 ? 0 : size_t(cd[d]));
    }
    values.push_back(t.at(flat));
  }
  const auto [g, w] = groupsOf(l, l.width());
  return rowConst(std::move(values), g, w);
}

// A table by position as an operand of rows of layout `l`: per position, per feature.
RowExprPtr posOperand(Importer& im, const Layout& l, const PosTableVal& p) {
  const int len = p.layout.dimOf(Atom::Kind::Len);
  const size_t shift = l.rank() - p.layout.rank();
  if (p.layout.rank() > l.rank() || l.dimOf(Atom::Kind::Len) != int(shift) + len)
    im.refuse("a table by position " + describe(p.layout) + " does not meet the positions of " + describe(l));
  const auto coords = featureCoords(l);
  const int64_t rows = p.table.shape[0];
  const size_t rowSize = size_t(p.layout.width());
  // A table row's index: its features' dims (in the table's order), each read at the rows' coordinate.
  std::vector<double> values;
  values.reserve(size_t(rows) * coords.size());
  for (int64_t r = 0; r < rows; ++r)
    for (const auto& cd : coords) {
      size_t flat = 0;
      for (size_t d = 0; d < p.layout.rank(); ++d) {
        if (int(d) == len || p.layout.dims[d].empty()) continue;
        const SymInt n = p.layout.size(d);
        if (!n.isConst() || l.size(d + shift) != n)
          im.refuse("a table by position " + describe(p.layout) + " does not match the rows " + describe(l));
        flat = flat * size_t(n.k) + size_t(cd[d + shift]);
      }
      values.push_back(p.table.at(size_t(r) * rowSize + flat));
    }
  const auto [g, w] = groupsOf(l, l.width());
  return rowPosConst(std::move(values), rows, g, w);
}

// Rows of two Graph values combined by a Graph op (add, sub, mul), broadcasting a per-sequence
// one over its sequence's tokens.
ActVal rowsOfTwo(Importer& im, const std::string& fn, const ActVal& a, const ActVal& b) {
  ActVal x = im.materialize(a), y = im.materialize(b);
  const auto l = broadcastLayouts(x.layout, y.layout);
  if (!l) im.refuse("combines rows " + describe(x.layout) + " and " + describe(y.layout) + ", which do not broadcast");
  if (!x.perToken() && l->hasAtom(Atom::Kind::Len)) x = im.toTokens(x);
  if (!y.perToken() && l->hasAtom(Atom::Kind::Len)) y = im.toTokens(y);
  if (x.width != l->width() || y.width != l->width())
    im.refuse("combines rows " + describe(a.layout) + " and " + describe(b.layout) +
              " of different widths: kime's elementwise ops take rows of one width");
  static const std::map<std::string, OpKind> kinds = {{"add", OpKind::Add}, {"sub", OpKind::Sub}, {"mul", OpKind::Mul}};
  auto kind = kinds.find(fn);
  if (kind == kinds.end()) im.refuse(fn + " of two different rows (kime's Graph has add, sub and mul of rows)");
  const std::string v = im.graph().node(kind->second, im.hint(), {x.value, y.value});
  return ActVal::rows(v, x.width, *l);
}

// Rows combined with anything: another value's rows, a constant, a table by position, the mask.
Value rowsBinary(Importer& im, const std::string& fn, const Value& va, const Value& vb) {
  const ActVal* a = std::get_if<ActVal>(&va);
  const ActVal* b = std::get_if<ActVal>(&vb);
  if (a && b && a->value != b->value) return rowsOfTwo(im, fn, *a, *b);
  if (a && b) {  // rows of one source: one expression of them
    const auto l = broadcastLayouts(a->layout, b->layout);
    RowExprPtr tree = l ? rowBinary(fn, treeOf(*a), treeOf(*b)) : nullptr;
    if (!tree) im.refuse(fn + " of " + describeValue(va) + " and " + describeValue(vb) + ", which do not broadcast");
    ActVal out = *a;
    out.tree = tree, out.layout = *l, out.zeroedPadding = false;
    return im.settle(out);
  }
  const ActVal& act = a ? *a : *b;
  const Value& other = a ? vb : va;
  if (auto p = std::get_if<PosTableVal>(&other); p && fn != "mul") {
    const std::string table =
        im.graph().sharedWeight(p->name, p->name, {p->table.shape[0], p->layout.width()}, p->table.f, p->table.stored);
    const ActVal rows =
        ActVal::rows(im.graph().node(OpKind::GatherRows, im.hint() + ".pos", {table, im.graph().positions()}),
                     p->layout.width(), p->layout);
    return a ? rowsOfTwo(im, fn, act, rows) : rowsOfTwo(im, fn, rows, act);
  }
  const auto otherLayout = layoutOf(other);
  Layout l = act.layout;
  if (otherLayout || std::holds_alternative<ConstVal>(other)) {
    const Layout ol = otherLayout ? *otherLayout : staticLayout(std::get<ConstVal>(other).t.shape);
    const auto bl = broadcastLayouts(act.layout, ol);
    if (!bl || bl->width() != act.layout.width())
      im.refuse("combines " + describeValue(va) + " and " + describeValue(vb) + ", which do not broadcast as rows");
    l = *bl;
  }
  if (!act.perToken() && l.hasAtom(Atom::Kind::Len)) {  // a sequence's row read by each of its tokens
    ActVal tokens = im.toTokens(act);
    tokens.layout = l;
    return rowsBinary(im, fn, a ? Value(tokens) : va, a ? vb : Value(tokens));
  }
  RowExprPtr operand;
  bool zeroed = act.zeroedPadding;
  if (auto m = std::get_if<MaskVal>(&other)) {
    operand = rowScalar(m->real);
    if (fn == "mul" && m->pad == 0) zeroed = true;
  } else if (auto p = std::get_if<PosTableVal>(&other)) {
    operand = posOperand(im, l, *p);
  } else if (std::holds_alternative<ConstVal>(other) || std::holds_alternative<FilledVal>(other)) {
    operand = constOperand(im, l, other);
  } else {
    im.refuse(fn + " of rows and " + describeValue(other));
  }
  if (!zeroed || fn == "mul")
    if (auto folded = foldConstant(im, act, fn, *operand, a != nullptr)) {
      folded->layout = l;
      folded->zeroedPadding = zeroed && fn == "mul";
      return *folded;
    }
  const RowExprPtr self = treeOf(act);
  RowExprPtr tree = a ? rowBinary(fn, self, operand) : rowBinary(fn, operand, self);
  if (!tree)
    im.refuse(fn + " of rows whose groups do not match (" + describeValue(va) + ", " + describeValue(vb) + ")");
  ActVal out = act;
  out.tree = tree;
  out.layout = l;
  out.zeroedPadding = zeroed && fn == "mul";
  return im.settle(out);
}

// A function of the mask and a number (or another function of the mask): the pair of values.
Value maskBinary(Importer& im, const std::string& fn, const Value& va, const Value& vb) {
  auto pairOf = [&](const Value& v) -> std::pair<double, double> {
    if (auto m = std::get_if<MaskVal>(&v)) return {m->real, m->pad};
    if (auto u = uniformValue(v)) return {*u, *u};
    im.refuse(fn + " of a function of the mask and " + describeValue(v));
  };
  const auto [ra, pa] = pairOf(va);
  const auto [rb, pb] = pairOf(vb);
  const Layout la = layoutOf(va) ? *layoutOf(va) : staticLayout(std::get<ConstVal>(va).t.shape);
  const Layout lb = layoutOf(vb) ? *layoutOf(vb) : staticLayout(std::get<ConstVal>(vb).t.shape);
  const auto l = broadcastLayouts(la, lb);
  if (!l) im.refuse("combines " + describeValue(va) + " and " + describeValue(vb) + ", which do not broadcast");
  const bool compare = fn == "equal" || fn == "less" || fn == "greater" || fn == "and" || fn == "or";
  const Tensor::Kind kind =
      compare ? Tensor::Kind::Bool
              : (std::holds_alternative<MaskVal>(va) ? std::get<MaskVal>(va).kind : Tensor::Kind::Float);
  return MaskVal{number(fn, ra, rb), number(fn, pa, pb), kind, *l};
}

// Attention scores and something else: a scale (a number multiplied or divided), or the key mask.
Value scoresBinary(Importer& im, const std::string& fn, const Value& va, const Value& vb) {
  const bool first = std::holds_alternative<ScoresVal>(va);
  ScoresVal s = std::get<ScoresVal>(first ? va : vb);
  const Value& other = first ? vb : va;
  if (s.probabilities) im.refuse(fn + " of attention probabilities (kime's attention multiplies them by v only)");
  const auto u = uniformValue(other);
  if (u && (fn == "mul" || (fn == "div" && first))) {
    const double factor = fn == "mul" ? *u : 1 / *u;
    if (!(factor > 0) || !std::isfinite(factor)) im.refuse("scales attention scores by " + std::to_string(factor));
    s.scale *= factor, s.padding *= factor;
    return s;
  }
  if (fn == "add" && u && *u == 0) return s;
  if (fn == "add") {
    if (auto m = std::get_if<MaskVal>(&other)) return maskScores(im, s, m->real, m->pad, m->layout);
    if (auto c = std::get_if<ConstVal>(&other))
      im.refuse("adds a constant " + describe(c->t) + " to attention scores (a bias or a mask kime does not take)");
  }
  im.refuse(fn + " of attention scores and " + describeValue(other));
}

// Rows over their own L2 norm (as ReduceL2 of the same rows computed it), clamped by a Clip.
ActVal divideByNorm(Importer& im, const ActVal& x, const RowNormVal& norm) {
  if (x.value != norm.x.value || x.tree != norm.x.tree || x.width != norm.x.width)
    im.refuse("divides rows by the L2 norm of other rows");
  return l2Normalize(im, x, norm.eps);
}

// Token ids or positions with a number: the ids' comparison with the padding id (false at every
// token of a batch, which may not hold that id: Graph::paddingId), positions plus or minus a whole
// number (a later first row of the table), either times 1.
std::optional<Value> indexBinary(Importer& im, const std::string& fn, const IndexVal& i, const Value& other) {
  const std::optional<double> k = uniformValue(other);
  const bool integer = k && *k == std::floor(*k) && std::fabs(*k) < 1e15;
  if (!integer || (std::holds_alternative<ConstVal>(other) && std::get<ConstVal>(other).t.isFloat())) return {};
  if (fn == "equal" && i.which == IndexVal::Which::Ids) {
    im.notePaddingId(int64_t(*k));
    return FilledVal{0, Tensor::Kind::Bool, i.layout};
  }
  if ((fn == "add" || fn == "sub") && i.which == IndexVal::Which::Positions) {
    IndexVal out = i;
    out.offset += fn == "add" ? int64_t(*k) : -int64_t(*k);
    return out;
  }
  if (fn == "mul" && *k == 1) return i;
  return {};
}

void binary(Importer& im, const std::string& fn) {
  const Value &a = im.in(0), &b = im.in(1);
  auto ca = std::get_if<ConstVal>(&a);
  auto cb = std::get_if<ConstVal>(&b);
  if (ca && cb) return im.out(0, ConstVal{constBinary(constOps().at(fn), ca->t, cb->t)});
  if (isSizes(a) && isSizes(b))
    return im.out(0, sizesBinary(im, fn, im.symIn(0, "a size"), rankOf(a) == 0, im.symIn(1, "a size"), rankOf(b) == 0));
  if (std::holds_alternative<ScoresVal>(a) || std::holds_alternative<ScoresVal>(b))
    return im.out(0, scoresBinary(im, fn, a, b));
  if (auto r = std::get_if<RowNormVal>(&b); r && fn == "div" && std::holds_alternative<ActVal>(a))
    return im.out(0, divideByNorm(im, std::get<ActVal>(a), *r));
  if (std::holds_alternative<ActVal>(a) || std::holds_alternative<ActVal>(b))
    return im.out(0, rowsBinary(im, fn, a, b));
  if (auto s = std::get_if<SeqSumVal>(&a); s && fn == "div" && std::holds_alternative<SeqLenVal>(b)) {
    const ActVal x = im.materialize(s->x);
    return im.out(0, ActVal::rows(im.graph().node(OpKind::MeanSeqs, im.hint(), {x.value, "cu"}), x.width, s->layout));
  }
  if (std::holds_alternative<MaskVal>(a) || std::holds_alternative<MaskVal>(b))
    return im.out(0, maskBinary(im, fn, a, b));
  const bool commutes = fn == "add" || fn == "mul" || fn == "equal";
  if (auto i = std::get_if<IndexVal>(&a))
    if (auto out = indexBinary(im, fn, *i, b)) return im.out(0, *out);
  if (auto i = std::get_if<IndexVal>(&b); i && commutes)
    if (auto out = indexBinary(im, fn, *i, a)) return im.out(0, *out);
  auto fa = std::get_if<FilledVal>(&a);
  auto fb = std::get_if<FilledVal>(&b);
  if ((fa || fb) && uniformValue(a) && uniformValue(b)) {
    const Layout l = fa && fb ? *broadcastLayouts(fa->layout, fb->layout) : (fa ? fa->layout : fb->layout);
    return im.out(0, FilledVal{number(fn, *uniformValue(a), *uniformValue(b)), fa ? fa->kind : fb->kind, l});
  }
  im.refuse(fn + " of " + describeValue(a) + " and " + describeValue(b));
}

void unary(Importer& im, const std::string& fn) {
  const Value& v = im.in(0);
  if (auto c = std::get_if<ConstVal>(&v)) return im.out(0, ConstVal{constUnary(fn, c->t)});
  if (auto p = std::get_if<PosTableVal>(&v); p && fn != "not") {  // a table computed by position
    PosTableVal out = *p;
    out.table = constUnary(fn, p->table);
    out.name = p->name + "." + fn;
    return im.out(0, out);
  }
  if (fn == "cos" || fn == "sin") im.refuse(fn + " of " + describeValue(v) + ": kime's are of tables by position");
  if (auto m = std::get_if<MaskVal>(&v)) {
    MaskVal out = *m;
    out.real = constUnary(fn, Tensor::scalar(m->real)).at(0), out.pad = constUnary(fn, Tensor::scalar(m->pad)).at(0);
    if (fn == "not") out.kind = Tensor::Kind::Bool;
    return im.out(0, out);
  }
  if (auto f = std::get_if<FilledVal>(&v)) {
    FilledVal out = *f;
    out.v = constUnary(fn, Tensor::scalar(f->v)).at(0);
    return im.out(0, out);
  }
  if (auto a = std::get_if<ActVal>(&v); a && fn != "not") {
    ActVal out = *a;
    out.tree = rowUnary(fn, treeOf(*a));
    out.zeroedPadding = false;
    return im.out(0, im.settle(out));
  }
  im.refuse(fn + " of " + describeValue(v));
}

void where(Importer& im) {
  const Value &c = im.in(0), &x = im.in(1), &y = im.in(2);
  auto cc = std::get_if<ConstVal>(&c);
  auto cx = std::get_if<ConstVal>(&x);
  auto cy = std::get_if<ConstVal>(&y);
  if (cc && cx && cy) return im.out(0, ConstVal{constWhere(cc->t, cx->t, cy->t)});
  if (cc && isSizes(x) && isSizes(y)) {
    const std::vector<SymInt> a = im.symIn(1, "a size"), b = im.symIn(2, "a size");
    const size_t n = cc->t.size();
    if ((a.size() != n && a.size() != 1) || (b.size() != n && b.size() != 1))
      im.refuse("picks between sizes of other lengths");
    std::vector<SymInt> out;
    for (size_t k = 0; k < n; ++k)
      out.push_back(cc->t.at(k) != 0 ? a[a.size() == 1 ? 0 : k] : b[b.size() == 1 ? 0 : k]);
    return im.out(0, SymVal{out, cc->t.shape.empty()});
  }
  const MaskVal* m = std::get_if<MaskVal>(&c);
  if (!m) im.refuse("picks by " + describeValue(c) + " (kime's conditions are functions of attention_mask)");
  const bool scoresX = std::holds_alternative<ScoresVal>(x), scoresY = std::holds_alternative<ScoresVal>(y);
  if (scoresX || scoresY) {
    const ScoresVal& s = std::get<ScoresVal>(scoresX ? x : y);
    const auto fill = uniformValue(scoresX ? y : x);
    if (!fill) im.refuse("picks between attention scores and " + describeValue(scoresX ? y : x));
    // Where the condition picks the scores, they stay (0 added); elsewhere the fill.
    const bool keepsAtTokens = (m->real != 0) == scoresX, keepsAtPadding = (m->pad != 0) == scoresX;
    if (!keepsAtTokens || keepsAtPadding)
      im.refuse(
          "the attention mask is not a key mask of attention_mask: it replaces the scores of tokens, or keeps "
          "those of padding");
    return im.out(0, maskScores(im, s, 0.0, *fill, m->layout));
  }
  const auto vx = uniformValue(x), vy = uniformValue(y);
  const MaskVal* mx = std::get_if<MaskVal>(&x);
  const MaskVal* my = std::get_if<MaskVal>(&y);
  if ((vx || mx) && (vy || my)) {
    const double xr = mx ? mx->real : *vx, xp = mx ? mx->pad : *vx, yr = my ? my->real : *vy, yp = my ? my->pad : *vy;
    Layout l = m->layout;
    for (const Value* v : {&x, &y})
      if (auto lv = layoutOf(*v)) {
        const auto b = broadcastLayouts(l, *lv);
        if (!b) im.refuse("picks between values that do not broadcast");
        l = *b;
      }
    const Tensor::Kind kind = std::holds_alternative<ConstVal>(x) ? std::get<ConstVal>(x).t.kind : Tensor::Kind::Float;
    return im.out(0, MaskVal{m->real != 0 ? xr : yr, m->pad != 0 ? xp : yp, kind, l});
  }
  im.refuse("picks between " + describeValue(x) + " and " + describeValue(y) + " by the mask");
}

void clip(Importer& im) {
  const Value& v = im.in(0);
  std::optional<double> lo, hi;
  if (im.hasAttr("min")) lo = im.attrFloat("min", 0);
  if (im.hasAttr("max")) hi = im.attrFloat("max", 0);
  for (size_t k : {size_t(1), size_t(2)}) {
    if (!im.has(k)) continue;
    const Tensor& bound = im.constIn(k, "a bound");
    if (bound.size() != 1) im.refuse("a bound that is not one number");
    (k == 1 ? lo : hi) = bound.at(0);
  }
  if (auto r = std::get_if<RowNormVal>(&v)) {
    // F.normalize's norm.clamp_min(eps): the rows' norm kept away from 0.
    if (hi || !lo || *lo < 0) im.refuse("clamps each row's L2 norm other than from below");
    RowNormVal out = *r;
    out.eps = std::max(out.eps, *lo);
    return im.out(0, out);
  }
  if (std::holds_alternative<SeqLenVal>(v)) {
    // A sequence's length clamped away from 0 (mean pooling): kime's mean of an empty sequence is 0.
    if (hi || (lo && *lo > 1)) im.refuse("clamps each sequence's length to more than 1 or below a maximum");
    return im.out(0, v);
  }
  if (auto c = std::get_if<ConstVal>(&v)) {
    Tensor t = c->t;
    if (lo) t = constBinary(ConstOp::Max, t, Tensor::scalar(*lo));
    if (hi) t = constBinary(ConstOp::Min, t, Tensor::scalar(*hi));
    return im.out(0, ConstVal{t});
  }
  auto a = std::get_if<ActVal>(&v);
  if (!a) im.refuse("clamps " + describeValue(v));
  ActVal out = *a;
  out.tree = treeOf(*a);
  if (lo) out.tree = rowBinary("max", out.tree, rowScalar(*lo));
  if (hi) out.tree = rowBinary("min", out.tree, rowScalar(*hi));
  im.out(0, im.settle(out));
}

// "i,j->ij" of positions as numbers and a constant vector (ESM's angles: positions times inv_freq):
// a table by position of their outer product.
void einsum(Importer& im) {
  std::string eq = im.attrString("equation");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const PosTableVal* p = std::get_if<PosTableVal>(&im.in(0));
  const ConstVal* c = im.node().input_size() == 2 ? std::get_if<ConstVal>(&im.in(1)) : nullptr;
  if (eq != "i,j->ij" || !p || !c || p->table.shape.size() != 1 || c->t.shape.size() != 1 || !c->t.isFloat())
    im.refuse("an Einsum \"" + eq + "\" other than the outer product of the positions and a vector (\"i,j->ij\")");
  const int64_t rows = p->table.shape[0], width = c->t.shape[0];
  std::vector<float> outer(size_t(rows * width));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < width; ++k)
      outer[size_t(r * width + k)] = float(p->table.at(size_t(r)) * c->t.at(size_t(k)));
  PosTableVal out{Tensor::floats(outer, {rows, width}), p->layout, p->name + ".outer"};
  out.layout.dims.push_back(Dim{{Atom::Kind::Feat, width}});
  im.out(0, out);
}

template <const char* Fn>
void binaryOp(Importer& im) {
  binary(im, Fn);
}
template <const char* Fn>
void unaryOp(Importer& im) {
  unary(im, Fn);
}

constexpr char kAdd[] = "add", kSub[] = "sub", kMul[] = "mul", kDiv[] = "div", kPow[] = "pow", kMax[] = "max",
               kMin[] = "min", kEqual[] = "equal", kLess[] = "less", kGreater[] = "greater", kAnd[] = "and",
               kOr[] = "or";
constexpr char kSqrt[] = "sqrt", kReciprocal[] = "reciprocal", kNeg[] = "neg", kErf[] = "erf", kTanh[] = "tanh",
               kSigmoid[] = "sigmoid", kRelu[] = "relu", kExp[] = "exp", kAbs[] = "abs", kNot[] = "not", kCos[] = "cos",
               kSin[] = "sin";

}  // namespace

void addMathOps(OpTable& t) {
  t["Add"] = binaryOp<kAdd>;
  t["Sub"] = binaryOp<kSub>;
  t["Mul"] = binaryOp<kMul>;
  t["Div"] = binaryOp<kDiv>;
  t["Pow"] = binaryOp<kPow>;
  t["Max"] = binaryOp<kMax>;
  t["Min"] = binaryOp<kMin>;
  t["Equal"] = binaryOp<kEqual>;
  t["Less"] = binaryOp<kLess>;
  t["Greater"] = binaryOp<kGreater>;
  t["And"] = binaryOp<kAnd>;
  t["Or"] = binaryOp<kOr>;
  t["Sqrt"] = unaryOp<kSqrt>;
  t["Reciprocal"] = unaryOp<kReciprocal>;
  t["Neg"] = unaryOp<kNeg>;
  t["Erf"] = unaryOp<kErf>;
  t["Tanh"] = unaryOp<kTanh>;
  t["Sigmoid"] = unaryOp<kSigmoid>;
  t["Relu"] = unaryOp<kRelu>;
  t["Exp"] = unaryOp<kExp>;
  t["Abs"] = unaryOp<kAbs>;
  t["Not"] = unaryOp<kNot>;
  t["Cos"] = unaryOp<kCos>;
  t["Sin"] = unaryOp<kSin>;
  t["Einsum"] = einsum;
  t["Where"] = where;
  t["Clip"] = clip;
}

}  // namespace kime::onnx_import
