#include "Reference.h"

#include "DenseF64.h"
#include "HugePages.h"
#include "quant/Int8.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <thread>

namespace kime {

RefWeights loadRefWeights(const Graph& g, const Checkpoint& c) {
  c.checkAgainst(g);
  RefWeights w;
  for (const WeightDecl& d : g.weights) {
    const TensorView* t = c.find(d.name);
    std::vector<double> v(t->count());
    t->widen(v.data());
    w.emplace(d.name, std::move(v));
  }
  return w;
}

namespace {

// A value: rows x cols, or a vector (cols == 0 marks rank 1, stored as one column). A weight
// refers to the caller's storage instead of owning a copy.
struct Value {
  // Its numbers, wherever they are kept.
  struct Numbers {
    const double* first;
    size_t count;
    const double* data() const { return first; }
    size_t size() const { return count; }
    double operator[](size_t i) const { return first[i]; }
    const double* begin() const { return first; }
    const double* end() const { return first + count; }
  };

  size_t rows = 0, cols = 0;
  ref::Doubles data;
  const std::vector<double>* shared = nullptr;

  Numbers values() const {
    return shared ? Numbers{shared->data(), shared->size()} : Numbers{data.data(), data.size()};
  }
  size_t width() const { return cols ? cols : 1; }
  double* row(size_t r) { return data.data() + r * width(); }
  const double* row(size_t r) const { return values().data() + r * width(); }
  size_t at(size_t i) const { return static_cast<size_t>(values()[i]); }  // an index value
  Value asVector() && { return {rows, 0, std::move(data), nullptr}; }
};

// Runs f(begin, end) over [0, n) split across the machine's threads.
template <typename F>
void parallelRows(size_t n, F f) {
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), (n + 15) / 16);
  if (threads <= 1) return f(size_t(0), n);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(f, n * t / threads, n * (t + 1) / threads);
  for (std::thread& th : pool) th.join();
}

using PackedWeights = std::map<std::string, ref::PackedWeight>;
using Int8Weights = std::map<std::string, int8::QuantizedWeight>;
// The embedding tables stored as int8 rows (LinearArithmetic.h): each one's rows as the kernels
// read them back, q * scale.
using Int8Tables = std::map<std::string, std::vector<double>>;

// Whether node `n` gathers rows of a table by the token ids or by the tokens' positions: with
// int8, the table's rows are read as int8 rows (LinearArithmetic.h).
bool readsEmbeddingRows(const Graph& g, const Node& n) {
  return (n.kind == OpKind::GatherRows && n.operands[1] == "ids") || gathersByPositions(g, n);
}

// Freed values' storage, handed out again: a large batch's intermediates are tens of MB each,
// and fresh pages cost more than the arithmetic done on them (HugePages.h).
class StoragePool {
 public:
  // n zeros, in the smallest free vector that holds them.
  ref::Doubles take(size_t n) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->capacity() >= n && (best == free_.end() || it->capacity() < best->capacity())) best = it;
    if (best == free_.end()) return ref::zeros(n);
    ref::Doubles v = std::move(*best);
    free_.erase(best);
    v.assign(n, 0.0);
    return v;
  }
  void give(ref::Doubles&& v) {
    if (v.capacity()) free_.push_back(std::move(v));
  }

 private:
  std::vector<ref::Doubles> free_;
};

template <typename T>
Value vectorOf(Span<T> s) {
  Value v{s.size, 0, {}};
  for (T x : s) v.data.push_back(double(x));
  return v;
}

