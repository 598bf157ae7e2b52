#include "WeightPacker.h"

#include <cmath>
#include <cstring>

#include "support/Diagnostic.h"

namespace kime {

int64_t WeightPacker::add(PackedWeight w) {
  std::string key = w.name + "@" + w.layout;
  w.offset = end_;
  end_ += (int64_t(w.values.size()) * 4 + 63) / 64 * 64;
  weights_.push_back(std::move(w));
  ids_[key] = int64_t(weights_.size()) - 1;
  return ids_[key];
}

int64_t WeightPacker::use(const std::string& name, const std::string& layout) {
  if (auto it = ids_.find(name + "@" + layout); it != ids_.end()) return it->second;
  const TensorView* t = checkpoint_.find(name);
  if (!t) throw CompileError(checkpoint_.source() + ": weight \"" + name + "\" is missing");
  PackedWeight w{name, layout, t->shape, t->toFloat(), 0};
  if (layout == "transposed" || layout == "panels") {
    if (t->shape.size() != 2) throw CompileError("internal: transposing a weight of rank != 2");
    const int64_t o = t->shape[0], k = t->shape[1], P = kWeightPanel;
    const bool panels = layout == "panels";
    if (panels && o % P != 0) throw CompileError("internal: panels of a weight whose rows they do not divide");
    std::vector<float> tr(w.values.size());
    for (int64_t i = 0; i < o; ++i)
      for (int64_t j = 0; j < k; ++j)
        tr[size_t(panels ? ((i / P) * k + j) * P + i % P : j * o + i)] = w.values[size_t(i * k + j)];
    w.values = std::move(tr);
    w.shape = panels ? std::vector<int64_t>{o / P * k, P} : std::vector<int64_t>{k, o};
  }
  return add(std::move(w));
}

int64_t WeightPacker::ropeTable(bool sine, int64_t hd, double theta, int64_t rows) {
  char name[96];
  std::snprintf(name, sizeof name, "rope.%s:%lld:%.17g", sine ? "sin" : "cos", (long long)hd, theta);
  std::string key = std::string(name) + "@table" + std::to_string(rows);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  const int64_t half = hd / 2;
  PackedWeight w{name, "table" + std::to_string(rows), {rows, half}, {}, 0};
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
  for (const PackedWeight& w : weights_)
    std::memcpy(out.data() + w.offset, w.values.data(), w.values.size() * 4);
  return out;
}

}  // namespace kime
