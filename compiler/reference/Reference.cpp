#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

namespace kime {

RefWeights loadRefWeights(const Graph& g, const Checkpoint& c) {
  c.checkAgainst(g);
  RefWeights w;
  for (const WeightDecl& d : g.weights) w.emplace(d.name, c.find(d.name)->toDouble());
  return w;
}

namespace {

// A value: rows x cols, or a vector (cols == 0 marks rank 1, stored as one column). A weight
// refers to the caller's storage instead of owning a copy.
struct Value {
  size_t rows = 0, cols = 0;
  std::vector<double> data;
  const std::vector<double>* shared = nullptr;

  const std::vector<double>& values() const { return shared ? *shared : data; }
  size_t width() const { return cols ? cols : 1; }
  double* row(size_t r) { return data.data() + r * width(); }
  const double* row(size_t r) const { return values().data() + r * width(); }
  size_t at(size_t i) const { return static_cast<size_t>(values()[i]); }  // an index value
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

// A dot product with four partial sums: the same f64 result on every run, four times the
// throughput of one serial chain.
double dot(const double* a, const double* b, size_t n, size_t strideB = 1) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i * strideB];
    s1 += a[i + 1] * b[(i + 1) * strideB];
    s2 += a[i + 2] * b[(i + 2) * strideB];
    s3 += a[i + 3] * b[(i + 3) * strideB];
  }
  for (; i < n; ++i) s0 += a[i] * b[i * strideB];
  return (s0 + s1) + (s2 + s3);
}

Value matrix(size_t rows, size_t cols) { return {rows, cols, std::vector<double>(rows * cols)}; }

template <typename T>
Value vectorOf(Span<T> s) {
  Value v{s.size, 0, {}};
  for (T x : s) v.data.push_back(double(x));
  return v;
}

class Evaluator {
 public:
  Evaluator(const Graph& g, const RefWeights& w, const Batch& b) : g_(g), w_(w) {
    values_["ids"] = vectorOf(b.ids);
    values_["cu"] = vectorOf(b.cu);
    values_["markers"] = vectorOf(b.markers);
    values_["mcu"] = vectorOf(b.mcu);
    values_["qtype"] = vectorOf(b.qtype);
    seqs_ = b.seqs();
    for (const WeightDecl& d : g.weights)
      values_[d.name] = Value{size_t(d.shape[0]), d.shape.size() > 1 ? size_t(d.shape[1]) : 0, {}, &w.at(d.name)};
  }