// Each sequence's keys per kv head, transposed (hd x stride), so that scores are computed for
// consecutive keys side by side; stride is the sequence's length rounded up to 8, padded with 0.
class KeysTransposed {
 public:
  KeysTransposed(const Value& k, const Value& cu, size_t seqs, size_t kvHeads, size_t hd) : hd_(hd) {
    size_t total = 0;
    for (size_t s = 0; s < seqs; ++s) {
      offsets_.push_back(total);
      strides_.push_back((cu.at(s + 1) - cu.at(s) + 7) / 8 * 8);
      total += kvHeads * hd * strides_.back();
    }
    data_.assign(total, 0.0);
    for (size_t s = 0; s < seqs; ++s)
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t)
        for (size_t h = 0; h < kvHeads; ++h)
          for (size_t c = 0; c < hd; ++c) of(s, h)[c * strides_[s] + t - cu.at(s)] = k.row(t)[h * hd + c];
  }
  const double* of(size_t s, size_t kvHead) const { return data_.data() + offsets_[s] + kvHead * hd_ * strides_[s]; }
  size_t stride(size_t s) const { return strides_[s]; }

 private:
  double* of(size_t s, size_t kvHead) { return data_.data() + offsets_[s] + kvHead * hd_ * strides_[s]; }
  size_t hd_;
  std::vector<size_t> offsets_, strides_;
  std::vector<double> data_;
};

class Evaluator {
 public:
  Evaluator(const Graph& g, const RefWeights& w, const Batch& b, const PackedWeights& packed, const Int8Weights& int8,
            const Int8Tables& int8Tables, StoragePool& pool)
      : g_(g), packed_(packed), int8_(int8), int8Tables_(int8Tables), pool_(pool) {
    values_["ids"] = vectorOf(b.ids);
    values_["cu"] = vectorOf(b.cu);
    values_["markers"] = vectorOf(b.markers);
    values_["mcu"] = vectorOf(b.mcu);
    values_["qtype"] = vectorOf(b.qtype);
    seqs_ = b.seqs();
    ttype_ = b.ttype;
    static const std::vector<double> kPackedOnly;  // a weight only linears read: never read unpacked
    for (const WeightDecl& d : g.weights) {
      auto it = w.find(d.name);
      const std::vector<double>* v = it != w.end() || !packed.count(d.name) ? &w.at(d.name) : &kPackedOnly;
      values_[d.name] = Value{size_t(d.shape[0]), d.shape.size() > 1 ? size_t(d.shape[1]) : 0, {}, v};
    }
  }

