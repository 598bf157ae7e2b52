#include "RowExpr.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

RowExprPtr make(RowExpr e) {
  e.reduces = e.op == RowExpr::Op::Reduce;
  e.slices = e.op == RowExpr::Op::Slice || e.op == RowExpr::Op::Concat;
  e.positional = e.op == RowExpr::Op::PosConst;
  if (e.isScalar()) e.constants = {e.values[0]};
  for (const RowExprPtr& a : e.args) {
    e.reduces |= a->reduces, e.slices |= a->slices, e.positional |= a->positional;
    e.depth = std::max(e.depth, a->depth + 1);
    for (double c : a->constants)
      if (std::find(e.constants.begin(), e.constants.end(), c) == e.constants.end() && e.constants.size() < 64)
        e.constants.push_back(c);
  }
  if (e.depth > kMaxRowExprDepth)
    throw CompileError("an elementwise chain of more than " + std::to_string(kMaxRowExprDepth) + " ops on one value");
  return std::make_shared<const RowExpr>(std::move(e));
}

double unary(const std::string& fn, double x) {
  if (fn == "erf") return std::erf(x);
  if (fn == "tanh") return std::tanh(x);
  if (fn == "sigmoid") return 1 / (1 + std::exp(-x));
  if (fn == "relu") return x > 0 ? x : 0.0;
  if (fn == "sqrt") return std::sqrt(x);
  if (fn == "exp") return std::exp(x);
  if (fn == "neg") return -x;
  if (fn == "reciprocal") return 1 / x;
  if (fn == "abs") return std::fabs(x);
  return NAN;
}

double binary(const std::string& fn, double x, double y) {
  if (fn == "add") return x + y;
  if (fn == "sub") return x - y;
  if (fn == "mul") return x * y;
  if (fn == "div") return x / y;
  if (fn == "pow") return y == 2 ? x * x : std::pow(x, y);
  if (fn == "max") return std::max(x, y);
  if (fn == "min") return std::min(x, y);
  return NAN;
}

// Element i of an operand of the result's shape: itself, its group's one value, or a scalar.
double element(const std::vector<double>& v, const RowExpr& operand, const RowExpr& result, size_t i) {
  if (v.size() == 1) return v[0];
  if (operand.width == 1 && result.width != 1) return v[i / size_t(result.width)];
  return v[i];
}

}  // namespace

RowExprPtr rowSource(int64_t groups, int64_t width) {
  RowExpr e;
  e.groups = groups, e.width = width;
  return make(std::move(e));
}

RowExprPtr rowScalar(double v) {
  RowExpr e;
  e.op = RowExpr::Op::Const;
  e.values = {v};
  return make(std::move(e));
}

RowExprPtr rowConst(std::vector<double> values, int64_t groups, int64_t width) {
  RowExpr e;
  e.op = RowExpr::Op::Const;
  e.values = std::move(values);
  e.groups = groups, e.width = width;
  return make(std::move(e));
}

RowExprPtr rowPosConst(std::vector<double> values, int64_t posRows, int64_t groups, int64_t width) {
  RowExpr e;
  e.op = RowExpr::Op::PosConst;
  e.values = std::move(values);
  e.posRows = posRows, e.groups = groups, e.width = width;
  return make(std::move(e));
}

RowExprPtr rowUnary(const std::string& fn, RowExprPtr a) {
  RowExpr e;
  e.op = RowExpr::Op::Unary;
  e.fn = fn;
  e.groups = a->groups, e.width = a->width;
  e.args = {std::move(a)};
  return make(std::move(e));
}

RowExprPtr rowBinary(const std::string& fn, RowExprPtr a, RowExprPtr b) {
  RowExpr e;
  e.op = RowExpr::Op::Binary;
  e.fn = fn;
  const RowExpr& big = a->isScalar() || (a->width == 1 && b->width != 1) ? *b : *a;
  const RowExpr& other = &big == a.get() ? *b : *a;
  const bool fits = other.isScalar() || other.size() == big.size() || (other.width == 1 && other.groups == big.groups);
  if (!fits) return nullptr;
  e.groups = big.groups, e.width = big.width;
  if (a->isScalar() && b->isScalar()) e.groups = e.width = 1;
  e.args = {std::move(a), std::move(b)};
  return make(std::move(e));
}

RowExprPtr rowReduce(const std::string& fn, RowExprPtr a) {
  RowExpr e;
  e.op = RowExpr::Op::Reduce;
  e.fn = fn;
  e.groups = a->groups, e.width = 1;
  e.args = {std::move(a)};
  return make(std::move(e));
}

