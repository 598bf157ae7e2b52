#include "Tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

size_t countOf(const std::vector<int64_t>& shape) { return elementCount(shape); }

// Row-major strides of `shape`.
std::vector<size_t> stridesOf(const std::vector<int64_t>& shape) {
  std::vector<size_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * size_t(shape[k]);
  return s;
}

// The flat index into a tensor of `shape` (right-aligned to `out`, sizes 1 broadcast) of the
// element at flat index `flat` of a tensor of shape `out`.
size_t broadcastIndex(size_t flat, const std::vector<int64_t>& out, const std::vector<int64_t>& shape) {
  size_t index = 0, stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t axis = shape.size() - 1 - k, outAxis = out.size() - 1 - k;
    const size_t coord = flat % size_t(out[outAxis]);
    flat /= size_t(out[outAxis]);
    if (shape[axis] != 1) index += coord * stride;
    stride *= size_t(shape[axis]);
  }
  return index;
}

float halfToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return float(h);
}

float bf16ToFloat(uint16_t bits) {
  const uint32_t b = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

template <typename T>
std::vector<T> rawValues(const std::string& raw) {
  std::vector<T> v(raw.size() / sizeof(T));
  std::memcpy(v.data(), raw.data(), v.size() * sizeof(T));
  return v;
}

// A float tensor's values from raw bytes or the typed field, by element type.
std::vector<float> floatValues(const onnx::TensorProto& p) {
  const bool raw = p.has_raw_data();
  switch (p.data_type()) {
    case onnx::TensorProto::FLOAT:
      return raw ? rawValues<float>(p.raw_data()) : std::vector<float>(p.float_data().begin(), p.float_data().end());
    case onnx::TensorProto::DOUBLE: {
      const std::vector<double> d =
          raw ? rawValues<double>(p.raw_data()) : std::vector<double>(p.double_data().begin(), p.double_data().end());
      return std::vector<float>(d.begin(), d.end());
    }
    default: {  // FLOAT16, BFLOAT16: 16-bit patterns
      std::vector<uint16_t> bits = raw ? rawValues<uint16_t>(p.raw_data()) : std::vector<uint16_t>();
      if (!raw)
        for (int32_t v : p.int32_data()) bits.push_back(uint16_t(v));
      std::vector<float> out(bits.size());
      for (size_t k = 0; k < bits.size(); ++k)
        out[k] = p.data_type() == onnx::TensorProto::FLOAT16 ? halfToFloat(bits[k]) : bf16ToFloat(bits[k]);
      return out;
    }
  }
}

std::vector<int64_t> intValues(const onnx::TensorProto& p) {
  const bool raw = p.has_raw_data();
  const std::string& r = p.raw_data();
  auto widen = [](auto v) { return std::vector<int64_t>(v.begin(), v.end()); };
  switch (p.data_type()) {
    case onnx::TensorProto::INT64:
      return raw ? rawValues<int64_t>(r) : widen(p.int64_data());
    case onnx::TensorProto::UINT64:
      return raw ? widen(rawValues<uint64_t>(r)) : widen(p.uint64_data());
    case onnx::TensorProto::INT32:
      return raw ? widen(rawValues<int32_t>(r)) : widen(p.int32_data());
    case onnx::TensorProto::UINT32:
      return raw ? widen(rawValues<uint32_t>(r)) : widen(p.uint64_data());
    case onnx::TensorProto::INT16:
      return raw ? widen(rawValues<int16_t>(r)) : widen(p.int32_data());
    case onnx::TensorProto::UINT16:
      return raw ? widen(rawValues<uint16_t>(r)) : widen(p.int32_data());
    case onnx::TensorProto::INT8:
      return raw ? widen(rawValues<int8_t>(r)) : widen(p.int32_data());
    default:  // UINT8, BOOL
      return raw ? widen(rawValues<uint8_t>(r)) : widen(p.int32_data());
  }
}

Tensor map(const Tensor& a, Tensor::Kind kind, const std::function<double(double)>& fn) {
  Tensor out;
  out.kind = kind;
  out.shape = a.shape;
  const size_t n = a.size();
  if (kind == Tensor::Kind::Float) {
    out.f.resize(n);
    for (size_t k = 0; k < n; ++k) out.f[k] = float(fn(a.at(k)));
  } else {
    out.i.resize(n);
    for (size_t k = 0; k < n; ++k) out.i[k] = int64_t(fn(a.at(k)));
  }
  return out;
}

}  // namespace

