#include "Templates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>

#include "kime/core/Eltwise.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

// What the Graph ops made of `a`'s expression are named after: the ONNX value that holds it, or
// (an expression just made) the node's output.
std::string nameFor(const Importer& im, const ActVal& a) {
  return !a.origin.empty() && a.originTree == a.tree ? a.origin : im.hint();
}

// The activations a pointwise expression is tried as, identity first.
const std::vector<std::pair<const char*, std::optional<eltwise::Fn>>>& activations() {
  static const std::vector<std::pair<const char*, std::optional<eltwise::Fn>>> fns = {
      {"identity", std::nullopt},       {"relu", eltwise::Fn::relu},
      {"gelu", eltwise::Fn::gelu},      {"gelu_tanh", eltwise::Fn::gelu_tanh},
      {"silu", eltwise::Fn::silu},      {"tanh", eltwise::Fn::tanh},
      {"sigmoid", eltwise::Fn::sigmoid}};
  return fns;
}

OpKind opOf(eltwise::Fn f) {
  switch (f) {
    case eltwise::Fn::relu:
      return OpKind::Relu;
    case eltwise::Fn::gelu:
      return OpKind::Gelu;
    case eltwise::Fn::gelu_tanh:
      return OpKind::GeluTanh;
    case eltwise::Fn::silu:
      return OpKind::Silu;
    case eltwise::Fn::tanh:
      return OpKind::Tanh;
    default:
      return OpKind::Sigmoid;
  }
}

struct Pointwise {
  std::optional<eltwise::Fn> fn;  // none: identity
  std::vector<double> scale, shift;
  bool isIdentity() const {
    for (size_t i = 0; i < scale.size(); ++i)
      if (std::fabs(scale[i] - 1) > 1e-6 || std::fabs(shift[i]) > 1e-6) return false;
    return true;
  }
};

// f(x) = scale * fn(x) + shift, feature by feature, fitted on samples across the activations'
// shapes (their kinks and tails) and checked to 1e-5 of the values.
std::optional<Pointwise> fitPointwise(const RowExpr& tree, int64_t width) {
  std::vector<double> ts;
  for (int j = 0; j <= 40; ++j) ts.push_back(-6.0 + 12.0 * j / 40);
  // Far samples too: a clamp (ReLU6, Clip(x, -10, 10)) matches an activation near 0 only.
  for (double t : {-0.31, 0.07, 0.73, 2.51, -30.0, 30.0, -1e3, 1e3, -1e6, 1e6}) ts.push_back(t);
  std::vector<std::vector<double>> f;
  for (double t : ts) f.push_back(evalRow(tree, std::vector<double>(size_t(width), t), 0));
  const size_t n = ts.size(), features = f[0].size();
  for (const auto& [name, fn] : activations()) {
    std::vector<double> g(n);
    for (size_t j = 0; j < n; ++j) g[j] = fn ? eltwise::apply(*fn, &ts[j]) : ts[j];
    Pointwise p{fn, std::vector<double>(features), std::vector<double>(features)};
    bool ok = true;
    for (size_t i = 0; i < features && ok; ++i) {
      double sg = 0, sgg = 0, sf = 0, sgf = 0;
      for (size_t j = 0; j < n; ++j) sg += g[j], sgg += g[j] * g[j], sf += f[j][i], sgf += g[j] * f[j][i];
      const double det = double(n) * sgg - sg * sg;
      p.scale[i] = (double(n) * sgf - sg * sf) / det;
      p.shift[i] = (sf - p.scale[i] * sg) / double(n);
      for (size_t j = 0; j < n && ok; ++j)
        ok = std::fabs(f[j][i] - (p.scale[i] * g[j] + p.shift[i])) <= 1e-5 * (1 + std::fabs(f[j][i]));
    }
    if (ok) return p;
  }
  return std::nullopt;
}

