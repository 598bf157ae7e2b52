// The ops that move values around rather than compute: constants, shapes and the arithmetic on
// them (folded, B and L kept symbolic), casts, reshapes, transposes, expands, slices, gathers.
#include <algorithm>
#include <cmath>
#include <limits>

#include "OpsCommon.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

// Sizes as a value: a constant where none involves B or L.
Value sizesValue(const std::vector<SymInt>& v, bool scalar) {
  if (std::all_of(v.begin(), v.end(), [](const SymInt& s) { return s.isConst(); })) {
    std::vector<int64_t> ints;
    for (const SymInt& s : v) ints.push_back(s.k);
    return ConstVal{
        Tensor::integers(ints, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(ints.size())})};
  }
  return SymVal{v, scalar};
}

void constant(Importer& im) {
  if (const auto* a = im.attr("value")) return im.out(0, ConstVal{tensorFromProto(a->t(), "Constant")});
  if (const auto* a = im.attr("value_float")) return im.out(0, ConstVal{Tensor::scalar(a->f())});
  if (const auto* a = im.attr("value_int")) return im.out(0, ConstVal{Tensor::integers({a->i()}, {})});
  if (const auto* a = im.attr("value_floats"))
    return im.out(0, ConstVal{Tensor::floats({a->floats().begin(), a->floats().end()}, {a->floats_size()})});
  if (const auto* a = im.attr("value_ints"))
    return im.out(0, ConstVal{Tensor::integers({a->ints().begin(), a->ints().end()}, {a->ints_size()})});
  im.refuse("a Constant kime does not read (sparse or strings)");
}

void identity(Importer& im) { im.out(0, im.in(0)); }

// The value of a function of the mask (or a filled tensor) once cast.
double castNumber(double v, Tensor::Kind to) {
  if (to == Tensor::Kind::Bool) return v != 0;
  if (to == Tensor::Kind::Int) return std::trunc(v);
  return v;
}

// The positions as numbers (ESM computes its rotary tables from them): a table by position of
// kPositionRows rows, row p holding p (plus the positions' offset).
PosTableVal positionsTable(const IndexVal& i) {
  std::vector<float> rows(static_cast<size_t>(kPositionRows));
  for (size_t p = 0; p < rows.size(); ++p) rows[p] = float(int64_t(p) + i.offset);
  return PosTableVal{Tensor::floats(rows, {kPositionRows}), i.layout, "positions"};
}

void cast(Importer& im) {
  const int32_t type = int32_t(im.attrInt("to", 1));
  const auto to = kindOfOnnxType(type);
  if (!to) im.refuse("casts to an element type kime does not compute with");
  const bool narrow = type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  const Value& v = im.in(0);
  if (auto c = std::get_if<ConstVal>(&v)) return im.out(0, ConstVal{constCast(c->t, *to)});
  if (auto s = std::get_if<SymVal>(&v)) {
    if (*to == Tensor::Kind::Float) im.refuse("casts the sizes " + describe(s->v) + " to float");
    return im.out(0, v);
  }
  if (auto m = std::get_if<MaskVal>(&v))
    return im.out(0, MaskVal{castNumber(m->real, *to), castNumber(m->pad, *to), *to, m->layout});
  if (auto f = std::get_if<FilledVal>(&v)) return im.out(0, FilledVal{castNumber(f->v, *to), *to, f->layout});
  const bool floats = std::holds_alternative<ActVal>(v) || std::holds_alternative<ScoresVal>(v) ||
                      std::holds_alternative<PosTableVal>(v);
  if (floats && narrow) im.refuse("rounds " + describeValue(v) + " to 16-bit floats (kime computes in f32)");
  if (floats && *to == Tensor::Kind::Float) return im.out(0, v);
  if (std::holds_alternative<IndexVal>(v) && *to == Tensor::Kind::Int) return im.out(0, v);
  if (auto i = std::get_if<IndexVal>(&v); i && i->which == IndexVal::Which::Positions && *to == Tensor::Kind::Float)
    return im.out(0, positionsTable(*i));
  if (std::holds_alternative<SeqLenVal>(v)) return im.out(0, v);
  im.refuse("casts " + describeValue(v) + " to another element type");
}

void shape(Importer& im) {
  const Value& v = im.in(0);
  std::vector<SymInt> dims;
  if (auto c = std::get_if<ConstVal>(&v))
    for (int64_t d : c->t.shape) dims.push_back(SymInt::of(d));
  else if (auto s = std::get_if<SymVal>(&v))
    dims = s->scalar ? std::vector<SymInt>{} : std::vector<SymInt>{SymInt::of(int64_t(s->v.size()))};
  else
    dims = layoutOf(v)->shape();
  const int64_t rank = int64_t(dims.size());
  int64_t start = im.attrInt("start", 0), end = im.attrInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  im.out(0, sizesValue({dims.begin() + start, dims.begin() + std::max(start, end)}, false));
}