  std::optional<Error> run(RefOutputs& out) {
    std::map<std::string, size_t> lastRead;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      for (const std::string& ref : g_.nodes[i].operands) lastRead[ref] = i;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      std::vector<const Value*> in;
      for (const std::string& ref : n.operands) in.push_back(ref.empty() ? nullptr : &values_.at(ref));
      std::optional<Error> err;
      values_[n.name] = apply(i, n, in, err);
      if (err) return err;
      for (const std::string& ref : n.operands)
        if (lastRead[ref] == i) release(ref);
      if (!lastRead.count(n.name)) release(n.name);
    }
    out.values.resize(g_.outputs.size());
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const Value& v = values_.at(g_.outputs[i].value);
      out.values[i].assign(v.values().begin(), v.values().end());
    }
    return std::nullopt;
  }

  ~Evaluator() {
    for (auto& [name, v] : values_)
      if (!v.shared) pool_.give(std::move(v.data));
  }

 private:
  Value matrix(size_t rows, size_t cols) { return {rows, cols, pool_.take(rows * std::max<size_t>(cols, 1))}; }
  Value copyOf(const Value& x) {
    Value out = matrix(x.rows, x.cols);
    std::copy(x.values().begin(), x.values().end(), out.data.begin());
    return out;
  }

  bool isOutput(const std::string& name) const {
    return std::any_of(g_.outputs.begin(), g_.outputs.end(), [&](const GraphOutput& o) { return o.value == name; });
  }

  // A value no later node reads gives its storage back (the outputs and the caller's weights stay).
  void release(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end() || it->second.shared || isOutput(name)) return;
    pool_.give(std::move(it->second.data));
    values_.erase(it);
  }

  Value apply(size_t index, const Node& n, const std::vector<const Value*>& in, std::optional<Error>& err) {
    const auto& a = n.attrs;
    if (auto fn = eltwiseFn(n.kind)) {
      if (eltwise::arity(*fn) == 1) return map(*in[0], [f = *fn](double x) { return eltwise::apply(f, &x); });
      return zip(*in[0], *in[1], [f = *fn](double x, double y) {
        const double args[] = {x, y};
        return eltwise::apply(f, args);
      });
    }
    switch (n.kind) {
      case OpKind::GatherRows:
        return gatherRows(index, *in[0], *in[1], err);
      case OpKind::ExpandSeqs:
        return expandSeqs(*in[0], *in[1]);
      case OpKind::Positions:
        return positions(*in[0]);
      case OpKind::TokenTypes:
        return tokenTypes(*in[0]);
      case OpKind::RmsNorm:
        return norm(*in[0], *in[1], nullptr, a[0]);
      case OpKind::LayerNorm:
        return norm(*in[0], *in[1], in[2], a[0]);
      case OpKind::Linear:
        return linear(*in[0], *in[1], in[2], n.operands[1]);
      case OpKind::Rope:
        return rope(*in[0], *in[1], size_t(a[0]), a[1]);
      case OpKind::Attention:
        return attention(*in[0], *in[1], *in[2], *in[3], size_t(a[0]), size_t(a[1]), a[2]);
      case OpKind::GatherMarkers:
        return gatherMarkers(*in[0], *in[1], *in[2], *in[3]);
      case OpKind::FirstRows:
        return firstRows(*in[0], *in[1]);
      case OpKind::Squeeze:
        return copyOf(*in[0]).asVector();
      case OpKind::MeanSeqs:
        return meanSeqs(*in[0], *in[1]);
      default:
        break;
    }
    return {};
  }

  Value gatherRows(size_t index, const Value& table, const Value& idx, std::optional<Error>& err) {
    Value out = matrix(idx.rows, table.cols);
    const Node& n = g_.nodes[index];
    auto q = readsEmbeddingRows(g_, n) ? int8Tables_.find(n.operands[0]) : int8Tables_.end();
    const double* rows = q != int8Tables_.end() ? q->second.data() : table.values().data();
    for (size_t i = 0; i < idx.rows; ++i) {
      size_t r = idx.at(i);
      if (r >= table.rows) {
        err = Error::batch(describeNode(g_, index) + ": row " + std::to_string(r) + " is past the " +
                           std::to_string(table.rows) + " rows of \"" + g_.nodes[index].operands[0] + "\"");
        return out;
      }
      std::copy(rows + r * table.cols, rows + (r + 1) * table.cols, out.row(i));
    }
    return out;
  }

  Value expandSeqs(const Value& x, const Value& cu) {
    Value out = matrix(cu.at(seqs_), x.cols);
    for (size_t s = 0; s < seqs_; ++s)
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t) std::copy(x.row(s), x.row(s) + x.cols, out.row(t));
    return out;
  }

  // Each token's type: the batch's own per token, or its sequence's qtype.
  Value tokenTypes(const Value& cu) {
    const Value& qtype = values_.at("qtype");
    Value out = matrix(cu.at(seqs_), 0);
    for (size_t s = 0; s < seqs_; ++s)
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t) out.data[t] = ttype_.empty() ? qtype.at(s) : ttype_[t];
    return out;
  }

  Value positions(const Value& cu) {
    Value out = matrix(cu.at(seqs_), 0);
    for (size_t s = 0; s < seqs_; ++s)
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t) out.data[t] = double(t - cu.at(s));
    return out;
  }

  template <typename F>
  Value zip(const Value& x, const Value& y, F f) {
    Value out = matrix(x.rows, x.cols);
    parallelRows(out.data.size(), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) out.data[i] = f(x.values()[i], y.values()[i]);
    });
    return out;
  }

  template <typename F>
  Value map(const Value& x, F f) {
    Value out = matrix(x.rows, x.cols);
    parallelRows(out.data.size(), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) out.data[i] = f(x.values()[i]);
    });
    return out;
  }

  Value norm(const Value& x, const Value& g, const Value* b, double eps) {
    Value out = matrix(x.rows, x.cols);
    const double n = double(x.cols);
    parallelRows(x.rows, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const double* in = x.row(r);
        double mean = 0, sq = 0;
        if (b)
          for (size_t c = 0; c < x.cols; ++c) mean += in[c] / n;
        for (size_t c = 0; c < x.cols; ++c) sq += (in[c] - mean) * (in[c] - mean) / n;
        const double inv = 1 / std::sqrt(sq + eps);
        for (size_t c = 0; c < x.cols; ++c)
          out.row(r)[c] = (in[c] - mean) * inv * g.values()[c] + (b ? b->values()[c] : 0.0);
      }
    });
    return out;
  }

  Value linear(const Value& x, const Value& w, const Value* bias, const std::string& wName) {
    if (auto q = int8_.find(wName); q != int8_.end() && w.shared) return linearInt8(x, q->second, bias);
    Value out = matrix(x.rows, w.rows);
    auto given = packed_.find(wName);
    const bool reuse = given != packed_.end() && w.shared;
    const ref::PackedWeight own = reuse ? ref::PackedWeight{} : ref::packWeight(w.values().data(), w.rows, w.cols);
    const ref::PackedWeight& packed = reuse ? given->second : own;
    const double* b = bias ? bias->values().data() : nullptr;
    parallelRows(x.rows, [&](size_t begin, size_t end) {
      ref::linearRows(x.values().data(), packed, b, out.data.data(), begin, end);
    });
    return out;
  }

  // quant/Int8.h's arithmetic: each row quantized from its f32 values, the sums in int32, then
  // scaled (here in f64).
  Value linearInt8(const Value& x, const int8::QuantizedWeight& w, const Value* bias) {
    Value out = matrix(x.rows, w.out);
    parallelRows(x.rows, [&](size_t begin, size_t end) {
      std::vector<float> row(w.in);
      std::vector<int8_t> q(w.in);
      for (size_t r = begin; r < end; ++r) {
        for (size_t i = 0; i < w.in; ++i) row[i] = float(x.row(r)[i]);
        const double scale = int8::quantizeRow(row.data(), w.in, q.data());
        for (size_t o = 0; o < w.out; ++o) {
          const int8_t* wq = w.q.data() + o * w.in;
          int32_t sum = 0;
          for (size_t i = 0; i < w.in; ++i) sum += int32_t(q[i]) * int32_t(wq[i]);
          out.row(r)[o] = double(sum) * (scale * double(w.scale[o])) + (bias ? bias->values()[o] : 0.0);
        }
      }
    });
    return out;
  }

  // "Rotate half": element i of a head pairs with i + hd/2.
  Value rope(const Value& x, const Value& pos, size_t heads, double theta) {
    Value out = copyOf(x);
    const size_t hd = x.cols / heads, half = hd / 2;
    parallelRows(x.rows, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t)
        for (size_t i = 0; i < half; ++i) {
          double angle = pos.values()[t] * std::pow(theta, -2.0 * double(i) / double(hd));
          double c = std::cos(angle), s = std::sin(angle);
          for (size_t h = 0; h < heads; ++h) {
            const double* in = x.row(t) + h * hd;
            double* o = out.row(t) + h * hd;
            o[i] = in[i] * c - in[i + half] * s;
            o[i + half] = in[i + half] * c + in[i] * s;
          }
        }
    });
    return out;
  }

  // Bidirectional inside each sequence; query head h reads kv head h / (heads / kvHeads).
  Value attention(const Value& q, const Value& k, const Value& v, const Value& cu, size_t heads, size_t kvHeads,
                  double scale) {
    Value out = matrix(q.rows, q.cols);
    const size_t hd = q.cols / heads, group = heads / kvHeads;
    const KeysTransposed keys(k, cu, seqs_, kvHeads, hd);
    parallelRows(q.rows, [&](size_t begin, size_t end) {
      std::vector<double> p;
      size_t s = 0;
      for (size_t i = begin; i < end; ++i) {
        while (cu.at(s + 1) <= i) ++s;
        const size_t a = cu.at(s), n = cu.at(s + 1) - a;
        p.resize(n);
        for (size_t h = 0; h < heads; ++h) {
          const size_t kh = h / group;
          ref::scoreRow(q.row(i) + h * hd, keys.of(s, kh), hd, keys.stride(s), n, p.data());
          double mx = -INFINITY, sum = 0;
          for (double& x : p) mx = std::max(mx, x *= scale);
          for (double& x : p) sum += (x = std::exp(x - mx));
          double* o = out.row(i) + h * hd;
          ref::weightedSum(p.data(), n, v.row(a) + kh * hd, v.width(), hd, o);
          for (size_t c = 0; c < hd; ++c) o[c] /= sum;
        }
      }
    });
    return out;
  }

  Value gatherMarkers(const Value& x, const Value& cu, const Value& markers, const Value& mcu) {
    Value out = matrix(markers.rows, x.cols);
    for (size_t s = 0; s < seqs_; ++s)
      for (size_t j = mcu.at(s); j < mcu.at(s + 1); ++j) {
        const double* r = x.row(cu.at(s) + markers.at(j));
        std::copy(r, r + x.cols, out.row(j));
      }
    return out;
  }

  // An empty sequence has no first row: it reads zeros.
  Value firstRows(const Value& x, const Value& cu) {
    Value out = matrix(seqs_, x.cols);
    for (size_t s = 0; s < seqs_; ++s)
      if (cu.at(s + 1) > cu.at(s)) std::copy(x.row(cu.at(s)), x.row(cu.at(s)) + x.cols, out.row(s));
    return out;
  }

  Value meanSeqs(const Value& x, const Value& cu) {
    Value out = matrix(seqs_, x.cols);
    for (size_t s = 0; s < seqs_; ++s) {
      double* o = out.row(s);
      std::fill(o, o + x.cols, 0.0);
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t)
        for (size_t c = 0; c < x.cols; ++c) o[c] += x.row(t)[c];
      const double n = double(cu.at(s + 1) - cu.at(s));
      if (n > 0)
        for (size_t c = 0; c < x.cols; ++c) o[c] /= n;
    }
    return out;
  }

  const Graph& g_;
  const PackedWeights& packed_;
  const Int8Weights& int8_;  // the linears computed as int8 kernels compute them
  const Int8Tables& int8Tables_;
  std::map<std::string, Value> values_;
  StoragePool& pool_;
  size_t seqs_ = 0;
  Span<uint8_t> ttype_;  // the batch's per-token types, if it has them
};

}  // namespace

