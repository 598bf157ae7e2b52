// A constant tensor of an ONNX model (an initializer, a Constant, or a value folded from them),
// and the arithmetic the importer folds on constants, with ONNX's (numpy's) broadcasting.
#ifndef KIME_IMPORT_ONNX_TENSOR_H
#define KIME_IMPORT_ONNX_TENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kime/core/Shapes.h"
#include "onnx/onnx_pb.h"

namespace kime::onnx_import {

// The most elements a constant may have (4 GiB of floats): a model's largest weight is far
// below; a shape past it is refused rather than allocated.
constexpr size_t kMaxTensorElements = size_t(1) << 30;
// The element count of `shape`; throws CompileError for a negative size or one past
// kMaxTensorElements.
size_t elementCount(const std::vector<int64_t>& shape);

struct Tensor {
  // Floating point (f32 arithmetic; `stored` is the precision the model kept it in), integer
  // (any width, as int64) or bool (0 / 1 in `i`).
  enum class Kind { Float, Int, Bool };
  Kind kind = Kind::Float;
  shapes::DType stored = shapes::DType::F32;
  std::vector<int64_t> shape;
  std::vector<float> f;
  std::vector<int64_t> i;

  size_t size() const;
  bool isFloat() const { return kind == Kind::Float; }
  double at(size_t k) const { return isFloat() ? double(f[k]) : double(i[k]); }
  int64_t intAt(size_t k) const { return isFloat() ? int64_t(f[k]) : i[k]; }
  // Whether every element equals the first (a tensor that broadcasts as one number).
  bool isUniform() const;

  static Tensor scalar(double v);
  static Tensor integers(std::vector<int64_t> values, std::vector<int64_t> shape);
  static Tensor floats(std::vector<float> values, std::vector<int64_t> shape);
  // A tensor of `shape` holding `like`'s one value (a ConstantOfShape).
  static Tensor filled(const Tensor& like, std::vector<int64_t> shape);
};

// "[2, 3] f32": for messages.
std::string describe(const Tensor& t);

// An initializer or a Constant's value; throws CompileError naming `where` for a type kime does
// not read (strings, complex) or data that does not match the shape.
Tensor tensorFromProto(const onnx::TensorProto& p, const std::string& where);

// ONNX's TensorProto element type as a Tensor kind (float, integer or bool), or none.
std::optional<Tensor::Kind> kindOfOnnxType(int32_t type);

// The broadcast shape of a and b, or none when they do not broadcast.
std::optional<std::vector<int64_t>> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Elementwise on constants (the result kind: Float if either is, else Int; comparisons Bool).
enum class ConstOp { Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, And, Or };
Tensor constBinary(ConstOp op, const Tensor& a, const Tensor& b);
// A unary function of each element ("sqrt", "neg", "erf", "tanh", "sigmoid", "relu", "exp",
// "reciprocal", "not", "abs", "floor", "ceil", "log").
Tensor constUnary(const std::string& fn, const Tensor& a);
Tensor constWhere(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor constCast(const Tensor& a, Tensor::Kind to);

// Layout changes of constants.
Tensor constReshape(const Tensor& a, std::vector<int64_t> shape);
Tensor constTranspose(const Tensor& a, const std::vector<int64_t>& perm);
Tensor constExpand(const Tensor& a, const std::vector<int64_t>& shape);
Tensor constConcat(const std::vector<const Tensor*>& parts, int64_t axis);
// Elements start, start + step, ... of `axis` (end exclusive, already clamped).
Tensor constSlice(const Tensor& a, int64_t axis, int64_t start, int64_t end, int64_t step);
// Gather along `axis` by integer indices (negative ones count from the end).
Tensor constGather(const Tensor& a, const Tensor& indices, int64_t axis);
// The mean or sum over `axes` (sorted, non-negative), keeping them as 1 or dropping them.
Tensor constReduce(const Tensor& a, const std::vector<int64_t>& axes, bool keepdims, bool mean);
Tensor constMatMul(const Tensor& a, const Tensor& b);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_TENSOR_H