// Axes from the attribute (opset < 13) or input 1.
std::vector<int64_t> axesOf(const Importer& im, size_t input) {
  if (im.hasAttr("axes")) return im.attrInts("axes");
  if (!im.has(input)) return {};
  const Tensor& t = im.constIn(input, "the axes");
  std::vector<int64_t> axes;
  for (size_t k = 0; k < t.size(); ++k) axes.push_back(t.intAt(k));
  return axes;
}

void unsqueeze(Importer& im) {
  const Value& v = im.in(0);
  std::vector<int64_t> axes = axesOf(im, 1);
  const size_t rank = rankOf(v) + axes.size();
  for (int64_t& a : axes) a = axisIn(im, a, rank);
  std::sort(axes.begin(), axes.end());
  if (auto c = std::get_if<ConstVal>(&v)) {
    std::vector<int64_t> shape = c->t.shape;
    for (int64_t a : axes) shape.insert(shape.begin() + a, 1);
    return im.out(0, ConstVal{constReshape(c->t, shape)});
  }
  if (auto s = std::get_if<SymVal>(&v)) {
    if (!s->scalar || axes != std::vector<int64_t>{0}) im.refuse("unsqueezes sizes into more than one dim");
    return im.out(0, SymVal{s->v, false});
  }
  Layout l = *layoutOf(v);
  for (int64_t a : axes) l.dims.insert(l.dims.begin() + a, Dim{});
  im.out(0, relayout(im, v, l));
}

void squeeze(Importer& im) {
  const Value& v = im.in(0);
  std::vector<int64_t> axes = axesOf(im, 1);
  const size_t rank = rankOf(v);
  for (int64_t& a : axes) a = axisIn(im, a, rank);
  if (auto c = std::get_if<ConstVal>(&v)) {
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d)
      if (!(axes.empty() ? c->t.shape[d] == 1 : std::count(axes.begin(), axes.end(), int64_t(d)) > 0))
        shape.push_back(c->t.shape[d]);
    return im.out(0, ConstVal{constReshape(c->t, shape)});
  }
  if (auto s = std::get_if<SymVal>(&v)) {
    if (s->v.size() != 1) im.refuse("squeezes sizes of more than one element");
    return im.out(0, SymVal{s->v, true});
  }
  Layout l = *layoutOf(v), out;
  for (size_t d = 0; d < rank; ++d) {
    const bool named = std::count(axes.begin(), axes.end(), int64_t(d)) > 0;
    if (named && !l.dims[d].empty())
      im.refuse("squeezes dim " + std::to_string(d) + " of " + describe(l) + ", which is not of size 1");
    if (!(named || (axes.empty() && l.dims[d].empty()))) out.dims.push_back(l.dims[d]);
  }
  im.out(0, relayout(im, v, out));
}

// Reshape's sizes with its 0 (copy the input's dim) and -1 (the rest) resolved.
std::vector<SymInt> reshapeTarget(const Importer& im, const std::vector<SymInt>& from, std::vector<SymInt> to) {
  const bool allowZero = im.attrInt("allowzero", 0) != 0;
  int infer = -1;
  SymInt known = SymInt::of(1), total = SymInt::of(1);
  for (const SymInt& s : from) total = total * s;
  for (size_t k = 0; k < to.size(); ++k) {
    if (to[k] == SymInt::of(0) && !allowZero) {
      if (k >= from.size())
        im.refuse("copies dim " + std::to_string(k) + " of a value of " + std::to_string(from.size()) + " dims");
      to[k] = from[k];
    }
    if (to[k] == SymInt::of(-1)) {
      if (infer >= 0) im.refuse("has two -1 sizes");
      infer = int(k);
      continue;
    }
    known = known * to[k];
  }
  if (infer >= 0) {
    auto rest = divide(total, known);
    if (!rest) im.refuse("cannot tell the -1 size: " + describe(from) + " into " + describe(to));
    to[size_t(infer)] = *rest;
  }
  return to;
}