size_t elementCount(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw CompileError("a tensor of a negative size");
    if (d != 0 && n > kMaxTensorElements / size_t(d))
      throw CompileError("a tensor of more than " + std::to_string(kMaxTensorElements) + " elements");
    n *= size_t(d);
  }
  return n;
}

size_t Tensor::size() const { return countOf(shape); }

bool Tensor::isUniform() const {
  for (size_t k = 1; k < size(); ++k)
    if (at(k) != at(0)) return false;
  return true;
}

Tensor Tensor::scalar(double v) { return floats({float(v)}, {}); }

Tensor Tensor::integers(std::vector<int64_t> values, std::vector<int64_t> shape) {
  Tensor t;
  t.kind = Kind::Int;
  t.i = std::move(values);
  t.shape = std::move(shape);
  return t;
}

Tensor Tensor::floats(std::vector<float> values, std::vector<int64_t> shape) {
  Tensor t;
  t.f = std::move(values);
  t.shape = std::move(shape);
  return t;
}

Tensor Tensor::filled(const Tensor& like, std::vector<int64_t> shape) {
  Tensor t;
  t.kind = like.kind;
  t.shape = std::move(shape);
  if (t.isFloat())
    t.f.assign(t.size(), like.f.empty() ? 0.0f : like.f[0]);
  else
    t.i.assign(t.size(), like.i.empty() ? 0 : like.i[0]);
  return t;
}

std::string describe(const Tensor& t) {
  std::string s = "[";
  for (size_t k = 0; k < t.shape.size(); ++k) s += (k ? ", " : "") + std::to_string(t.shape[k]);
  return s + "] " + (t.kind == Tensor::Kind::Float ? "float" : t.kind == Tensor::Kind::Int ? "int" : "bool");
}

std::optional<Tensor::Kind> kindOfOnnxType(int32_t type) {
  switch (type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return Tensor::Kind::Float;
    case onnx::TensorProto::BOOL:
      return Tensor::Kind::Bool;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
      return Tensor::Kind::Int;
    default:
      return std::nullopt;
  }
}

Tensor tensorFromProto(const onnx::TensorProto& p, const std::string& where) {
  const auto kind = kindOfOnnxType(p.data_type());
  if (!kind)
    throw CompileError(where + ": tensor \"" + p.name() + "\" has element type " + std::to_string(p.data_type()) +
                       ", which is not a number kime reads");
  Tensor t;
  t.kind = *kind;
  for (int64_t d : p.dims()) {
    if (d < 0) throw CompileError(where + ": tensor \"" + p.name() + "\" has a negative size");
    t.shape.push_back(d);
  }
  try {
    (void)elementCount(t.shape);
  } catch (const CompileError& e) {
    throw CompileError(where + ": tensor \"" + p.name() + "\": " + e.what());
  }
  if (t.isFloat()) {
    t.f = floatValues(p);
    if (p.data_type() == onnx::TensorProto::FLOAT16) t.stored = shapes::DType::F16;
    if (p.data_type() == onnx::TensorProto::BFLOAT16) t.stored = shapes::DType::BF16;
  } else {
    t.i = intValues(p);
  }
  const size_t have = t.isFloat() ? t.f.size() : t.i.size();
  if (have != t.size())
    throw CompileError(where + ": tensor \"" + p.name() + "\" holds " + std::to_string(have) +
                       " values for its shape " + describe(t));
  return t;
}