// `scale * x + shift` of rows gathered from a table, as a gather from a new table of the rows so
// changed (a constant row added to the token embeddings: HF's token types when none are given).
// New nodes, not the old ones changed: whatever else reads the old rows keeps them.
std::optional<ActVal> foldIntoTable(Importer& im, const ActVal& a, const Pointwise& p, const Node& gather) {
  const TensorData* table = im.graph().weightData(gather.operands[0]);
  if (!table || table->shape.size() != 2 || table->shape[1] != a.width) return std::nullopt;
  std::vector<float> rows(table->values.size());
  const size_t width = size_t(a.width);
  for (size_t k = 0; k < rows.size(); ++k) rows[k] = float(table->values[k] * p.scale[k % width] + p.shift[k % width]);
  const std::vector<int64_t> shape = table->shape;
  const shapes::DType dtype = table->dtype;
  const std::string index = gather.operands[1], name = gather.operands[0];
  const std::string w = im.graph().weight(name + ".shifted", shape, std::move(rows), dtype);
  return ActVal::rows(im.graph().node(OpKind::GatherRows, im.hint(), {w, index}), a.width, a.layout);
}

// A shift of a sum of rows (word + position embeddings, then the type row) moved into a table
// that one addend gathers: a new sum of the shifted rows and the other addend.
std::optional<ActVal> foldIntoAddend(Importer& im, const ActVal& a, const Pointwise& p, const Node& sum) {
  if (!std::all_of(p.scale.begin(), p.scale.end(), [](double s) { return std::fabs(s - 1) <= 1e-12; }))
    return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const Node* addend = im.graph().producer(sum.operands[k]);
    if (!addend || addend->kind != OpKind::GatherRows) continue;
    const std::string other = sum.operands[1 - k];
    const Node gather = *addend;  // a copy: making nodes moves the graph's node storage
    if (auto shifted = foldIntoTable(im, ActVal::rows(sum.operands[k], a.width, a.layout), p, gather))
      return ActVal::rows(im.graph().node(OpKind::Add, im.hint(), {shifted->value, other}), a.width, a.layout);
  }
  return std::nullopt;
}

// Moves `scale * x + shift` (per feature) into the linear, norm or table gather that computes x
// (for a shift, a table one addend of x gathers), where `alone` (nothing else reads x); none where
// it cannot.
std::optional<ActVal> foldInto(Importer& im, const ActVal& a, const Pointwise& p, bool alone) {
  Node* n = im.graph().producer(a.value);
  if (n && n->kind == OpKind::GatherRows) return foldIntoTable(im, a, p, Node(*n));
  if (n && n->kind == OpKind::Add)
    if (auto done = foldIntoAddend(im, a, p, Node(*n))) return done;
  const bool noShift = std::all_of(p.shift.begin(), p.shift.end(), [](double b) { return std::fabs(b) <= 1e-12; });
  const bool foldable =
      alone && n && im.graph().readers(a.value) == 0 &&
      (n->kind == OpKind::Linear || n->kind == OpKind::LayerNorm || (n->kind == OpKind::RmsNorm && noShift));
  TensorData* w = foldable ? im.graph().weightData(n->operands[1]) : nullptr;
  TensorData* b =
      w && n->kind != OpKind::RmsNorm && !n->operands[2].empty() ? im.graph().weightData(n->operands[2]) : nullptr;
  if (!w || (n->kind != OpKind::RmsNorm && !n->operands[2].empty() && !b)) return std::nullopt;
  const size_t outputs = size_t(a.width), per = w->values.size() / outputs;
  for (size_t o = 0; o < outputs; ++o)
    for (size_t k = 0; k < per; ++k) w->values[o * per + k] = float(w->values[o * per + k] * p.scale[o]);
  if (n->kind != OpKind::RmsNorm && !(noShift && !b)) {
    if (!b) {
      n->operands[2] = im.graph().weight(n->name + ".bias", {a.width}, std::vector<float>(outputs, 0.0f));
      b = im.graph().weightData(n->operands[2]);
    }
    for (size_t o = 0; o < outputs; ++o) b->values[o] = float(b->values[o] * p.scale[o] + p.shift[o]);
  }
  ActVal out = a;
  out.tree = nullptr;
  return out;
}