void reshape(Importer& im) {
  const Value& v = im.in(0);
  if (auto s = std::get_if<SymVal>(&v)) return im.out(0, SymVal{s->v, false});
  std::vector<SymInt> from;
  if (auto c = std::get_if<ConstVal>(&v))
    for (int64_t d : c->t.shape) from.push_back(SymInt::of(d));
  else
    from = layoutOf(v)->shape();
  const std::vector<SymInt> to = reshapeTarget(im, from, im.symIn(1, "the shape"));
  if (auto c = std::get_if<ConstVal>(&v)) {
    std::vector<int64_t> shape;
    for (const SymInt& s : to) {
      if (!s.isConst()) im.refuse("reshapes a constant to the sizes " + describe(to));
      shape.push_back(s.k);
    }
    return im.out(0, ConstVal{constReshape(c->t, shape)});
  }
  const auto l = reshapeLayout(*layoutOf(v), to);
  if (!l) im.refuse("reshapes " + describe(*layoutOf(v)) + " to " + describe(to) + ", which splits or merges B or L");
  im.out(0, relayout(im, v, *l));
}

void transpose(Importer& im) {
  const Value& v = im.in(0);
  const size_t rank = rankOf(v);
  std::vector<int64_t> perm = im.attrInts("perm");
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(int64_t(d));
  if (auto c = std::get_if<ConstVal>(&v)) return im.out(0, ConstVal{constTranspose(c->t, perm)});
  if (std::holds_alternative<SymVal>(v)) return im.out(0, v);
  const auto l = transposeLayout(*layoutOf(v), perm);
  if (!l) im.refuse("transposes " + describe(*layoutOf(v)) + " so that its features change order");
  im.out(0, relayout(im, v, *l));
}

// `l` broadcast to `shape` (Expand): new static sizes are broadcast atoms, B and L their atoms.
Layout expandLayout(const Importer& im, const Layout& l, const std::vector<SymInt>& shape) {
  const size_t rank = std::max(l.rank(), shape.size());
  Layout out;
  out.dims.resize(rank);
  for (size_t k = 0; k < rank; ++k) {
    const Dim* from = k < l.rank() ? &l.dims[l.rank() - 1 - k] : nullptr;
    const SymInt* to = k < shape.size() ? &shape[shape.size() - 1 - k] : nullptr;
    Dim& d = out.dims[rank - 1 - k];
    const bool grows = to && *to != SymInt::of(1) && *to != SymInt::of(-1) && (!from || from->empty());
    if (!grows) {
      if (from) d = *from;
      if (from && to && !from->empty() && *to != SymInt::of(1) && *to != SymInt::of(-1) &&
          Layout{{*from}}.size(0) != *to)
        im.refuse("expands " + describe(l) + " to " + describe(shape));
      continue;
    }
    if (to->b > 1 || to->l > 1) im.refuse("expands to the sizes " + describe(shape));
    if (to->b) d.push_back({Atom::Kind::Batch, 1});
    if (to->l) d.push_back({Atom::Kind::Len, 1});
    if (to->k > 1) d.push_back({Atom::Kind::Bcast, to->k});
  }
  return out;
}

// A function of attention_mask expanded to the scores' shape (DistilBERT's [B, 1, 1, L] to
// [B, H, L, L]): the one L it varies along stays, a dim of 1 grown to L keeps 1, since what reads
// a mask (Where, Add, Mul with the scores) broadcasts it there the same.
MaskVal expandMask(const Importer& im, const MaskVal& m, const std::vector<SymInt>& shape) {
  MaskVal out = m;
  out.layout = expandLayout(im, m.layout, shape);
  const size_t added = out.layout.rank() - m.layout.rank();
  for (size_t d = 0; d < out.layout.rank(); ++d) {
    const bool wasOne = d < added || m.layout.dims[d - added].empty();
    Dim& dim = out.layout.dims[d];
    if (wasOne && m.layout.hasAtom(Atom::Kind::Len))
      dim.erase(std::remove_if(dim.begin(), dim.end(), [](const Atom& a) { return a.kind == Atom::Kind::Len; }),
                dim.end());
  }
  return out;
}

void expand(Importer& im) {
  const Value& v = im.in(0);
  const std::vector<SymInt> shape = im.symIn(1, "the shape");
  const bool symbolic = std::any_of(shape.begin(), shape.end(), [](const SymInt& s) { return !s.isConst(); });
  if (auto c = std::get_if<ConstVal>(&v)) {
    if (!symbolic) {
      std::vector<int64_t> ints;
      for (const SymInt& s : shape) ints.push_back(s.k);
      return im.out(0, ConstVal{constExpand(c->t, ints)});
    }
    if (c->t.size() == 0 || !c->t.isUniform())
      im.refuse("expands a constant that is not one number to the sizes " + describe(shape));
    return im.out(0, FilledVal{c->t.at(0), c->t.kind, expandLayout(im, staticLayout(c->t.shape), shape)});
  }
  if (std::holds_alternative<SymVal>(v)) im.refuse("expands sizes");
  if (auto m = std::get_if<MaskVal>(&v)) return im.out(0, expandMask(im, *m, shape));
  const Layout l = expandLayout(im, *layoutOf(v), shape);
  if (auto a = std::get_if<ActVal>(&v); a && !a->perToken() && l.hasAtom(Atom::Kind::Len)) {
    ActVal tokens = im.toTokens(*a);
    tokens.layout = l;
    return im.out(0, tokens);
  }
  im.out(0, relayout(im, v, l));
}