bool withinTolerance(double got, double want, Tolerance t) {
  return std::fabs(got - want) <= t.abs + t.rel * std::fabs(want);
}

std::string describe(Tolerance t) {
  std::ostringstream s;
  if (t.abs == t.rel)
    s << t.abs;
  else
    s << "abs " << t.abs << " + rel " << t.rel;
  return s.str();
}

namespace {

// The rank-2 weights that linears read as their weight operand, each once.
std::vector<const WeightDecl*> linearWeights(const Graph& g) {
  std::set<std::string> read;
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::Linear) read.insert(n.operands[1]);
  std::vector<const WeightDecl*> out;
  for (const WeightDecl& d : g.weights)
    if (d.shape.size() == 2 && read.count(d.name)) out.push_back(&d);
  return out;
}

// The weights that nothing but a linear's weight operand reads (not an output either).
std::set<std::string> linearOnlyWeights(const Graph& g) {
  std::set<std::string> other;
  for (const GraphOutput& o : g.outputs) other.insert(o.value);
  for (const Node& n : g.nodes)
    for (size_t i = 0; i < n.operands.size(); ++i)
      if (n.kind != OpKind::Linear || i != 1) other.insert(n.operands[i]);
  std::set<std::string> out;
  for (const WeightDecl* d : linearWeights(g))
    if (!other.count(d->name)) out.insert(d->name);
  return out;
}