ActVal foldAffine(Importer& im, const ActVal& a, const Pointwise& p, const RowExpr* tree) {
  auto done = foldInto(im, a, p, im.heldOnlyThrough(a.value, tree));
  if (!done)
    im.refuse("scales or shifts the features of " + describe(a.layout) +
              " where kime cannot fold that into the linear or norm that computes them");
  return *done;
}

ActVal pointwise(Importer& im, const ActVal& a) {
  const auto p = fitPointwise(*a.tree, a.width);
  if (!p)
    im.refuse(
        "computes a function of each element that is none of kime's (identity, relu, gelu, gelu_tanh, "
        "silu, tanh, sigmoid, each times a scale plus a shift per feature)");
  ActVal source = a;
  source.tree = nullptr;
  if (!p->fn) return p->isIdentity() ? source : foldAffine(im, source, *p, a.tree.get());
  if (!p->isIdentity())
    im.refuse(std::string("computes a scale or shift of ") + eltwise::name(*p->fn) +
              " per feature, which kime does not fold");
  source.value = im.graph().node(opOf(*p->fn), nameFor(im, a), {a.value});
  return source;
}

std::vector<std::vector<double>> sampleRows(int64_t width) {
  std::mt19937_64 rng(20261207);
  std::normal_distribution<double> normal(0.5, 1.0);
  std::vector<std::vector<double>> rows;
  for (double scale : {1.0, 1.0, 1e-3, 1e-5, 1e-7}) {
    std::vector<double> r(static_cast<size_t>(width));
    for (double& x : r) x = normal(rng) * scale;
    rows.push_back(r);
  }
  return rows;
}

std::vector<double> normOf(const std::vector<double>& r, double eps, bool layer) {
  double mean = 0, sq = 0;
  for (double x : r) mean += x;
  mean /= double(r.size());
  for (double x : r) sq += layer ? (x - mean) * (x - mean) : x * x;
  const double inv = 1 / std::sqrt(sq / double(r.size()) + eps);
  std::vector<double> out;
  for (double x : r) out.push_back((layer ? x - mean : x) * inv);
  return out;
}

// The expression as an RMS or layer norm of its row, with a gain and bias per feature.
std::optional<ActVal> asNorm(Importer& im, const ActVal& a) {
  const RowExpr& tree = *a.tree;
  if (tree.size() != a.width || a.width < 2) return std::nullopt;
  const auto rows = sampleRows(a.width);
  std::vector<std::vector<double>> f;
  for (const auto& r : rows) f.push_back(evalRow(tree, r, 0));
  for (bool layer : {true, false})
    for (double eps : traitsOf(tree).constants) {
      if (!(eps > 0 && eps < 0.1)) continue;
      std::vector<std::vector<double>> n;
      for (const auto& r : rows) n.push_back(normOf(r, eps, layer));
      std::vector<double> w(size_t(a.width)), b(size_t(a.width));
      bool ok = true;
      for (size_t i = 0; i < w.size() && ok; ++i) {
        const double dn = n[0][i] - n[1][i];
        if (std::fabs(dn) < 1e-6) return std::nullopt;
        w[i] = (f[0][i] - f[1][i]) / dn, b[i] = f[0][i] - w[i] * n[0][i];
        for (size_t k = 0; k < rows.size() && ok; ++k)
          ok = std::fabs(f[k][i] - (w[i] * n[k][i] + b[i])) <= 1e-4 * (1 + std::fabs(f[k][i]));
        if (!layer && std::fabs(b[i]) > 1e-6) ok = false;
      }
      if (!ok) continue;
      const std::vector<float> wf(w.begin(), w.end()), bf(b.begin(), b.end());
      const std::string name = nameFor(im, a);
      const std::string gain = im.graph().weight(name + ".weight", {a.width}, wf);
      std::vector<std::string> operands = {a.value, gain};
      if (layer) operands.push_back(im.graph().weight(name + ".bias", {a.width}, bf));
      ActVal out = a;
      out.tree = nullptr;
      out.value = im.graph().node(layer ? OpKind::LayerNorm : OpKind::RmsNorm, name, operands, {asWritten(eps)});
      return out;
    }
  return std::nullopt;
}

