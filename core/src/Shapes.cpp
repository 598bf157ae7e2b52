#include "kime/core/Shapes.h"

#include <cstdlib>
#include <cstring>

namespace kime::shapes {

std::string str(const Dim& d) {
  std::string s;
  switch (d.sym) {
    case Sym::None:
      return std::to_string(d.value);
    case Sym::T:
      s = "T";
      break;
    case Sym::S:
      s = "S";
      break;
    case Sym::M:
      s = "M";
      break;
    case Sym::R:
      s = "R";
      break;
  }
  if (d.value > 0) s += "+" + std::to_string(d.value);
  if (d.bound > 0) s += ":" + std::to_string(d.bound);  // "T:128": T, at most 128
  return s;
}

std::string str(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + str(dims[i]);
  return s + "]";
}

std::string str(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::U32:
      return "u32";
    case DType::U8:
      return "u8";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string& s) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::U32, DType::U8})
    if (str(t) == s) return t;
  return std::nullopt;
}

std::optional<Dim> parseDim(const std::string& s) {
  if (s.empty()) return std::nullopt;
  if (s.find_first_not_of("0123456789") == std::string::npos) {
    if (s.size() > 12) return std::nullopt;
    return Dim::fixed(std::stoll(s));
  }
  Dim d;
  switch (s[0]) {
    case 'T':
      d.sym = Sym::T;
      break;
    case 'S':
      d.sym = Sym::S;
      break;
    case 'M':
      d.sym = Sym::M;
      break;
    default:
      return std::nullopt;
  }
  if (s.size() == 1) return d;
  if (s[1] != '+' || s.size() == 2 || s.size() > 8 || s.find_first_not_of("0123456789", 2) != std::string::npos)
    return std::nullopt;
  d.value = std::stoll(s.substr(2));
  return d;
}

bool isFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