// The weights that linears read, repacked for DenseF64 (by graph name), on the machine's threads:
// from `w` where it has them, else widened straight from the checkpoint `ck`.
PackedWeights packLinearWeights(const Graph& g, const RefWeights& w, const Checkpoint* ck) {
  const std::vector<const WeightDecl*> todo = linearWeights(g);
  std::vector<ref::PackedWeight> packed(todo.size());
  parallelRows(todo.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const size_t out = size_t(todo[i]->shape[0]), in = size_t(todo[i]->shape[1]);
      if (auto it = w.find(todo[i]->name); it != w.end())
        packed[i] = ref::packWeight(it->second.data(), out, in);
      else if (ck)
        packed[i] = ref::packWeight(ck->find(todo[i]->name)->toFloat().data(), out, in);
    }
  });
  PackedWeights out;
  for (size_t i = 0; i < todo.size(); ++i)
    if (!packed[i].panels.empty()) out.emplace(todo[i]->name, std::move(packed[i]));
  return out;
}

// A checkpoint's weights widened to f64, but for those only linears read (packed from it instead).
RefWeights widenUnpacked(const Graph& g, const Checkpoint& c) {
  c.checkAgainst(g);
  const std::set<std::string> packedOnly = linearOnlyWeights(g);
  RefWeights w;
  for (const WeightDecl& d : g.weights) {
    if (packedOnly.count(d.name)) continue;
    const TensorView* t = c.find(d.name);
    std::vector<double> v(t->count());
    t->widen(v.data());
    w.emplace(d.name, std::move(v));
  }
  return w;
}