// `v` to `digits` significant digits, as text.
std::string shortest(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::vector<double> ropeOf(const std::vector<double>& x, int64_t pos, int64_t hd, double theta) {
  std::vector<double> out(x.size());
  const int64_t half = hd / 2;
  for (size_t g = 0; g < x.size() / size_t(hd); ++g)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = double(pos) * std::pow(theta, -2.0 * double(i) / double(hd));
      const size_t a = g * size_t(hd) + size_t(i), b = a + size_t(half);
      out[a] = x[a] * std::cos(angle) - x[b] * std::sin(angle);
      out[b] = x[b] * std::cos(angle) + x[a] * std::sin(angle);
    }
  return out;
}

int64_t positionRows(const RowExpr& e) {
  int64_t rows = e.op == RowExpr::Op::PosConst ? e.posRows : 0;
  for (const RowExprPtr& a : e.args) rows = std::max(rows, positionRows(*a));
  return rows;
}

// The expression as rotate-half RoPE of its row, per group (head), by the token's position.
std::optional<ActVal> asRope(Importer& im, const ActVal& a) {
  const RowExpr& tree = *a.tree;
  const int64_t hd = tree.width, half = hd / 2;
  if (tree.size() != a.width || hd < 2 || hd % 2) return std::nullopt;
  // The angles at position 1 give theta.
  std::vector<double> angles;
  for (int64_t i = 0; i < half; ++i) {
    std::vector<double> e(size_t(a.width), 0.0);
    e[size_t(i)] = 1;
    const std::vector<double> f = evalRow(tree, e, 1);
    angles.push_back(std::atan2(f[size_t(i + half)], f[size_t(i)]));
  }
  double theta = 10000;
  if (half > 1) {
    if (!(angles[1] > 0 && angles[1] < 1)) return std::nullopt;
    theta = std::pow(angles[1], -double(hd) / 2);
  }
  const int64_t rows = std::max<int64_t>(positionRows(tree), 2);
  auto isRope = [&](double t, double tolerance) {
    for (int64_t p : {int64_t(0), int64_t(1), int64_t(3), rows - 1})
      for (const auto& r : sampleRows(a.width)) {
        const std::vector<double> f = evalRow(tree, r, p), want = ropeOf(r, p, hd, t);
        double peak = 0;
        for (double x : r) peak = std::max(peak, std::fabs(x));
        for (size_t i = 0; i < f.size(); ++i)
          if (std::fabs(f[i] - want[i]) > tolerance * (peak + 1e-30) + 1e-12) return false;
      }
    return true;
  };
  if (!isRope(theta, 1e-4)) return std::nullopt;
  // f32 tables give theta to a few digits (9999.9986 for 10000): the roundest theta that computes
  // the tables as closely is the model's.
  for (int digits = 1; digits <= 7; ++digits) {
    const double round = std::stod(shortest(theta, digits));
    if (isRope(round, 1e-5)) {
      theta = round;
      break;
    }
  }
  ActVal out = a;
  out.tree = nullptr;
  out.value =
      im.graph().node(OpKind::Rope, nameFor(im, a), {a.value, im.graph().positions()}, {double(a.width / hd), theta});
  return out;
}

// The one slice of the source row that the whole expression reads through (every path to the row
// goes through it), or null.
const RowExpr* soleSlice(const RowExpr& e) {
  if (e.op == RowExpr::Op::X) return nullptr;
  if (e.op == RowExpr::Op::Slice && e.groups == 1 && e.args[0]->op == RowExpr::Op::X) return &e;
  const RowExpr* found = nullptr;
  for (const RowExprPtr& a : e.args) {
    if (a->op == RowExpr::Op::Const || a->op == RowExpr::Op::PosConst) continue;
    const RowExpr* s = soleSlice(*a);
    if (!s || (found && (found->start != s->start || found->width != s->width))) return nullptr;
    found = s;
  }
  return found;
}