  std::optional<Error> run(RefOutputs& out) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      std::vector<const Value*> in;
      for (const std::string& ref : n.operands) in.push_back(ref.empty() ? nullptr : &values_.at(ref));
      std::optional<Error> err;
      values_[n.name] = apply(i, n, in, err);
      if (err) return err;
    }
    const Value& logits = values_.at(g_.logits);
    const Value& act = values_.at(g_.act);
    out.logits = logits.values();
    out.act.resize(act.rows);
    for (size_t s = 0; s < act.rows; ++s) out.act[s] = {act.row(s)[0], act.row(s)[1]};
    return std::nullopt;
  }

 private:
  Value apply(size_t index, const Node& n, const std::vector<const Value*>& in, std::optional<Error>& err) {
    const auto& a = n.attrs;
    switch (n.kind) {
      case OpKind::GatherRows:
        return gatherRows(index, *in[0], *in[1], err);
      case OpKind::ExpandSeqs:
        return expandSeqs(*in[0], *in[1]);
      case OpKind::Positions:
        return positions(*in[0]);
      case OpKind::Add:
        return zip(*in[0], *in[1], [](double x, double y) { return x + y; });
      case OpKind::Mul:
        return zip(*in[0], *in[1], [](double x, double y) { return x * y; });
      case OpKind::Silu:
        return map(*in[0], [](double x) { return x / (1 + std::exp(-x)); });
      case OpKind::Gelu:
        return map(*in[0], [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
      case OpKind::RmsNorm:
        return norm(*in[0], *in[1], nullptr, a[0]);
      case OpKind::LayerNorm:
        return norm(*in[0], *in[1], in[2], a[0]);
      case OpKind::Linear:
        return linear(*in[0], *in[1], in[2]);
      case OpKind::Rope:
        return rope(*in[0], *in[1], size_t(a[0]), a[1]);
      case OpKind::Attention:
        return attention(*in[0], *in[1], *in[2], *in[3], size_t(a[0]), size_t(a[1]), a[2]);
      case OpKind::GatherMarkers:
        return gatherMarkers(*in[0], *in[1], *in[2], *in[3]);
      case OpKind::FirstRows:
        return firstRows(*in[0], *in[1]);
      case OpKind::Squeeze:
        return {in[0]->rows, 0, in[0]->values(), nullptr};
    }
    return {};
  }

  Value gatherRows(size_t index, const Value& table, const Value& idx, std::optional<Error>& err) {
    Value out = matrix(idx.rows, table.cols);
    for (size_t i = 0; i < idx.rows; ++i) {
      size_t r = idx.at(i);
      if (r >= table.rows) {
        err = Error::batch(describeNode(g_, index) + ": row " + std::to_string(r) + " is past the " +
                           std::to_string(table.rows) + " rows of \"" + g_.nodes[index].operands[0] + "\"");
        return out;
      }
      std::copy(table.row(r), table.row(r) + table.cols, out.row(i));
    }
    return out;
  }

  Value expandSeqs(const Value& x, const Value& cu) {
    Value out = matrix(cu.at(seqs_), x.cols);
    for (size_t s = 0; s < seqs_; ++s)
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t) std::copy(x.row(s), x.row(s) + x.cols, out.row(t));
    return out;
  }

  Value positions(const Value& cu) {
    Value out{cu.at(seqs_), 0, std::vector<double>(cu.at(seqs_))};
    for (size_t s = 0; s < seqs_; ++s)
      for (size_t t = cu.at(s); t < cu.at(s + 1); ++t) out.data[t] = double(t - cu.at(s));
    return out;
  }

  template <typename F>
  static Value zip(const Value& x, const Value& y, F f) {
    Value out{x.rows, x.cols, x.values(), nullptr};
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = f(x.values()[i], y.values()[i]);
    return out;
  }

  template <typename F>
  static Value map(const Value& x, F f) {
    Value out{x.rows, x.cols, x.values(), nullptr};
    for (double& v : out.data) v = f(v);
    return out;
  }

  static Value norm(const Value& x, const Value& g, const Value* b, double eps) {
    Value out = matrix(x.rows, x.cols);
    const double n = double(x.cols);
    for (size_t r = 0; r < x.rows; ++r) {
      const double* in = x.row(r);
      double mean = 0, sq = 0;
      if (b)
        for (size_t c = 0; c < x.cols; ++c) mean += in[c] / n;
      for (size_t c = 0; c < x.cols; ++c) sq += (in[c] - mean) * (in[c] - mean) / n;
      const double inv = 1 / std::sqrt(sq + eps);
      for (size_t c = 0; c < x.cols; ++c)
        out.row(r)[c] = (in[c] - mean) * inv * g.values()[c] + (b ? b->values()[c] : 0.0);
    }
    return out;
  }

  static Value linear(const Value& x, const Value& w, const Value* bias) {
    Value out = matrix(x.rows, w.rows);
    parallelRows(x.rows, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r)
        for (size_t o = 0; o < w.rows; ++o)
          out.row(r)[o] = (bias ? bias->values()[o] : 0.0) + dot(x.row(r), w.row(o), x.cols);
    });
    return out;
  }

  // "Rotate half": element i of a head pairs with i + hd/2.
  static Value rope(const Value& x, const Value& pos, size_t heads, double theta) {
    Value out{x.rows, x.cols, x.values(), nullptr};
    const size_t hd = x.cols / heads, half = hd / 2;
    for (size_t t = 0; t < x.rows; ++t)
      for (size_t h = 0; h < heads; ++h)
        for (size_t i = 0; i < half; ++i) {
          double angle = pos.values()[t] * std::pow(theta, -2.0 * double(i) / double(hd));
          double c = std::cos(angle), s = std::sin(angle);
          const double* in = x.row(t) + h * hd;
          double* o = out.row(t) + h * hd;
          o[i] = in[i] * c - in[i + half] * s;
          o[i + half] = in[i + half] * c + in[i] * s;
        }
    return out;
  }

  // Bidirectional inside each sequence; query head h reads kv head h / (heads / kvHeads).
  Value attention(const Value& q, const Value& k, const Value& v, const Value& cu, size_t heads, size_t kvHeads,
                  double scale) {
    Value out = matrix(q.rows, q.cols);
    const size_t hd = q.cols / heads, group = heads / kvHeads;
    parallelRows(seqs_, [&](size_t sb, size_t se) {
      std::vector<double> p;
      for (size_t s = sb; s < se; ++s) {
        const size_t a = cu.at(s), e = cu.at(s + 1);
        for (size_t h = 0; h < heads; ++h) {
          const size_t kh = h / group;
          for (size_t i = a; i < e; ++i) {
            p.assign(e - a, 0.0);
            double mx = -INFINITY, sum = 0;
            for (size_t j = a; j < e; ++j) {
              p[j - a] = dot(q.row(i) + h * hd, k.row(j) + kh * hd, hd) * scale;
              mx = std::max(mx, p[j - a]);
            }
            for (double& x : p) sum += (x = std::exp(x - mx));
            for (size_t c = 0; c < hd; ++c)
              out.row(i)[h * hd + c] = dot(p.data(), v.row(a) + kh * hd + c, e - a, v.width()) / sum;
          }
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

  const Graph& g_;
  const RefWeights& w_;
  std::map<std::string, Value> values_;
  size_t seqs_ = 0;
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

std::optional<Error> evaluateReference(const Graph& g, const RefWeights& w, const Batch& batch, RefOutputs& out) {
  if (auto err = checkBatch(batch, size_t(g.vocab), size_t(g.types), learnedPositions(g))) return err;
  return Evaluator(g, w, batch).run(out);
}

}  // namespace kime
