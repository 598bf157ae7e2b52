#include "Layout.h"

#include <algorithm>
#include <climits>

#include "support/Diagnostic.h"

namespace kime::onnx_import {

std::string SymInt::str() const {
  std::string s;
  if (k != 1 || isConst()) s = std::to_string(k);
  for (int i = 0; i < b; ++i) s += (s.empty() ? "" : "*") + std::string("B");
  for (int i = 0; i < l; ++i) s += (s.empty() ? "" : "*") + std::string("L");
  return s;
}

SymInt operator*(SymInt a, SymInt b) {
  int64_t k;
  if (__builtin_mul_overflow(a.k, b.k, &k) || a.b + b.b > 8 || a.l + b.l > 8)
    throw CompileError("the sizes " + a.str() + " x " + b.str() + " overflow");
  return {k, a.b + b.b, a.l + b.l};
}

std::optional<SymInt> divide(SymInt a, SymInt b) {
  if (b.k == 0 || (b.k == -1 && a.k == INT64_MIN) || a.k % b.k != 0 || a.b < b.b || a.l < b.l) return std::nullopt;
  return SymInt{a.k / b.k, a.b - b.b, a.l - b.l};
}

std::optional<SymInt> addSym(SymInt a, SymInt b, bool subtract) {
  int64_t k;
  if (subtract ? __builtin_sub_overflow(a.k, b.k, &k) : __builtin_add_overflow(a.k, b.k, &k)) return std::nullopt;
  if (a.isConst() && b.isConst()) return SymInt::of(k);
  if (a.b != b.b || a.l != b.l) return std::nullopt;
  if (k == 0) return SymInt::of(0);
  return SymInt{k, a.b, a.l};
}

namespace {

SymInt atomSize(const Atom& a) {
  if (a.kind == Atom::Kind::Batch) return SymInt::batch();
  if (a.kind == Atom::Kind::Len) return SymInt::len();
  return SymInt::of(a.size);
}

std::string describeDim(const Dim& d) {
  if (d.empty()) return "1";
  std::string s;
  for (const Atom& a : d) s += (s.empty() ? "" : "*") + atomSize(a).str() + (a.kind == Atom::Kind::Bcast ? "^" : "");
  return s;
}

}  // namespace

SymInt Layout::size(size_t d) const {
  SymInt s = SymInt::of(1);
  for (const Atom& a : dims[d]) s = s * atomSize(a);
  return s;
}

std::vector<SymInt> Layout::shape() const {
  std::vector<SymInt> out;
  for (size_t d = 0; d < dims.size(); ++d) out.push_back(size(d));
  return out;
}

bool Layout::hasAtom(Atom::Kind k) const { return dimOf(k) >= 0; }

int Layout::dimOf(Atom::Kind k) const {
  for (size_t d = 0; d < dims.size(); ++d)
    for (const Atom& a : dims[d])
      if (a.kind == k) return int(d);
  return -1;
}

int64_t Layout::width() const {
  int64_t w = 1;
  for (const Dim& d : dims)
    for (const Atom& a : d)
      if (a.kind == Atom::Kind::Feat) w *= a.size;
  return w;
}

std::string describe(const Layout& l) {
  std::string s = "[";
  for (size_t d = 0; d < l.dims.size(); ++d) s += (d ? ", " : "") + describeDim(l.dims[d]);
  return s + "]";
}

std::string describe(const std::vector<SymInt>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + shape[d].str();
  return s + "]";
}

Layout normalized(Layout l) {
  for (Dim& d : l.dims) {
    Dim merged;
    for (const Atom& a : d) {
      const bool static_ = a.kind == Atom::Kind::Feat || a.kind == Atom::Kind::Bcast;
      if (static_ && !merged.empty() && merged.back().kind == a.kind)
        merged.back().size *= a.size;
      else
        merged.push_back(a);
    }
    d = merged;
  }
  return l;
}

Layout staticLayout(const std::vector<int64_t>& shape) {
  Layout l;
  for (int64_t n : shape) l.dims.push_back(n == 1 ? Dim{} : Dim{{Atom::Kind::Feat, n}});
  return l;
}

std::optional<Layout> reshapeLayout(const Layout& l, const std::vector<SymInt>& target) {
  std::vector<Atom> atoms;
  for (const Dim& d : l.dims) atoms.insert(atoms.end(), d.begin(), d.end());
  size_t next = 0;
  Layout out;
  for (const SymInt& want : target) {
    Dim dim;
    SymInt need = want;
    while (need != SymInt::of(1)) {
      if (next == atoms.size()) return std::nullopt;
      Atom& a = atoms[next];
      if (auto rest = divide(need, atomSize(a))) {
        dim.push_back(a), need = *rest, ++next;
        continue;
      }
      // A static atom larger than what this dim still needs: split it, the first part here.
      if (a.kind == Atom::Kind::Batch || a.kind == Atom::Kind::Len || !need.isConst() || a.size % need.k != 0)
        return std::nullopt;
      dim.push_back({a.kind, need.k});
      a.size /= need.k;
      need = SymInt::of(1);
    }
    out.dims.push_back(dim);
  }
  if (next != atoms.size()) return std::nullopt;
  return normalized(out);
}

std::optional<Layout> transposeLayout(const Layout& l, const std::vector<int64_t>& perm) {
  if (perm.size() != l.rank()) return std::nullopt;
  Layout out;
  for (int64_t p : perm) {
    if (p < 0 || size_t(p) >= l.rank()) return std::nullopt;
    out.dims.push_back(l.dims[size_t(p)]);
  }
  // The features must keep their order.
  std::vector<size_t> order;  // for each feature atom of `out`, its index among `l`'s features
  std::vector<std::pair<size_t, size_t>> position;
  for (size_t d = 0; d < l.dims.size(); ++d)
    for (size_t k = 0; k < l.dims[d].size(); ++k)
      if (l.dims[d][k].kind == Atom::Kind::Feat) position.push_back({d, k});
  for (int64_t p : perm)
    for (size_t k = 0; k < l.dims[size_t(p)].size(); ++k)
      if (l.dims[size_t(p)][k].kind == Atom::Kind::Feat)
        order.push_back(
            size_t(std::find(position.begin(), position.end(), std::make_pair(size_t(p), k)) - position.begin()));
  if (!std::is_sorted(order.begin(), order.end())) return std::nullopt;
  return out;
}

std::optional<Layout> broadcastLayouts(const Layout& given_a, const Layout& given_b) {
  const Layout a = normalized(given_a), b = normalized(given_b);
  const size_t rank = std::max(a.rank(), b.rank());
  Layout out;
  out.dims.resize(rank);
  for (size_t k = 0; k < rank; ++k) {
    const Dim* da = k < a.rank() ? &a.dims[a.rank() - 1 - k] : nullptr;
    const Dim* db = k < b.rank() ? &b.dims[b.rank() - 1 - k] : nullptr;
    Dim& o = out.dims[rank - 1 - k];
    if (!da || da->empty()) {
      o = db ? *db : Dim{};
    } else if (!db || db->empty()) {
      o = *da;
    } else if (*da == *db) {
      o = *da;
    } else {
      // The same size made of different atoms: a broadcast atom meets a feature of its size.
      Layout la{{*da}}, lb{{*db}};
      if (la.size(0) != lb.size(0) || da->size() != db->size()) return std::nullopt;
      for (size_t i = 0; i < da->size(); ++i) {
        const Atom &x = (*da)[i], &y = (*db)[i];
        if (x.size != y.size) return std::nullopt;
        if (x.kind == y.kind)
          o.push_back(x);
        else if (x.kind == Atom::Kind::Bcast && y.kind == Atom::Kind::Feat)
          o.push_back(y);
        else if (y.kind == Atom::Kind::Bcast && x.kind == Atom::Kind::Feat)
          o.push_back(x);
        else
          return std::nullopt;
      }
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> featureCoords(const Layout& l) {
  std::vector<std::vector<int64_t>> coords(size_t(l.width()), std::vector<int64_t>(l.rank(), 0));
  // The features in order form a mixed-radix number; walk it from the last one.
  size_t stride = 1;
  for (size_t d = l.rank(); d-- > 0;) {
    int64_t within = 1;  // the place value of an atom inside its dim
    for (size_t k = l.dims[d].size(); k-- > 0;) {
      const Atom& a = l.dims[d][k];
      if (a.kind == Atom::Kind::Feat)
        for (size_t f = 0; f < coords.size(); ++f) coords[f][d] += int64_t(f / stride % size_t(a.size)) * within;
      if (a.kind == Atom::Kind::Feat) stride *= size_t(a.size);
      within *= a.kind == Atom::Kind::Batch || a.kind == Atom::Kind::Len ? 1 : a.size;
    }
  }
  return coords;
}

bool variesAlongFeaturesOnly(const Layout& l, const std::vector<int64_t>& shape) {
  if (shape.size() > l.rank()) return false;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t d = l.rank() - shape.size() + k;
    if (shape[k] == 1) continue;
    if (l.size(d) != SymInt::of(shape[k])) return false;
    for (const Atom& a : l.dims[d])
      if (a.kind != Atom::Kind::Feat) return false;
  }
  return true;
}

}  // namespace kime::onnx_import