// The expression with that slice read as the new source row.
RowExprPtr withoutSlice(const RowExprPtr& e, const RowExpr* slice) {
  if (e.get() == slice || (e->op == RowExpr::Op::Slice && e->args[0]->op == RowExpr::Op::X && slice &&
                           e->start == slice->start && e->width == slice->width))
    return rowSource(1, slice->width);
  if (e->args.empty()) return e;
  auto copy = std::make_shared<RowExpr>(*e);
  for (RowExprPtr& arg : copy->args) arg = withoutSlice(arg, slice);
  // What it holds besides elementwise functions, again: the slice may have been all of it.
  copy->slices = copy->op == RowExpr::Op::Slice;
  for (const RowExprPtr& arg : copy->args) copy->slices = copy->slices || arg->slices;
  return copy;
}

// A slice of a linear's outputs (one of q, k, v packed in one projection) is a linear of its own;
// what the expression computes of it stays pending on that one.
std::optional<ActVal> peelSlice(Importer& im, const ActVal& a) {
  const RowExpr* slice = soleSlice(*a.tree);
  if (!slice) return std::nullopt;
  const Node* n = im.graph().producer(a.value);
  TensorData* w = n && n->kind == OpKind::Linear ? im.graph().weightData(n->operands[1]) : nullptr;
  TensorData* b = w && !n->operands[2].empty() ? im.graph().weightData(n->operands[2]) : nullptr;
  if (!w || (!n->operands[2].empty() && !b)) return std::nullopt;
  const size_t in = w->values.size() / size_t(a.width);
  const size_t from = size_t(slice->start), count = size_t(slice->width);
  std::vector<float> ws(w->values.begin() + int64_t(from * in), w->values.begin() + int64_t((from + count) * in));
  const std::string hint = n->name + "." + std::to_string(from);
  std::vector<std::string> operands = {
      n->operands[0], im.graph().weight(hint + ".weight", {int64_t(count), int64_t(in)}, ws, w->dtype), ""};
  if (b)
    operands[2] = im.graph().weight(
        hint + ".bias", {int64_t(count)},
        std::vector<float>(b->values.begin() + int64_t(from), b->values.begin() + int64_t(from + count)));
  ActVal out = a;
  out.width = int64_t(count);
  out.value = im.graph().node(OpKind::Linear, hint, operands);
  out.tree = withoutSlice(a.tree, slice);
  if (out.tree->op == RowExpr::Op::X) out.tree = nullptr;
  return out;
}

// A gated MLP's halves from one linear (T5 v1.1's and ModernBERT's `a, g = wi(x).chunk(2)`, then
// act(a) * g, or a * act(g)): each side of the product reads its own slice of the linear's row;
// each becomes a linear of its own (with what it computes of its slice), their product a mul.
std::optional<ActVal> peelGatedPair(Importer& im, const ActVal& a) {
  const RowExpr& e = *a.tree;
  if (e.op != RowExpr::Op::Binary || e.fn != "mul" || e.args.size() != 2) return std::nullopt;
  const RowExpr *left = soleSlice(*e.args[0]), *right = soleSlice(*e.args[1]);
  if (!left || !right || left->width != right->width) return std::nullopt;
  ActVal sides[2] = {a, a};
  for (int k = 0; k < 2; ++k) {
    sides[k].tree = e.args[size_t(k)];
    auto peeled = peelSlice(im, sides[k]);
    if (!peeled) return std::nullopt;
    sides[k] = im.materialize(*peeled);
  }
  ActVal out = a;
  out.width = left->width;
  out.value = im.graph().node(OpKind::Mul, nameFor(im, a), {sides[0].value, sides[1].value});
  out.tree = nullptr;
  return out;
}

}  // namespace

ActVal Importer::materialize(const ActVal& a) {
  if (!a.tree) return a;
  auto cached = materialized_.find(a.tree.get());
  if (cached != materialized_.end()) {
    ActVal out = cached->second.second;
    out.layout = a.layout;
    return out;
  }
  const ActVal done = materializeOnce(a);
  materialized_[a.tree.get()] = {a.tree, done};
  return done;
}