float roundTo(DType t, float v) {
  if (t == DType::F16) return static_cast<float>(static_cast<_Float16>(v));
  if (t != DType::BF16) return v;
  uint32_t b;
  std::memcpy(&b, &v, 4);
  // A NaN stays a quiet NaN (rounding its payload bits away could make it an infinity).
  if ((b & 0x7fffffffu) > 0x7f800000u)
    b = (b | 0x00400000u) & 0xffff0000u;
  else
    b = (b + 0x7fff + ((b >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&v, &b, 4);
  return v;
}

Shape idsShape() { return {{Dim::symbol(Sym::T)}, DType::U32}; }
Shape cuShape() { return {{Dim::symbol(Sym::S, 1)}, DType::U32}; }
Shape markersShape() { return {{Dim::symbol(Sym::M)}, DType::U32}; }
Shape qtypeShape() { return {{Dim::symbol(Sym::S)}, DType::U8}; }

namespace {

// Each check returns the message of the first problem, or "" when there is none.
std::string rankIs(const char* what, const Shape& s, size_t rank) {
  if (s.rank() == rank) return "";
  return std::string(what) + " must have rank " + std::to_string(rank) + ", not " + str(s.dims);
}

std::string isF32(const char* what, const Shape& s) {
  if (s.dtype == DType::F32) return "";
  return std::string(what) + " must be f32, not " + str(s.dtype);
}

std::string isWeight(const char* what, const Shape& s) {
  if (!isFloat(s.dtype)) return std::string(what) + " must be f32, f16 or bf16, not " + str(s.dtype);
  for (const Dim& d : s.dims)
    if (!d.isStatic()) return std::string(what) + " must have static sizes, not " + str(s.dims);
  return "";
}

// An activation matrix: rank 2, f32, a static width.
std::string isRows(const char* what, const Shape& s) {
  if (auto e = rankIs(what, s, 2); !e.empty()) return e;
  if (auto e = isF32(what, s); !e.empty()) return e;
  if (!s.dims[1].isStatic()) return std::string(what) + " must have a static width, not " + str(s.dims);
  return "";
}

std::string isCu(const char* what, const Shape& s) {
  Shape want = cuShape();
  if (s.rank() == 1 && s.dtype == DType::U32 && s.dims[0].sym == Sym::S && s.dims[0].value == 1) return "";
  return std::string(what) + " must be " + str(want.dims) + " u32, not " + str(s.dims) + " " + str(s.dtype);
}

std::string rowsAre(const char* what, const Shape& s, Sym sym) {
  if (s.dims[0].sym == sym && s.dims[0].value == 0) return "";
  return std::string(what) + " must have " + str(Dim::symbol(sym)) + " rows, not " + str(s.dims[0]);
}

// Token rows, or the output rows kime-prune-rows computes instead (the heads read either).
std::string tokenOrOutputRows(const char* what, const Shape& s) {
  if (s.dims[0].sym == Sym::R && s.dims[0].value == 0) return "";
  return rowsAre(what, s, Sym::T);
}

// The result's row dimension keeps the bound of the operand it comes from.
Dim rowsOf(const Shape& s) { return s.dims[0]; }

Shape f32(std::vector<Dim> dims) { return {std::move(dims), DType::F32}; }

#define KIME_TRY(expr)                                                               \
  do {                                                                               \
    if (std::string kime_e = (expr); !kime_e.empty()) return Inferred::fail(kime_e); \
  } while (0)

}  // namespace

Inferred inferWeight(const Shape& w) {
  KIME_TRY(isWeight("weight", w));
  return {w, ""};
}

Inferred inferGatherRows(const Shape& table, const Shape& index) {
  KIME_TRY(rankIs("table", table, 2));
  KIME_TRY(isWeight("table", table));
  KIME_TRY(rankIs("index", index, 1));
  if (index.dtype != DType::U32 && index.dtype != DType::U8)
    return Inferred::fail("index must be u32 or u8, not " + str(index.dtype));
  return {f32({rowsOf(index), table.dims[1]}), ""};
}

Inferred inferExpandSeqs(const Shape& x, const Shape& cu) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(rowsAre("x", x, Sym::S));
  KIME_TRY(isCu("cu", cu));
  return {f32({Dim::symbol(Sym::T), x.dims[1]}), ""};
}

Inferred inferPositions(const Shape& cu) {
  KIME_TRY(isCu("cu", cu));
  return {{{Dim::symbol(Sym::T)}, DType::U32}, ""};
}

Inferred inferTokenTypes(const Shape& cu) {
  KIME_TRY(isCu("cu", cu));
  return {{{Dim::symbol(Sym::T)}, DType::U8}, ""};
}

// An elementwise operand: f32, or a weight of f16 or bf16, widened to f32 as every weight is
// where it is read (the result is f32).
static std::string isEltwiseOperand(const char* what, const Shape& s) {
  if (s.dtype == DType::F32 || (isFloat(s.dtype) && isWeight(what, s).empty())) return "";
  return std::string(what) + " must be f32 (or a weight of f16 or bf16), not " + str(s.dtype);
}

Inferred inferElementwise(const Shape& a, const Shape& b) {
  KIME_TRY(isEltwiseOperand("lhs", a));
  KIME_TRY(isEltwiseOperand("rhs", b));
  if (a.dims != b.dims) return Inferred::fail("operands differ: " + str(a.dims) + " and " + str(b.dims));
  return {f32(a.dims), ""};
}

Inferred inferUnary(const Shape& x) {
  KIME_TRY(isEltwiseOperand("x", x));
  return {f32(x.dims), ""};
}

static std::string vectorOfWidth(const char* what, const Shape& w, const Shape& x) {
  if (auto e = isWeight(what, w); !e.empty()) return e;
  if (w.rank() == 1 && w.dims[0] == x.dims[1]) return "";
  return std::string(what) + " " + str(w.dims) + " does not match input width " + str(x.dims[1]);
}

static std::string epsOk(double eps) {
  if (eps > 0 && eps < 1) return "";
  return "eps must be in (0, 1), not " + std::to_string(eps);
}

Inferred inferRmsNorm(const Shape& x, const Shape& weight, double eps) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(vectorOfWidth("weight", weight, x));
  KIME_TRY(epsOk(eps));
  return {x, ""};
}

Inferred inferLayerNorm(const Shape& x, const Shape& weight, const Shape& bias, double eps) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(vectorOfWidth("weight", weight, x));
  KIME_TRY(vectorOfWidth("bias", bias, x));
  KIME_TRY(epsOk(eps));
  return {x, ""};
}

Inferred inferLinear(const Shape& x, const Shape& weight, const Shape* bias) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(rankIs("weight", weight, 2));
  KIME_TRY(isWeight("weight", weight));
  if (weight.dims[1] != x.dims[1])
    return Inferred::fail("weight " + str(weight.dims) + " does not match input width " + str(x.dims[1]));
  if (bias) {
    KIME_TRY(isWeight("bias", *bias));
    if (bias->rank() != 1 || bias->dims[0] != weight.dims[0])
      return Inferred::fail("bias " + str(bias->dims) + " does not match output width " + str(weight.dims[0]));
  }
  return {f32({rowsOf(x), weight.dims[0]}), ""};
}

static std::string headsDivide(const char* what, const Shape& x, int64_t heads) {
  if (heads <= 0) return std::string(what) + " heads must be positive, not " + std::to_string(heads);
  if (x.dims[1].value % heads == 0) return "";
  return std::string(what) + " width " + str(x.dims[1]) + " is not a multiple of " + std::to_string(heads) + " heads";
}

