#include "WeightPacker.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/KernelSpec.h"
#include "quant/Int8.h"
#include "support/Diagnostic.h"

namespace kime {

uint16_t toBf16(float f) {
  const float r = shapes::roundTo(shapes::DType::BF16, f);  // exact in bf16: the top half
  uint32_t u;
  std::memcpy(&u, &r, 4);
  return uint16_t(u >> 16);
}

namespace {

int64_t elementBytes(const PackedWeight& w) {
  return w.dtype == KIME_DTYPE_BF16 ? 2 : w.dtype == KIME_DTYPE_I8 ? 1 : 4;
}

// An int8 weight [o, k] (quant/Int8.h): its quads in panels, column i, input j at panel i / P,
// quad j / 4, then column i % P, then j % 4; or (`scales`) each column's scale, then its row sum.
void packInt8(PackedWeight& w, int64_t o, int64_t k, bool scales, bool pairs) {
  const int64_t P = kWeightPanel;
  if (o % P != 0 || k % 4 != 0) throw CompileError("internal: int8 quads of a weight of partial panels or quads");
  const int8::QuantizedWeight q = int8::quantizeWeight(w.values.data(), size_t(o), size_t(k), pairs);
  std::vector<float> v(scales ? size_t(2 * o) : w.values.size());
  if (scales) {
    for (int64_t i = 0; i < o; ++i) v[size_t(i)] = q.scale[size_t(i)], v[size_t(o + i)] = float(q.rowSum[size_t(i)]);
    w.shape = {2, o};
  } else {
    for (int64_t i = 0; i < o; ++i)
      for (int64_t j = 0; j < k; ++j)
        v[size_t((((i / P) * (k / 4) + j / 4) * P + i % P) * 4 + j % 4)] = float(q.q[size_t(i * k + j)]);
    w.shape = {o / P * k / 4, P * 4};
  }
  w.values = std::move(v);
}

// A token table [rows, width] as int8 rows (quant/Int8.h, each row its own channel), or
// (`scales`) each row's scale.
void packInt8Rows(PackedWeight& w, int64_t rows, int64_t width, bool scales) {
  int8::QuantizedWeight q = int8::quantizeTable(w.values.data(), size_t(rows), size_t(width));
  if (scales) {
    w.values = std::move(q.scale);
    w.shape = {rows};
  } else {
    w.values.assign(q.q.begin(), q.q.end());
  }
}

// Reorders the columns of a weight ([out, in] as stored: its rows) or a bias ([out]) for heads
// of `hd` columns: row p becomes the stored row ropeColumnSource(p, hd).
void interleaveRopeColumns(PackedWeight& w, int64_t hd) {
  const int64_t out = w.shape.empty() ? 0 : w.shape[0];
  if (hd <= 0 || hd % kRopePairGroup != 0 || out % hd != 0)
    throw CompileError("internal: interleaved RoPE columns of \"" + w.name + "\" for heads of " + std::to_string(hd));
  const size_t row = w.values.size() / size_t(out);
  std::vector<float> v(w.values.size());
  for (int64_t p = 0; p < out; ++p) {
    const size_t from = size_t(ropeColumnSource(p, hd)) * row;
    std::copy(w.values.begin() + long(from), w.values.begin() + long(from + row), v.begin() + long(size_t(p) * row));
  }
  w.values = std::move(v);
}

}  // namespace

WeightLayout WeightLayout::panels(bool pairs, int64_t ropeHead) {
  return {Kind::Panels, kWeightPanel, pairs, ropeHead, 0};
}

std::string WeightLayout::name() const {
  std::string n = kind == Kind::Rows            ? "rows"
                  : kind == Kind::Transposed    ? "transposed"
                  : kind == Kind::Table         ? "table" + std::to_string(tableRows)
                  : kind == Kind::Int8Scales    ? int8Pairs ? "scales.i8pairs" : "scales.i8"
                  : kind == Kind::Int8Rows      ? "rows.i8"
                  : kind == Kind::Int8RowScales ? "rowscales.i8"
                  : pairs                       ? "pairs.bf16"
                  : quads                       ? int8Pairs ? "quads.i8pairs" : "quads.i8"
                                                : "panels";
  return ropeHead ? n + ":rope" + std::to_string(ropeHead) : n;
}

int64_t WeightPacker::add(PackedWeight w) {
  std::string key = w.name + "@" + w.layout.name();
  w.offset = end_;
  end_ += (int64_t(w.values.size()) * elementBytes(w) + 63) / 64 * 64;
  weights_.push_back(std::move(w));
  ids_[key] = int64_t(weights_.size()) - 1;
  return ids_[key];
}

int64_t WeightPacker::use(const std::string& name, const WeightLayout& layout) {
  if (auto it = ids_.find(name + "@" + layout.name()); it != ids_.end()) return it->second;
  const TensorView* t = checkpoint_.find(name);
  if (!t) throw CompileError(checkpoint_.source() + ": weight \"" + name + "\" is missing");
  PackedWeight w{name, layout, t->shape, t->toFloat(), 0};
  // The columns (rows as stored) in KernelSpec.h's interleaved RoPE order.
  if (layout.ropeHead) interleaveRopeColumns(w, layout.ropeHead);
  using Kind = WeightLayout::Kind;
  if (layout.kind == Kind::Panels && layout.panel != kWeightPanel)
    throw CompileError("internal: panels of " + std::to_string(layout.panel) + " columns");
  if ((layout.kind == Kind::Panels && layout.quads) || layout.kind == Kind::Int8Scales) {
    if (t->shape.size() != 2) throw CompileError("internal: int8 quads of a weight of rank != 2");
    packInt8(w, t->shape[0], t->shape[1], layout.kind == Kind::Int8Scales, layout.int8Pairs);
  } else if (layout.kind == Kind::Int8Rows || layout.kind == Kind::Int8RowScales) {
    if (t->shape.size() != 2) throw CompileError("internal: int8 rows of a weight of rank != 2");
    packInt8Rows(w, t->shape[0], t->shape[1], layout.kind == Kind::Int8RowScales);
  } else if (layout.kind == Kind::Transposed || (layout.kind == Kind::Panels && !layout.pairs)) {
    if (t->shape.size() != 2) throw CompileError("internal: transposing a weight of rank != 2");
    const int64_t o = t->shape[0], k = t->shape[1], P = kWeightPanel;
    const bool panels = layout.kind == Kind::Panels;
    if (panels && o % P != 0) throw CompileError("internal: panels of a weight whose rows they do not divide");
    std::vector<float> tr(w.values.size());
    for (int64_t i = 0; i < o; ++i)
      for (int64_t j = 0; j < k; ++j)
        tr[size_t(panels ? ((i / P) * k + j) * P + i % P : j * o + i)] = w.values[size_t(i * k + j)];
    w.values = std::move(tr);
    w.shape = panels ? std::vector<int64_t>{o / P * k, P} : std::vector<int64_t>{k, o};
  } else if (layout.kind == Kind::Panels) {  // in pairs
    if (t->shape.size() != 2) throw CompileError("internal: pairing a weight of rank != 2");
    const int64_t o = t->shape[0], k = t->shape[1], P = kWeightPanel;
    if (o % P != 0 || k % 2 != 0)
      throw CompileError("internal: bf16 pairs of a weight of odd inputs or partial panels");
    std::vector<float> pr(w.values.size());
    // Column i, input j: panel i / P, pair j / 2, then column i % P, then j % 2.
    for (int64_t i = 0; i < o; ++i)
      for (int64_t j = 0; j < k; ++j)
        pr[size_t((((i / P) * (k / 2) + j / 2) * P + i % P) * 2 + j % 2)] = w.values[size_t(i * k + j)];
    w.values = std::move(pr);
    w.shape = {o / P * k / 2, P * 2};
  } else if (layout.kind != Kind::Rows) {
    throw CompileError("internal: weight \"" + name + "\" packed as " + layout.name());
  }
  w.dtype = layout.dtype();
  return add(std::move(w));
}

int64_t WeightPacker::ropeTable(bool sine, int64_t hd, double theta, int64_t rows) {
  char name[96];
  std::snprintf(name, sizeof name, "rope.%s:%lld:%.17g", sine ? "sin" : "cos", (long long)hd, theta);
  std::string key = std::string(name) + "@table" + std::to_string(rows);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  const int64_t half = hd / 2;
  PackedWeight w{name, WeightLayout::table(rows), {rows, half}, {}, 0};
  w.values.resize(size_t(rows * half));
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t i = 0; i < half; ++i) {
      double a = double(p) * std::pow(theta, -2.0 * double(i) / double(hd));
      w.values[size_t(p * half + i)] = float(sine ? std::sin(a) : std::cos(a));
    }
  int64_t id = add(std::move(w));
  ids_[key] = id;
  return id;
}

std::string WeightPacker::sectionBytes() const {
  std::string out(size_t(end_), '\0');
  for (const PackedWeight& w : weights_) {
    if (w.dtype == KIME_DTYPE_I8) {
      for (size_t i = 0; i < w.values.size(); ++i) out[size_t(w.offset) + i] = char(int8_t(w.values[i]));
      continue;
    }
    if (w.dtype != KIME_DTYPE_BF16) {
      std::memcpy(out.data() + w.offset, w.values.data(), w.values.size() * 4);
      continue;
    }
    for (size_t i = 0; i < w.values.size(); ++i) {
      const uint16_t b = toBf16(w.values[i]);
      std::memcpy(out.data() + w.offset + int64_t(i) * 2, &b, 2);
    }
  }
  return out;
}

}  // namespace kime
