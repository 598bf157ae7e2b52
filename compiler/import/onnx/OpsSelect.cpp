// The ops that pick: Gather (tables by ids, types and positions; a sequence's first token),
// Slice (a table's rows by L, the first token, features), Range (the positions), and the
// comparisons and selections that build masks.
#include <algorithm>
#include <cmath>
#include <limits>

#include "OpsCommon.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

constexpr int64_t kToTheEnd = int64_t(1) << 40;  // an end past any axis a model has

// A table's rows by an index: a Graph gather (token ids, question types), or rows by position
// left for their reader (a position table added, or cos/sin read by RoPE).
void gatherTable(Importer& im, const Tensor& table, const IndexVal& index) {
  if (table.shape.size() < 2 || !table.isFloat() || table.size() == 0)
    im.refuse("gathers from " + describe(table) + ": kime's tables are float matrices [rows, width], not empty");
  const int64_t rows = table.shape[0];
  int64_t width = 1;
  for (size_t d = 1; d < table.shape.size(); ++d) width *= table.shape[d];
  Layout l = index.layout;
  for (size_t d = 1; d < table.shape.size(); ++d)
    l.dims.push_back(table.shape[d] == 1 ? Dim{} : Dim{{Atom::Kind::Feat, table.shape[d]}});
  if (index.which == IndexVal::Which::Positions) {
    if (index.offset == 0) return im.out(0, PosTableVal{table, l, im.node().input(0)});
    // Positions from `offset` on: the table's rows from there (RoBERTa's padding_idx + 1).
    if (index.offset < 0 || index.offset >= rows)
      im.refuse("reads positions from " + std::to_string(index.offset) + " of a table of " + std::to_string(rows) +
                " rows");
    const Tensor from = constSlice(table, 0, index.offset, rows, 1);
    return im.out(0, PosTableVal{from, l, im.node().input(0) + "@" + std::to_string(index.offset)});
  }
  const std::string key = im.node().input(0);
  const std::string w = im.graph().sharedWeight(key, key, {rows, width}, table.f, table.stored);
  std::string v;
  if (index.which == IndexVal::Which::Ids) {
    im.noteVocab(rows);
    v = im.graph().node(OpKind::GatherRows, im.hint(), {w, "ids"});
  } else {
    im.noteTypes(rows);
    // token_type_ids: each token's own type (sentence pairs), the batch's per token or its qtype.
    const bool perToken = index.which == IndexVal::Which::TokenType;
    v = im.graph().node(OpKind::GatherRows, im.hint(), {w, perToken ? im.graph().tokenTypes() : "qtype"});
  }
  im.out(0, ActVal::rows(v, width, l));
}

// Rows by a constant index on one axis: a sequence's first token (on L), a dim of size 1, or one
// feature of the last axis.
void gatherRows(Importer& im, const ActVal& a, const Tensor& index, int64_t axis) {
  if (index.size() != 1) im.refuse("gathers several entries of rows along axis " + std::to_string(axis));
  const size_t d = size_t(axisIn(im, axis, a.layout.rank()));
  const int64_t k = index.intAt(0);
  const Dim& dim = a.layout.dims[d];
  ActVal out = a;
  if (dim == Dim{{Atom::Kind::Len, 1}}) {
    if (k != 0) im.refuse("picks token " + std::to_string(k) + " of each sequence: kime reads the first (CLS) only");
    const ActVal m = im.materialize(a);
    out = ActVal::rows(im.graph().node(OpKind::FirstRows, im.hint(), {m.value, "cu"}), m.width, m.layout);
  } else if (dim.empty()) {
    if (k != 0 && k != -1) im.refuse("index " + std::to_string(k) + " is past a dim of size 1");
  } else if (d + 1 == a.layout.rank() &&
             std::all_of(dim.begin(), dim.end(), [](const Atom& x) { return x.kind == Atom::Kind::Feat; })) {
    const int64_t size = a.layout.size(d).k, at = k < 0 ? k + size : k;
    if (at < 0 || at >= size) im.refuse("index " + std::to_string(k) + " is past a dim of " + std::to_string(size));
    const RowExprPtr tree = a.tree ? a.tree : rowSource(a.width / size, size);
    out.tree = rowSlice(tree, at, 1);
  } else {
    im.refuse("gathers along dim " + std::to_string(d) + " of " + describe(a.layout));
  }
  if (index.shape.empty())
    out.layout.dims.erase(out.layout.dims.begin() + int64_t(d));
  else
    out.layout.dims[d] = Dim{};
  im.out(0, out);
}

