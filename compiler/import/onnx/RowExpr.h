// A function of one packed row, built op by op from an ONNX model's elementwise ops, reductions
// and slices along the last axis, before the importer decides which Graph op it is.
//
// ONNX spells GELU, SiLU, a norm or RoPE as a handful of small ops whose order and constants vary
// with the exporter (x * 0.5 * (1 + erf(x / sqrt 2)), or 0.5 * x * ...; rsqrt as 1 / Sqrt or
// Reciprocal). The importer keeps such a chain as one RowExpr over its source row and, when the
// value is needed, evaluates it on sample rows and matches it against the functions the Graph
// has (Templates.h): what it computes decides, not how it was written.
#ifndef KIME_IMPORT_ONNX_ROWEXPR_H
#define KIME_IMPORT_ONNX_ROWEXPR_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kime::onnx_import {

struct RowExpr;
using RowExprPtr = std::shared_ptr<const RowExpr>;

// A value of `groups` groups of `width` features (the last ONNX axis is a group): the source row
// itself, a constant, or an op of other expressions.
struct RowExpr {
  enum class Op { X, Const, PosConst, Unary, Binary, Reduce, Slice, Concat };
  Op op = Op::X;
  int64_t groups = 1, width = 1;
  std::vector<RowExprPtr> args;
  // Const: one value (a scalar), or one per feature. PosConst: posRows rows of one per feature,
  // the row picked by the token's position.
  std::vector<double> values;
  int64_t posRows = 0;
  // Unary: "erf", "tanh", "sigmoid", "relu", "sqrt", "exp", "neg", "reciprocal", "abs"; Binary:
  // "add", "sub", "mul", "div", "pow", "max", "min"; Reduce: "mean", "sum" (over each group).
  std::string fn;
  int64_t start = 0;  // Slice: features [start, start + width) of each group

  // Known when made (the expression is a DAG: these are never walked again).
  bool reduces = false, slices = false, positional = false;
  int64_t depth = 1;
  std::vector<double> constants;  // the distinct scalar constants it holds

  int64_t size() const { return groups * width; }
  bool isScalar() const { return op == Op::Const && values.size() == 1; }
};

// The deepest expression the importer keeps (a chain past it is refused, not recursed into).
constexpr int64_t kMaxRowExprDepth = 2000;

RowExprPtr rowSource(int64_t groups, int64_t width);
RowExprPtr rowScalar(double v);
RowExprPtr rowConst(std::vector<double> values, int64_t groups, int64_t width);
RowExprPtr rowPosConst(std::vector<double> values, int64_t posRows, int64_t groups, int64_t width);
RowExprPtr rowUnary(const std::string& fn, RowExprPtr a);
// None when the operands' groups do not match (equal sizes, or one a value per group or a scalar).
RowExprPtr rowBinary(const std::string& fn, RowExprPtr a, RowExprPtr b);
RowExprPtr rowReduce(const std::string& fn, RowExprPtr a);
RowExprPtr rowSlice(RowExprPtr a, int64_t start, int64_t width);
RowExprPtr rowConcat(const std::vector<RowExprPtr>& parts);

// What the expression holds besides elementwise functions of the row. The makers throw
// CompileError for an expression deeper than kMaxRowExprDepth.
struct RowExprTraits {
  bool reduces = false, slices = false, positional = false;
  std::vector<double> constants;  // every scalar constant (a norm's epsilon is one of them)
};
RowExprTraits traitsOf(const RowExpr& e);

// The value for the source row `x` of a token at position `pos` (each node evaluated once).
std::vector<double> evalRow(const RowExpr& e, const std::vector<double>& x, int64_t pos);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_ROWEXPR_H