std::optional<std::vector<int64_t>> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

Tensor constBinary(ConstOp op, const Tensor& a, const Tensor& b) {
  const auto shape = broadcastShape(a.shape, b.shape);
  if (!shape) throw CompileError("shapes " + describe(a) + " and " + describe(b) + " do not broadcast");
  const bool compare =
      op == ConstOp::Equal || op == ConstOp::Less || op == ConstOp::Greater || op == ConstOp::And || op == ConstOp::Or;
  Tensor out;
  out.kind = compare ? Tensor::Kind::Bool : (a.isFloat() || b.isFloat()) ? Tensor::Kind::Float : Tensor::Kind::Int;
  out.shape = *shape;
  const size_t n = out.size();
  const bool integer = out.kind == Tensor::Kind::Int;
  auto value = [&](double x, double y) -> double {
    switch (op) {
      case ConstOp::Add:
        return x + y;
      case ConstOp::Sub:
        return x - y;
      case ConstOp::Mul:
        return x * y;
      case ConstOp::Div:
        if (integer) return y == 0 ? 0 : std::floor(x / y) == x / y ? x / y : std::trunc(x / y);
        return x / y;
      case ConstOp::Pow:
        return std::pow(x, y);
      case ConstOp::Max:
        return std::max(x, y);
      case ConstOp::Min:
        return std::min(x, y);
      case ConstOp::Equal:
        return x == y;
      case ConstOp::Less:
        return x < y;
      case ConstOp::Greater:
        return x > y;
      case ConstOp::And:
        return x != 0 && y != 0;
      case ConstOp::Or:
        return x != 0 || y != 0;
    }
    return 0;
  };
  if (out.isFloat())
    out.f.resize(n);
  else
    out.i.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t ia = broadcastIndex(k, out.shape, a.shape), ib = broadcastIndex(k, out.shape, b.shape);
    if (integer && (op == ConstOp::Add || op == ConstOp::Sub || op == ConstOp::Mul)) {
      const int64_t x = a.i[ia], y = b.i[ib];
      out.i[k] = op == ConstOp::Add ? x + y : op == ConstOp::Sub ? x - y : x * y;  // exact for int64
    } else if (out.isFloat()) {
      out.f[k] = float(value(a.at(ia), b.at(ib)));
    } else {
      out.i[k] = int64_t(value(a.at(ia), b.at(ib)));
    }
  }
  return out;
}

Tensor constUnary(const std::string& fn, const Tensor& a) {
  using K = Tensor::Kind;
  if (fn == "not") return map(a, K::Bool, [](double x) { return x == 0; });
  if (fn == "neg") return map(a, a.kind, [](double x) { return -x; });
  if (fn == "abs") return map(a, a.kind, [](double x) { return std::fabs(x); });
  static const std::pair<const char*, double (*)(double)> fns[] = {
      {"sqrt", [](double x) { return std::sqrt(x); }},    {"erf", [](double x) { return std::erf(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }}, {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},      {"reciprocal", [](double x) { return 1 / x; }},
      {"floor", [](double x) { return std::floor(x); }},  {"ceil", [](double x) { return std::ceil(x); }},
      {"cos", [](double x) { return std::cos(x); }},      {"sin", [](double x) { return std::sin(x); }},
  };
  for (const auto& [name, f] : fns)
    if (fn == name) return map(a, K::Float, f);
  throw CompileError("internal: no constant function \"" + fn + "\"");
}

Tensor constWhere(const Tensor& cond, const Tensor& a, const Tensor& b) {
  auto shape = broadcastShape(cond.shape, a.shape);
  if (shape) shape = broadcastShape(*shape, b.shape);
  if (!shape)
    throw CompileError("Where's shapes " + describe(cond) + ", " + describe(a) + ", " + describe(b) +
                       " do not broadcast");
  Tensor out;
  out.kind = a.isFloat() || b.isFloat() ? Tensor::Kind::Float : a.kind;
  out.shape = *shape;
  const size_t n = out.size();
  if (out.isFloat())
    out.f.resize(n);
  else
    out.i.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const bool c = cond.at(broadcastIndex(k, out.shape, cond.shape)) != 0;
    const Tensor& from = c ? a : b;
    const size_t at = broadcastIndex(k, out.shape, from.shape);
    if (out.isFloat())
      out.f[k] = float(from.at(at));
    else
      out.i[k] = from.intAt(at);
  }
  return out;
}