// A table's row by an index of one number over B and L (HF's token types when none are given):
// that row, a constant the tokens broadcast against.
void gatherFilled(Importer& im, const Tensor& table, const FilledVal& index, int64_t axis) {
  if (axis != 0 || table.shape.size() < 2 || !table.isFloat() || index.kind == Tensor::Kind::Float)
    im.refuse("gathers from " + describe(table) + " by " + describe(index.layout) + " filled with one number");
  const int64_t row = int64_t(index.v);
  if (row < 0 || row >= table.shape[0])
    im.refuse("gathers row " + std::to_string(row) + " of " + describe(table) + ", past its rows");
  Tensor picked = constGather(table, Tensor::integers({row}, {}), 0);
  std::vector<int64_t> shape(index.layout.rank(), 1);
  shape.insert(shape.end(), table.shape.begin() + 1, table.shape.end());
  picked.shape = shape;
  im.out(0, ConstVal{picked});
}

void gather(Importer& im) {
  const Value &data = im.in(0), &index = im.in(1);
  const int64_t axis = im.attrInt("axis", 0);
  const ConstVal* ci = std::get_if<ConstVal>(&index);
  if (auto c = std::get_if<ConstVal>(&data); c && ci)
    return im.out(0, ConstVal{constGather(c->t, ci->t, axisIn(im, axis, c->t.shape.size()))});
  if (auto s = std::get_if<SymVal>(&data); s && ci) {
    std::vector<SymInt> picked;
    for (size_t k = 0; k < ci->t.size(); ++k) {
      int64_t i = ci->t.intAt(k);
      if (i < 0) i += int64_t(s->v.size());
      if (i < 0 || i >= int64_t(s->v.size())) im.refuse("index " + std::to_string(i) + " is past the sizes");
      picked.push_back(s->v[size_t(i)]);
    }
    if (std::all_of(picked.begin(), picked.end(), [](const SymInt& x) { return x.isConst(); })) {
      std::vector<int64_t> ints;
      for (const SymInt& x : picked) ints.push_back(x.k);
      return im.out(0, ConstVal{Tensor::integers(ints, ci->t.shape)});
    }
    return im.out(0, SymVal{picked, ci->t.shape.empty()});
  }
  if (auto c = std::get_if<ConstVal>(&data)) {
    if (auto f = std::get_if<FilledVal>(&index)) return gatherFilled(im, c->t, *f, axis);
    if (auto i = std::get_if<IndexVal>(&index)) {
      if (axis != 0) im.refuse("gathers a table along axis " + std::to_string(axis) + ", not its rows");
      return gatherTable(im, c->t, *i);
    }
  }
  if (auto a = std::get_if<ActVal>(&data); a && ci) return gatherRows(im, *a, ci->t, axis);
  im.refuse("gathers from " + describeValue(data) + " by " + describeValue(index));
}

// Whether row `r` of an integer table along `axis` ... holds 0, 1, 2, ...: a position buffer.
bool isArange(const Tensor& t, size_t axis) {
  if (t.isFloat()) return false;
  const int64_t n = t.shape[axis];
  const size_t inner = [&] {
    size_t s = 1;
    for (size_t d = axis + 1; d < t.shape.size(); ++d) s *= size_t(t.shape[d]);
    return s;
  }();
  for (size_t k = 0; k < t.size(); ++k)
    if (t.i[k] != int64_t(k / inner % size_t(n))) return false;
  return true;
}

// A constant sliced to its first L entries along `axis`: positions (a position buffer) or a table
// by position (cos, sin, learned positions).
void slicePositions(Importer& im, const Tensor& t, size_t axis) {
  if (isArange(t, axis)) {
    Layout l = staticLayout(t.shape);
    l.dims[axis] = Dim{{Atom::Kind::Len, 1}};
    for (size_t d = 0; d < l.rank(); ++d)
      if (d != axis && !l.dims[d].empty()) im.refuse("slices a position buffer of more than one row by L");
    return im.out(0, IndexVal{IndexVal::Which::Positions, l});
  }
  if (!t.isFloat() && t.size() && t.isUniform()) {  // a buffer of one number (HF's token types of zeros)
    Layout l = staticLayout(t.shape);
    l.dims[axis] = Dim{{Atom::Kind::Len, 1}};
    return im.out(0, FilledVal{double(t.intAt(0)), t.kind, l});
  }
  if (axis != 0 || !t.isFloat())
    im.refuse("slices a constant " + describe(t) + " by L along axis " + std::to_string(axis));
  Layout l = staticLayout(t.shape);
  l.dims[0] = Dim{{Atom::Kind::Len, 1}};
  im.out(0, PosTableVal{t, l, im.node().input(0)});
}