RowExprPtr rowSlice(RowExprPtr a, int64_t start, int64_t width) {
  RowExpr e;
  e.op = RowExpr::Op::Slice;
  e.start = start;
  e.groups = a->groups, e.width = width;
  e.args = {std::move(a)};
  return make(std::move(e));
}

RowExprPtr rowConcat(const std::vector<RowExprPtr>& parts) {
  RowExpr e;
  e.op = RowExpr::Op::Concat;
  e.groups = parts[0]->groups, e.width = 0;
  for (const RowExprPtr& p : parts) {
    if (p->groups != e.groups) return nullptr;
    e.width += p->width;
  }
  e.args = parts;
  return make(std::move(e));
}

RowExprTraits traitsOf(const RowExpr& e) { return {e.reduces, e.slices, e.positional, e.constants}; }

namespace {

using Memo = std::unordered_map<const RowExpr*, std::vector<double>>;
const std::vector<double>& evalMemo(const RowExpr& e, const std::vector<double>& x, int64_t pos, Memo& memo);

std::vector<double> evalNode(const RowExpr& e, const std::vector<double>& x, int64_t pos, Memo& memo) {
  auto evalRow = [&](const RowExpr& a, const std::vector<double>&, int64_t) -> const std::vector<double>& {
    return evalMemo(a, x, pos, memo);
  };
  const size_t n = size_t(e.size());
  std::vector<double> out(n);
  switch (e.op) {
    case RowExpr::Op::X:
      return x;
    case RowExpr::Op::Const:
      return e.values;
    case RowExpr::Op::PosConst: {
      if (e.posRows < 1) return out;
      const int64_t p = std::clamp<int64_t>(pos, 0, e.posRows - 1);
      return std::vector<double>(e.values.begin() + p * int64_t(n), e.values.begin() + (p + 1) * int64_t(n));
    }
    case RowExpr::Op::Unary: {
      const std::vector<double> a = evalRow(*e.args[0], x, pos);
      for (size_t i = 0; i < n; ++i) out[i] = unary(e.fn, a[i]);
      return out;
    }
    case RowExpr::Op::Binary: {
      const std::vector<double> a = evalRow(*e.args[0], x, pos), b = evalRow(*e.args[1], x, pos);
      for (size_t i = 0; i < n; ++i) out[i] = binary(e.fn, element(a, *e.args[0], e, i), element(b, *e.args[1], e, i));
      return out;
    }
    case RowExpr::Op::Reduce: {
      const RowExpr& in = *e.args[0];
      const std::vector<double> a = evalRow(in, x, pos);
      for (size_t g = 0; g < n; ++g) {
        double s = 0;
        for (int64_t k = 0; k < in.width; ++k) s += a[g * size_t(in.width) + size_t(k)];
        out[g] = e.fn == "mean" ? s / double(in.width) : s;
      }
      return out;
    }
    case RowExpr::Op::Slice: {
      const RowExpr& in = *e.args[0];
      const std::vector<double> a = evalRow(in, x, pos);
      for (size_t g = 0; g < size_t(e.groups); ++g)
        for (size_t k = 0; k < size_t(e.width); ++k)
          out[g * size_t(e.width) + k] = a[g * size_t(in.width) + size_t(e.start) + k];
      return out;
    }
    case RowExpr::Op::Concat: {
      size_t at = 0;
      for (const RowExprPtr& part : e.args) {
        const std::vector<double> a = evalRow(*part, x, pos);
        for (size_t g = 0; g < size_t(e.groups); ++g)
          for (size_t k = 0; k < size_t(part->width); ++k)
            out[g * size_t(e.width) + at + k] = a[g * size_t(part->width) + k];
        at += size_t(part->width);
      }
      return out;
    }
  }
  return out;
}

const std::vector<double>& evalMemo(const RowExpr& e, const std::vector<double>& x, int64_t pos, Memo& memo) {
  auto it = memo.find(&e);
  if (it != memo.end()) return it->second;
  std::vector<double> v = evalNode(e, x, pos, memo);
  return memo.emplace(&e, std::move(v)).first->second;
}

}  // namespace

std::vector<double> evalRow(const RowExpr& e, const std::vector<double>& x, int64_t pos) {
  Memo memo;
  return evalMemo(e, x, pos, memo);
}

}  // namespace kime::onnx_import