ActVal Importer::materializeOnce(const ActVal& a) {
  if (traitsOf(*a.tree).slices) {
    if (auto peeled = peelSlice(*this, a)) return materialize(*peeled);
    if (auto gated = peelGatedPair(*this, a)) return *gated;
  }
  const RowExprTraits t = traitsOf(*a.tree);
  std::optional<ActVal> done;
  if (!t.reduces && !t.slices && !t.positional) return pointwise(*this, a);
  if (t.reduces && !t.positional) done = asNorm(*this, a);
  if (t.positional) done = asRope(*this, a);
  if (!done)
    refuse(std::string("computes ") +
           (t.positional ? "a function of the positions that is not rotate-half RoPE"
            : t.reduces  ? "a reduction of each row that is not an RMS or layer norm"
                         : "a slice of rows that is not one of a linear's outputs") +
           " (" + describe(a.layout) + ")");
  return *done;
}

ActVal Importer::settle(const ActVal& a) {
  if (!a.tree) return a;
  const RowExprTraits t = traitsOf(*a.tree);
  std::optional<ActVal> done;
  if (t.reduces && !t.positional && !t.slices) done = asNorm(*this, a);
  if (t.positional && t.slices && !t.reduces) done = asRope(*this, a);
  return done ? *done : a;
}

ActVal Importer::toTokens(const ActVal& a) {
  const ActVal m = materialize(a);
  ActVal out = m;
  out.value = graph_.node(OpKind::ExpandSeqs, hint() + ".tokens", {m.value, "cu"});
  return out;
}

std::optional<ActVal> foldConstant(Importer& im, const ActVal& a, const std::string& fn, const RowExpr& c,
                                   bool rowsFirst) {
  if (a.tree || c.op != RowExpr::Op::Const || !im.readOnlyHere(a.value)) return std::nullopt;
  const size_t n = size_t(a.width);
  if (c.values.size() != 1 && c.values.size() != n) return std::nullopt;
  Pointwise p{std::nullopt, std::vector<double>(n, 1.0), std::vector<double>(n, 0.0)};
  for (size_t i = 0; i < n; ++i) {
    const double v = c.values[c.values.size() == 1 ? 0 : i];
    if (fn == "add")
      p.shift[i] = v;
    else if (fn == "sub")
      rowsFirst ? p.shift[i] = -v : (p.scale[i] = -1, p.shift[i] = v);
    else if (fn == "mul")
      p.scale[i] = v;
    else if (fn == "div" && rowsFirst && v != 0)
      p.scale[i] = 1 / v;
    else
      return std::nullopt;
  }
  return foldInto(im, a, p, true);
}

// The shortest decimal that is the same f32 as `v` (an epsilon as the model wrote it: 1e-06, not
// 9.9999999747524271e-07).
double asWritten(double v) {
  for (int digits = 1; digits <= 9; ++digits) {
    const double d = std::stod(shortest(v, digits));
    if (float(d) == float(v)) return d;
  }
  return v;
}

ActVal materializeScaled(Importer& im, const ActVal& given, double& scale) {
  if (!given.tree) return given;
  const std::optional<ActVal> peeled = traitsOf(*given.tree).slices ? peelSlice(im, given) : std::nullopt;
  const ActVal& a = peeled ? *peeled : given;
  if (!a.tree) return a;
  const RowExprTraits t = traitsOf(*a.tree);
  if (!t.reduces && !t.slices && !t.positional) {
    const auto p = fitPointwise(*a.tree, a.width);
    const bool uniform =
        p && !p->fn && std::all_of(p->shift.begin(), p->shift.end(), [](double b) { return std::fabs(b) <= 1e-9; }) &&
        std::all_of(p->scale.begin(), p->scale.end(),
                    [&](double s) { return std::fabs(s - p->scale[0]) <= 1e-9 * std::fabs(p->scale[0]); });
    if (uniform) {
      scale *= p->scale[0];
      ActVal out = a;
      out.tree = nullptr;
      return out;
    }
  }
  return im.materialize(a);
}

}  // namespace kime::onnx_import