// One axis of a slice of rows (or of a mask or index, which may only be kept whole).
Value sliceAxis(Importer& im, const Value& v, size_t d, const SymInt& start, const SymInt& end, int64_t step) {
  const Layout l = *layoutOf(v);
  const Dim& dim = l.dims[d];
  const bool whole = start == SymInt::of(0) && step == 1 &&
                     (end.k >= kToTheEnd || (!end.isConst() && end == l.size(d)) || end == l.size(d));
  if (whole) return v;
  const ActVal* a = std::get_if<ActVal>(&v);
  if (!a || step != 1 || !start.isConst() || !end.isConst())
    im.refuse("slices [" + start.str() + ", " + end.str() + ") of dim " + std::to_string(d) + " of " +
              describeValue(v));
  if (dim == Dim{{Atom::Kind::Len, 1}}) {
    if (start.k != 0 || end.k != 1)
      im.refuse("slices tokens [" + start.str() + ", " + end.str() +
                ") of each sequence: kime reads the first (CLS) only");
    const ActVal m = im.materialize(*a);
    ActVal out = ActVal::rows(im.graph().node(OpKind::FirstRows, im.hint(), {m.value, "cu"}), m.width, m.layout);
    out.layout.dims[d] = Dim{};
    return out;
  }
  const bool features =
      !dim.empty() && std::all_of(dim.begin(), dim.end(), [](const Atom& x) { return x.kind == Atom::Kind::Feat; });
  if (!features || d + 1 != l.rank()) im.refuse("slices dim " + std::to_string(d) + " of " + describe(l));
  const int64_t size = l.size(d).k, from = std::clamp<int64_t>(start.k < 0 ? start.k + size : start.k, 0, size),
                to = std::clamp<int64_t>(end.k < 0 ? end.k + size : end.k, 0, size);
  if (to <= from) im.refuse("slices no feature of " + describe(l));
  ActVal out = *a;
  out.tree = rowSlice(a->tree ? a->tree : rowSource(a->width / size, size), from, to - from);
  out.layout.dims[d] = Dim{{Atom::Kind::Feat, to - from}};
  return out;
}

// ONNX's Slice of one axis of a constant: starts and ends past the axis clamped as the spec says
// ([0, n] going forward; start [0, n - 1] and end [-1, n - 1] going backward).
Tensor sliceConstant(const Importer& im, const Tensor& t, size_t d, int64_t start, int64_t end, int64_t step) {
  if (step == 0) im.refuse("a slice step of 0");
  const int64_t n = t.shape[d];
  auto at = [&](int64_t x, int64_t lo, int64_t hi) {
    if (x < 0) x = x < -n ? -n - 1 : x + n;  // keeps far negatives below the range
    return std::clamp<int64_t>(x, lo, hi);
  };
  const int64_t from = step > 0 ? at(start, 0, n) : at(start, 0, n - 1);
  const int64_t to = step > 0 ? at(end, 0, n) : at(end, -1, n - 1);
  return constSlice(t, int64_t(d), from, to, step);
}