Tensor constCast(const Tensor& a, Tensor::Kind to) {
  if (to == a.kind) return a;
  if (to == Tensor::Kind::Bool) return map(a, to, [](double x) { return x != 0; });
  return map(a, to, to == Tensor::Kind::Int ? [](double x) { return std::trunc(x); } : [](double x) { return x; });
}

Tensor constReshape(const Tensor& a, std::vector<int64_t> shape) {
  if (countOf(shape) != a.size())
    throw CompileError("cannot reshape " + describe(a) + " to " + std::to_string(countOf(shape)) + " elements");
  Tensor out = a;
  out.shape = std::move(shape);
  return out;
}

Tensor constTranspose(const Tensor& a, const std::vector<int64_t>& perm) {
  Tensor out = a;
  const size_t r = a.shape.size();
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted.size() != r || sorted[k] != int64_t(k))
      throw CompileError("a transpose perm that is no permutation of its dims");
  for (size_t k = 0; k < r; ++k) out.shape[k] = a.shape[size_t(perm[k])];
  const std::vector<size_t> in = stridesOf(a.shape);
  const size_t n = a.size();
  for (size_t k = 0; k < n; ++k) {
    size_t flat = k, src = 0;
    for (size_t d = r; d-- > 0;) {
      const size_t coord = flat % size_t(out.shape[d]);
      flat /= size_t(out.shape[d]);
      src += coord * in[size_t(perm[d])];
    }
    if (a.isFloat())
      out.f[k] = a.f[src];
    else
      out.i[k] = a.i[src];
  }
  return out;
}

Tensor constExpand(const Tensor& a, const std::vector<int64_t>& shape) {
  const auto target = broadcastShape(a.shape, shape);
  if (!target) throw CompileError("cannot expand " + describe(a));
  Tensor out;
  out.kind = a.kind;
  out.stored = a.stored;
  out.shape = *target;
  const size_t n = out.size();
  if (a.isFloat())
    out.f.resize(n);
  else
    out.i.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t at = broadcastIndex(k, out.shape, a.shape);
    if (a.isFloat())
      out.f[k] = a.f[at];
    else
      out.i[k] = a.i[at];
  }
  return out;
}

Tensor constConcat(const std::vector<const Tensor*>& parts, int64_t axis) {
  if (parts.empty()) throw CompileError("a Concat of nothing");
  Tensor out = *parts[0];
  out.f.clear(), out.i.clear();
  out.shape[size_t(axis)] = 0;
  bool anyFloat = false;
  for (const Tensor* p : parts) {
    if (p->shape.size() != out.shape.size()) throw CompileError("Concat of tensors of different ranks");
    for (size_t d = 0; d < out.shape.size(); ++d)
      if (int64_t(d) != axis && p->shape[d] != parts[0]->shape[d])
        throw CompileError("Concat of tensors whose other dims differ");
    out.shape[size_t(axis)] += p->shape[size_t(axis)];
    anyFloat |= p->isFloat();
  }
  out.kind = anyFloat ? Tensor::Kind::Float : parts[0]->kind;
  const size_t outer = countOf({out.shape.begin(), out.shape.begin() + axis});
  for (size_t o = 0; o < outer; ++o)
    for (const Tensor* p : parts) {
      const size_t inner = countOf({p->shape.begin() + axis, p->shape.end()});
      for (size_t k = o * inner; k < (o + 1) * inner; ++k) {
        if (anyFloat)
          out.f.push_back(float(p->at(k)));
        else
          out.i.push_back(p->i[k]);
      }
    }
  return out;
}