// The weights of the linears that take int8 (int8::takesInt8), quantized from the checkpoint.
Int8Weights quantizeLinearWeights(const Graph& g, const Checkpoint& ck, bool pairs) {
  Int8Weights out;
  for (const WeightDecl* d : linearWeights(g)) {
    const size_t rows = size_t(d->shape[0]), cols = size_t(d->shape[1]);
    if (int8::takesInt8(rows, cols))
      out.emplace(d->name, int8::quantizeWeight(ck.find(d->name)->toFloat().data(), rows, cols, pairs));
  }
  return out;
}

// The embedding tables (weights that gather_rows reads by the ids or the positions) as int8 rows
// read back.
Int8Tables quantizeEmbeddingTables(const Graph& g, const Checkpoint& ck) {
  Int8Tables out;
  for (const Node& n : g.nodes) {
    if (!readsEmbeddingRows(g, n) || out.count(n.operands[0])) continue;
    auto d =
        std::find_if(g.weights.begin(), g.weights.end(), [&](const WeightDecl& w) { return w.name == n.operands[0]; });
    if (d == g.weights.end() || d->shape.size() != 2) continue;
    const size_t rows = size_t(d->shape[0]), cols = size_t(d->shape[1]);
    const int8::QuantizedWeight q = int8::quantizeTable(ck.find(d->name)->toFloat().data(), rows, cols);
    std::vector<double> v(rows * cols);
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(float(q.q[i]) * q.scale[i / cols]);
    out.emplace(d->name, std::move(v));
  }
  return out;
}

}  // namespace

struct RefSession::State {
  State(const Graph& graph, const RefWeights& weights)
      : g(graph), w(weights), packed(packLinearWeights(g, w, nullptr)) {}
  State(const Graph& graph, const Checkpoint& ck, Arithmetic linears)
      : g(graph),
        owned(widenUnpacked(g, ck)),
        w(owned),
        packed(packLinearWeights(g, w, &ck)),
        int8(isInt8(linears) ? quantizeLinearWeights(g, ck, linears == Arithmetic::int8pairs) : Int8Weights{}),
        int8Tables(isInt8(linears) ? quantizeEmbeddingTables(g, ck) : Int8Tables{}) {}

  const Graph& g;
  RefWeights owned;  // a checkpoint's session: its weights but those only linears read
  const RefWeights& w;
  PackedWeights packed;
  Int8Weights int8;
  Int8Tables int8Tables;
  StoragePool pool;
};

RefSession::RefSession(const Graph& g, const RefWeights& w) : state_(new State(g, w)) {}

RefSession::RefSession(const Graph& g, const Checkpoint& ck, Arithmetic linears) : state_(new State(g, ck, linears)) {}
RefSession::~RefSession() = default;

std::optional<Error> RefSession::evaluate(const Batch& batch, RefOutputs& out) {
  const Graph& g = state_->g;
  if (auto err = checkBatch(batch, size_t(g.vocab), size_t(g.types), learnedPositions(g))) return err;
  // The padding id after the gathers' own limits, in the runtime's order of checks.
  if (auto err =
          Evaluator(g, state_->w, batch, state_->packed, state_->int8, state_->int8Tables, state_->pool).run(out))
    return err;
  return checkPaddingId(batch, g.paddingId);
}

std::optional<Error> evaluateReference(const Graph& g, const RefWeights& w, const Batch& batch, RefOutputs& out) {
  return RefSession(g, w).evaluate(batch, out);
}

}  // namespace kime
