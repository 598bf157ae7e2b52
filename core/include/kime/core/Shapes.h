// Shape and type rules of the kime ops, in plain C++ (no MLIR).
//
// One function per op computes the result of the op from its operands or says, in a short
// sentence, what is wrong. The dialect's verifiers, the Graph importer (which prefixes the node)
// and the passes all call these, so the three can never disagree.
#ifndef KIME_CORE_SHAPES_H
#define KIME_CORE_SHAPES_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kime::shapes {

// The symbolic sizes of a Graph: tokens, sequences, markers; and, made by kime-prune-rows, the
// output rows R = S + M: each sequence's first token, then each marked token (what the heads read).
enum class Sym : uint8_t { None, T, S, M, R };

// One dimension: a static size (`sym == None`), or a symbol plus a constant offset (`S+1`).
// `bound` is 0 while the symbol is free, and the bucket's upper bound once specialized.
struct Dim {
  Sym sym = Sym::None;
  int64_t value = 0;  // the size when static, the offset otherwise
  int64_t bound = 0;

  static Dim fixed(int64_t n) { return {Sym::None, n, 0}; }
  static Dim symbol(Sym s, int64_t offset = 0) { return {s, offset, 0}; }
  bool isStatic() const { return sym == Sym::None; }
  bool operator==(const Dim& o) const { return sym == o.sym && value == o.value && bound == o.bound; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
};

enum class DType : uint8_t { F32, F16, BF16, U32, U8 };

struct Shape {
  std::vector<Dim> dims;
  DType dtype = DType::F32;

  size_t rank() const { return dims.size(); }
  bool operator==(const Shape& o) const { return dims == o.dims && dtype == o.dtype; }
};

// Text forms used in messages, the IR and the Graph format: "T", "S+1", "T:128" (T, at most
// 128, once specialized to a bucket), "256";
// "[T, 256]"; "f32", "bf16", "u32".
std::string str(const Dim& d);
std::string str(const std::vector<Dim>& dims);
std::string str(DType t);
std::optional<DType> parseDType(const std::string& s);
std::optional<Dim> parseDim(const std::string& s);
bool isFloat(DType t);
// The value nearest `v` that a weight of dtype `t` can hold (round to nearest even; a NaN stays
// a NaN).
float roundTo(DType t, float v);

// The result of a rule: a shape, or what is wrong with the operands.
struct Inferred {
  Shape shape;
  std::string error;
  bool ok() const { return error.empty(); }
  static Inferred fail(std::string e) { return {{}, std::move(e)}; }
};

// The batch's arrays (docs/batch.md), as tensors: ids [T] u32, cu [S+1] u32, markers [M] u32, mcu [S+1] u32,
// qtype [S] u8.
Shape idsShape();
Shape cuShape();
Shape markersShape();
Shape qtypeShape();

// One rule per op. Activations are f32; weights may be f32, f16 or bf16.
Inferred inferWeight(const Shape& w);
Inferred inferGatherRows(const Shape& table, const Shape& index);
Inferred inferExpandSeqs(const Shape& x, const Shape& cu);
Inferred inferPositions(const Shape& cu);
Inferred inferTokenTypes(const Shape& cu);
Inferred inferElementwise(const Shape& a, const Shape& b);
Inferred inferUnary(const Shape& x);
Inferred inferRmsNorm(const Shape& x, const Shape& weight, double eps);
Inferred inferLayerNorm(const Shape& x, const Shape& weight, const Shape& bias, double eps);
Inferred inferLinear(const Shape& x, const Shape& weight, const Shape* bias);
Inferred inferRope(const Shape& x, const Shape& pos, int64_t heads, double theta);
// Queries are tokens (q has T rows), or, with `qseq` (the sequence of each query row), any rows.
Inferred inferAttention(const Shape& q, const Shape& k, const Shape& v, const Shape& cu, int64_t heads, int64_t kvHeads,
                        double scale, const Shape* qseq = nullptr);
Inferred inferGatherMarkers(const Shape& x, const Shape& cu, const Shape& markers, const Shape& mcu);
Inferred inferFirstRows(const Shape& x, const Shape& cu);
Inferred inferMeanSeqs(const Shape& x, const Shape& cu);
Inferred inferSqueeze(const Shape& x);
// Introduced by kime-prune-rows (not ops of the Graph format).
Inferred inferSequenceIds(const Shape& cu);
Inferred inferOutputRows(const Shape& x, const Shape& cu, const Shape& markers, const Shape& mcu);

}  // namespace kime::shapes

#endif  // KIME_CORE_SHAPES_H