Tensor constSlice(const Tensor& a, int64_t axis, int64_t start, int64_t end, int64_t step) {
  if (step == 0) throw CompileError("a slice step of 0");
  std::vector<int64_t> picked;
  for (int64_t k = start; step > 0 ? k < end : k > end; k += step) picked.push_back(k);
  return constGather(a, Tensor::integers(picked, {int64_t(picked.size())}), axis);
}

Tensor constGather(const Tensor& a, const Tensor& indices, int64_t axis) {
  Tensor out;
  out.kind = a.kind;
  out.stored = a.stored;
  out.shape.assign(a.shape.begin(), a.shape.begin() + axis);
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), a.shape.begin() + axis + 1, a.shape.end());
  (void)elementCount(out.shape);  // refuses a result past the cap before filling it
  const size_t outer = countOf({a.shape.begin(), a.shape.begin() + axis});
  const size_t inner = countOf({a.shape.begin() + axis + 1, a.shape.end()});
  const int64_t extent = a.shape[size_t(axis)];
  for (size_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < indices.size(); ++j) {
      int64_t idx = indices.intAt(j);
      if (idx < 0) idx += extent;
      if (idx < 0 || idx >= extent)
        throw CompileError("index " + std::to_string(indices.intAt(j)) + " is past an axis of " +
                           std::to_string(extent));
      const size_t base = (o * size_t(extent) + size_t(idx)) * inner;
      for (size_t k = 0; k < inner; ++k) {
        if (a.isFloat())
          out.f.push_back(a.f[base + k]);
        else
          out.i.push_back(a.i[base + k]);
      }
    }
  return out;
}

Tensor constReduce(const Tensor& a, const std::vector<int64_t>& axes, bool keepdims, bool mean) {
  std::vector<int64_t> kept = a.shape;
  size_t reduced = 1;
  for (int64_t ax : axes) reduced *= size_t(a.shape[size_t(ax)]), kept[size_t(ax)] = 1;
  const std::vector<size_t> outStrides = stridesOf(kept);
  std::vector<double> sums(countOf(kept), 0.0);
  for (size_t k = 0; k < a.size(); ++k) {
    size_t flat = k, index = 0;
    for (size_t d = a.shape.size(); d-- > 0;) {
      const size_t coord = flat % size_t(a.shape[d]);
      flat /= size_t(a.shape[d]);
      if (kept[d] != 1) index += coord * outStrides[d];
    }
    sums[index] += a.at(k);
  }
  Tensor out;
  out.shape = kept;
  for (double v : sums) out.f.push_back(float(mean ? v / double(reduced) : v));
  if (!keepdims) {
    out.shape.clear();
    for (size_t d = 0; d < kept.size(); ++d)
      if (std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end()) out.shape.push_back(kept[d]);
  }
  if (!a.isFloat() && !mean) out = constCast(out, Tensor::Kind::Int);
  return out;
}

Tensor constMatMul(const Tensor& a, const Tensor& b) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
    throw CompileError("a MatMul of constants " + describe(a) + " x " + describe(b) + " (kime folds 2-D ones only)");
  const size_t n = size_t(a.shape[0]), k = size_t(a.shape[1]), m = size_t(b.shape[1]);
  std::vector<float> out(n * m);
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < m; ++c) {
      double s = 0;
      for (size_t j = 0; j < k; ++j) s += a.at(r * k + j) * b.at(j * m + c);
      out[r * m + c] = float(s);
    }
  return Tensor::floats(std::move(out), {int64_t(n), int64_t(m)});
}

}  // namespace kime::onnx_import