Inferred inferRope(const Shape& x, const Shape& pos, int64_t heads, double theta) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(headsDivide("x", x, heads));
  if ((x.dims[1].value / heads) % 2 != 0)
    return Inferred::fail("head size " + std::to_string(x.dims[1].value / heads) + " is odd");
  if (pos.rank() != 1 || pos.dtype != DType::U32 || pos.dims[0] != x.dims[0])
    return Inferred::fail("pos must be [" + str(x.dims[0]) + "] u32 like the rows of x, not " + str(pos.dims) + " " +
                          str(pos.dtype));
  if (!(theta > 0)) return Inferred::fail("theta must be positive, not " + std::to_string(theta));
  return {x, ""};
}

Inferred inferAttention(const Shape& q, const Shape& k, const Shape& v, const Shape& cu, int64_t heads, int64_t kvHeads,
                        double scale, const Shape* qseq) {
  KIME_TRY(isRows("q", q));
  KIME_TRY(isRows("k", k));
  KIME_TRY(isRows("v", v));
  if (!qseq)
    KIME_TRY(rowsAre("q", q, Sym::T));
  else if (qseq->rank() != 1 || qseq->dtype != DType::U32 || qseq->dims[0] != q.dims[0])
    return Inferred::fail("qseq must be [" + str(q.dims[0]) + "] u32 like the rows of q, not " + str(qseq->dims) + " " +
                          str(qseq->dtype));
  KIME_TRY(rowsAre("k", k, Sym::T));
  KIME_TRY(rowsAre("v", v, Sym::T));
  KIME_TRY(isCu("cu", cu));
  KIME_TRY(headsDivide("q", q, heads));
  if (kvHeads <= 0 || heads % kvHeads != 0)
    return Inferred::fail(std::to_string(heads) + " heads are not a multiple of " + std::to_string(kvHeads) +
                          " kv heads");
  const int64_t hd = q.dims[1].value / heads;
  for (const auto& [what, s] : {std::pair<const char*, const Shape*>{"k", &k}, {"v", &v}})
    if (s->dims[1].value != kvHeads * hd)
      return Inferred::fail(std::string(what) + " width " + str(s->dims[1]) + " is not " + std::to_string(kvHeads) +
                            " kv heads of size " + std::to_string(hd));
  if (!(scale > 0)) return Inferred::fail("scale must be positive, not " + std::to_string(scale));
  return {q, ""};
}

Inferred inferGatherMarkers(const Shape& x, const Shape& cu, const Shape& markers, const Shape& mcu) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(tokenOrOutputRows("x", x));
  KIME_TRY(isCu("cu", cu));
  Shape m = markersShape();
  if (markers.rank() != 1 || markers.dtype != DType::U32 || markers.dims[0].sym != Sym::M)
    return Inferred::fail("markers must be " + str(m.dims) + " u32, not " + str(markers.dims) + " " +
                          str(markers.dtype));
  KIME_TRY(isCu("mcu", mcu));
  return {f32({markers.dims[0], x.dims[1]}), ""};
}

Inferred inferFirstRows(const Shape& x, const Shape& cu) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(tokenOrOutputRows("x", x));
  KIME_TRY(isCu("cu", cu));
  return {f32({Dim::symbol(Sym::S), x.dims[1]}), ""};
}

Inferred inferMeanSeqs(const Shape& x, const Shape& cu) {
  KIME_TRY(isRows("x", x));
  KIME_TRY(rowsAre("x", x, Sym::T));
  KIME_TRY(isCu("cu", cu));
  return {f32({Dim::symbol(Sym::S), x.dims[1]}), ""};
}

Inferred inferSqueeze(const Shape& x) {
  KIME_TRY(isF32("x", x));
  if (x.rank() != 2 || x.dims[1] != Dim::fixed(1)) return Inferred::fail("x must be [N, 1], not " + str(x.dims));
  return {{{x.dims[0]}, DType::F32}, ""};
}

Inferred inferSequenceIds(const Shape& cu) {
  KIME_TRY(isCu("cu", cu));
  return {{{Dim::symbol(Sym::T)}, DType::U32}, ""};
}

Inferred inferOutputRows(const Shape& x, const Shape& cu, const Shape& markers, const Shape& mcu) {
  const bool vector = x.rank() == 1 && x.dtype == DType::U32;
  if (!vector) KIME_TRY(isRows("x", x));
  KIME_TRY(rowsAre("x", x, Sym::T));
  KIME_TRY(isCu("cu", cu));
  if (markers.rank() != 1 || markers.dtype != DType::U32 || markers.dims[0].sym != Sym::M)
    return Inferred::fail("markers must be [M] u32, not " + str(markers.dims) + " " + str(markers.dtype));
  KIME_TRY(isCu("mcu", mcu));
  Shape r = x;
  r.dims[0] = Dim::symbol(Sym::R);
  return {r, ""};
}

}  // namespace kime::shapes