// Tables by position side by side along their last (feature) axis: ESM's cat(freqs, freqs).
PosTableVal concatTables(Importer& im, const std::vector<const Value*>& parts, int64_t axis) {
  const PosTableVal& first = std::get<PosTableVal>(*parts[0]);
  const size_t rank = first.layout.rank();
  if (axisIn(im, axis, rank) != int64_t(rank) - 1 || rank < 2 || first.table.shape.size() != 2)
    im.refuse("concatenates tables by position along another axis than their features");
  std::vector<const Tensor*> tables;
  int64_t width = 0;
  for (const Value* p : parts) {
    const PosTableVal& t = std::get<PosTableVal>(*p);
    if (t.table.shape.size() != 2 || t.table.shape[0] != first.table.shape[0] || t.layout.rank() != rank)
      im.refuse("concatenates tables by position of other shapes");
    tables.push_back(&t.table);
    width += t.table.shape[1];
  }
  PosTableVal out = first;
  out.table = constConcat(tables, 1);
  out.layout.dims.back() = Dim{{Atom::Kind::Feat, width}};
  out.name = first.name + ".cat";
  return out;
}

void concat(Importer& im) {
  const int64_t axis = im.attrInt("axis", 0);
  std::vector<const Value*> parts;
  for (int k = 0; k < im.node().input_size(); ++k) parts.push_back(&im.in(size_t(k)));
  if (std::all_of(parts.begin(), parts.end(), [](const Value* p) { return std::holds_alternative<ConstVal>(*p); })) {
    std::vector<const Tensor*> ts;
    for (const Value* p : parts) ts.push_back(&std::get<ConstVal>(*p).t);
    return im.out(0, ConstVal{constConcat(ts, axisIn(im, axis, ts[0]->shape.size()))});
  }
  if (std::all_of(parts.begin(), parts.end(), [](const Value* p) { return std::holds_alternative<PosTableVal>(*p); }))
    return im.out(0, concatTables(im, parts, axis));
  const bool sizes = std::all_of(parts.begin(), parts.end(), [](const Value* p) {
    return std::holds_alternative<SymVal>(*p) ||
           (std::holds_alternative<ConstVal>(*p) && !std::get<ConstVal>(*p).t.isFloat());
  });
  if (sizes) {
    std::vector<SymInt> all;
    for (size_t k = 0; k < parts.size(); ++k) {
      const std::vector<SymInt> s = im.symIn(k, "a part");
      all.insert(all.end(), s.begin(), s.end());
    }
    return im.out(0, sizesValue(all, false));
  }
  // Rows of one source along the last axis (rotate-half's halves).
  std::vector<RowExprPtr> trees;
  const ActVal* first = std::get_if<ActVal>(parts[0]);
  if (!first || axisIn(im, axis, first->layout.rank()) != int64_t(first->layout.rank()) - 1)
    im.refuse("concatenates " + describeValue(*parts[0]) + " along axis " + std::to_string(axis) +
              ": kime joins only rows of one value along their last axis");
  int64_t last = 0;
  for (const Value* p : parts) {
    const ActVal* a = std::get_if<ActVal>(p);
    if (!a || a->value != first->value || a->layout.rank() != first->layout.rank())
      im.refuse("concatenates rows of different values");
    const int64_t size = a->layout.dims.back().empty() ? 1 : a->layout.size(a->layout.rank() - 1).k;
    trees.push_back(a->tree ? a->tree : rowSource(a->width / size, size));
    last += size;
  }
  RowExprPtr tree = rowConcat(trees);
  if (!tree) im.refuse("concatenates rows of different groups");
  ActVal out = *first;
  out.tree = tree;
  out.layout.dims.back() = Dim{{Atom::Kind::Feat, last}};
  im.out(0, out);
}

}  // namespace

void addShapeOps(OpTable& t) {
  t["Constant"] = constant;
  t["Identity"] = identity;
  t["Dropout"] = identity;
  t["Cast"] = cast;
  t["Shape"] = shape;
  t["Unsqueeze"] = unsqueeze;
  t["Squeeze"] = squeeze;
  t["Reshape"] = reshape;
  t["Transpose"] = transpose;
  t["Expand"] = expand;
  t["Concat"] = concat;
}

}  // namespace kime::onnx_import