void slice(Importer& im) {
  const Value& v = im.in(0);
  std::vector<SymInt> starts, ends;
  std::vector<int64_t> axes, steps;
  if (im.hasAttr("starts")) {  // opset < 10
    for (int64_t s : im.attrInts("starts")) starts.push_back(SymInt::of(s));
    for (int64_t e : im.attrInts("ends")) ends.push_back(SymInt::of(e));
    axes = im.attrInts("axes");
  } else {
    starts = im.symIn(1, "the starts"), ends = im.symIn(2, "the ends");
    if (im.has(3))
      for (const SymInt& a : im.symIn(3, "the axes")) axes.push_back(a.k);
    if (im.has(4))
      for (const SymInt& s : im.symIn(4, "the steps")) steps.push_back(s.k);
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  steps.resize(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size())
    im.refuse("has starts, ends and axes of different lengths");
  // A constant's slice by L (a table's rows [0, L)) comes last, after its other axes.
  std::vector<size_t> order;
  for (size_t k = 0; k < starts.size(); ++k)
    if (ends[k].isConst() && starts[k].isConst()) order.push_back(k);
  for (size_t k = 0; k < starts.size(); ++k)
    if (!(ends[k].isConst() && starts[k].isConst())) order.push_back(k);
  Value cur = v;
  for (size_t k : order) {
    const size_t d = size_t(axisIn(im, axes[k], rankOf(cur)));
    if (auto c = std::get_if<ConstVal>(&cur)) {
      if (ends[k] == SymInt::len() && starts[k] == SymInt::of(0) && steps[k] == 1) {
        if (k != order.back()) im.refuse("slices a constant by L along two axes");
        return slicePositions(im, c->t, d);
      }
      if (!starts[k].isConst() || !ends[k].isConst()) im.refuse("slices a constant by " + ends[k].str());
      cur = ConstVal{sliceConstant(im, c->t, d, starts[k].k, ends[k].k, steps[k])};
    } else if (auto sv = std::get_if<SymVal>(&cur)) {
      const int64_t n = int64_t(sv->v.size());
      if (!starts[k].isConst() || !ends[k].isConst() || steps[k] != 1) im.refuse("slices sizes by sizes");
      const int64_t from = std::clamp<int64_t>(starts[k].k < 0 ? starts[k].k + n : starts[k].k, 0, n);
      const int64_t to = std::clamp<int64_t>(ends[k].k < 0 ? ends[k].k + n : ends[k].k, 0, n);
      cur = SymVal{{sv->v.begin() + from, sv->v.begin() + std::max(from, to)}, false};
    } else {
      cur = sliceAxis(im, cur, d, starts[k], ends[k], steps[k]);
    }
  }
  im.out(0, cur);
}

// A running count along L of a number over the tokens: of 1s (RoBERTa's non-pad tokens, each one
// where a batch may not hold the padding id), each token's position plus 1; of 0s, 0.
void cumSum(Importer& im) {
  const FilledVal* f = std::get_if<FilledVal>(&im.in(0));
  if (!f || im.attrInt("exclusive", 0) || im.attrInt("reverse", 0))
    im.refuse("a CumSum of " + describeValue(im.in(0)) + ": kime counts tokens (ones over L), forward");
  const Tensor& axis = im.constIn(1, "the axis");
  if (axis.size() != 1 ||
      f->layout.dims[size_t(axisIn(im, axis.intAt(0), f->layout.rank()))] != Dim{{Atom::Kind::Len, 1}})
    im.refuse("a CumSum along another dim than L");
  if (f->v == 0) return im.out(0, *f);
  if (f->v != 1) im.refuse("a CumSum of " + std::to_string(f->v) + "s over the tokens");
  im.out(0, IndexVal{IndexVal::Which::Positions, f->layout, 1});
}

void range(Importer& im) {
  const std::vector<SymInt> start = im.symIn(0, "the start"), limit = im.symIn(1, "the limit"),
                            delta = im.symIn(2, "the delta");
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) im.refuse("takes scalars");
  if (start[0] == SymInt::of(0) && delta[0] == SymInt::of(1) && limit[0] == SymInt::len())
    return im.out(0, IndexVal{IndexVal::Which::Positions, Layout{{{{Atom::Kind::Len, 1}}}}});
  if (!start[0].isConst() || !limit[0].isConst() || !delta[0].isConst() || delta[0].k == 0)
    im.refuse("a range from " + start[0].str() + " to " + limit[0].str() + " by " + delta[0].str() +
              ": kime's positions are 0 to L");
  const long double span = (long double)limit[0].k - (long double)start[0].k;
  const long double count = std::max<long double>(0, std::ceil(span / (long double)delta[0].k));
  if (count > (long double)kMaxTensorElements)
    im.refuse("a range of more than " + std::to_string(kMaxTensorElements) + " values");
  std::vector<int64_t> v;
  for (int64_t i = 0; i < int64_t(count); ++i) v.push_back(start[0].k + i * delta[0].k);
  im.out(0, ConstVal{Tensor::integers(v, {int64_t(v.size())})});
}

void constantOfShape(Importer& im) {
  Tensor value = Tensor::scalar(0);
  if (const auto* a = im.attr("value")) value = tensorFromProto(a->t(), "ConstantOfShape");
  const std::vector<SymInt> sizes = im.symIn(0, "the shape");
  if (std::all_of(sizes.begin(), sizes.end(), [](const SymInt& s) { return s.isConst(); })) {
    std::vector<int64_t> shape;
    for (const SymInt& s : sizes) shape.push_back(s.k);
    return im.out(0, ConstVal{Tensor::filled(value, shape)});
  }
  Layout l;
  for (const SymInt& s : sizes) {
    Dim d;
    for (int i = 0; i < s.b; ++i) d.push_back({Atom::Kind::Batch, 1});
    for (int i = 0; i < s.l; ++i) d.push_back({Atom::Kind::Len, 1});
    if (s.k > 1) d.push_back({Atom::Kind::Bcast, s.k});
    l.dims.push_back(d);
  }
  int lens = 0;
  for (const Dim& d : l.dims)
    for (const Atom& a : d) lens += a.kind == Atom::Kind::Len;
  if (lens > 1)
    im.refuse("a tensor over positions x positions " + describe(sizes) +
              " is a mask between tokens (causal or banded): kime's attention reads only attention_mask's key "
              "mask, every token of a sequence seeing every other");
  im.out(0, FilledVal{value.size() ? value.at(0) : 0.0, value.kind, l});
}

}  // namespace

void addSelectOps(OpTable& t) {
  t["Gather"] = gather;
  t["Slice"] = slice;
  t["Range"] = range;
  t["CumSum"] = cumSum;
  t["ConstantOfShape"] = constantOfShape;
}

}  // namespace kime::onnx_import
