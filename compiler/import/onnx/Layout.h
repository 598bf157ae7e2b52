// How an ONNX tensor of a padded batch lies in kime's packed world.
//
// ONNX sees a batch as B rows of L tokens; kime packs the tokens of all sequences one after
// another, T rows of one row of features each (or S rows, one per sequence). A tensor's logical
// shape is a list of dims, each the product of atoms: the batch B, the length L, a static size
// that is part of the packed row (a feature), or a static size the tensor does not vary along
// (what an Expand added). The features, in order, are the packed row; B and L may sit anywhere,
// since a row of a packed batch is one (sequence, position) whatever the ONNX dims' order.
// Reshapes and transposes change the dims and never the row, as long as the features keep their
// order (the importer refuses one that would not).
#ifndef KIME_IMPORT_ONNX_LAYOUT_H
#define KIME_IMPORT_ONNX_LAYOUT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kime::onnx_import {

// A size in terms of B and L: k * B^b * L^l.
struct SymInt {
  int64_t k = 1;
  int b = 0, l = 0;

  static SymInt of(int64_t v) { return {v, 0, 0}; }
  static SymInt batch() { return {1, 1, 0}; }
  static SymInt len() { return {1, 0, 1}; }
  bool isConst() const { return b == 0 && l == 0; }
  bool operator==(const SymInt& o) const { return k == o.k && b == o.b && l == o.l; }
  bool operator!=(const SymInt& o) const { return !(*this == o); }
  std::string str() const;
};
SymInt operator*(SymInt a, SymInt b);
// a / b where it divides exactly; none otherwise.
std::optional<SymInt> divide(SymInt a, SymInt b);
// a + b or a - b: both constant, or of the same monomial.
std::optional<SymInt> addSym(SymInt a, SymInt b, bool subtract);

struct Atom {
  enum class Kind : uint8_t { Batch, Len, Feat, Bcast };
  Kind kind = Kind::Feat;
  int64_t size = 1;  // Feat, Bcast: the size (Batch, Len: 1 here; B or L at run time)

  bool operator==(const Atom& o) const { return kind == o.kind && size == o.size; }
};
using Dim = std::vector<Atom>;  // an empty dim has size 1

struct Layout {
  std::vector<Dim> dims;

  size_t rank() const { return dims.size(); }
  SymInt size(size_t d) const;
  std::vector<SymInt> shape() const;
  bool hasAtom(Atom::Kind k) const;
  // The dim holding an atom of kind k, or -1.
  int dimOf(Atom::Kind k) const;
  // The packed row's width: the product of the features.
  int64_t width() const;
  bool operator==(const Layout& o) const { return dims == o.dims; }
};

// "[B, L, 4, 8]", "[B*4, L, 8]": for messages.
std::string describe(const Layout& l);
std::string describe(const std::vector<SymInt>& shape);

// `l` with neighbouring features (or broadcast atoms) of one dim merged: [2*2] is [4].
Layout normalized(Layout l);

// A layout of static sizes only (a constant's shape, each size a feature).
Layout staticLayout(const std::vector<int64_t>& shape);

// The layout of `l` read as `target` (ONNX's Reshape, the sizes already resolved): none when the
// atoms cannot be regrouped into those sizes.
std::optional<Layout> reshapeLayout(const Layout& l, const std::vector<SymInt>& target);
// The dims of `l` in the order `perm`; none when the features would change their order.
std::optional<Layout> transposeLayout(const Layout& l, const std::vector<int64_t>& perm);
// The layout of an elementwise result of a and b (numpy broadcasting, right-aligned), taking each
// dim's atoms from the operand whose size there is not 1; none when they do not broadcast or a dim
// of the same size is made of different atoms.
std::optional<Layout> broadcastLayouts(const Layout& a, const Layout& b);

// For each feature of `l` (its packed row, in order), the coordinate of each of `l`'s dims
// (B, L and broadcast atoms at 0).
std::vector<std::vector<int64_t>> featureCoords(const Layout& l);
// Whether a tensor of `shape` (right-aligned against `l`) varies only along `l`'s features: a
// size other than 1 only on dims made of features alone.
bool variesAlongFeaturesOnly(const Layout& l, const std::vector<int64_t>& shape);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_LAYOUT_H
