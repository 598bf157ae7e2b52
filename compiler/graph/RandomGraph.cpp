#include "RandomGraph.h"

#include <cmath>
#include <random>

#include "ModelConfig.h"

namespace kime {

namespace {

using shapes::DType;

// A value the generator can build on: its name, rows (tokens, sequences, markers) and width.
enum class Rows { T, S, M };
struct Value {
  std::string name;
  Rows rows;
  int64_t width;
};

class Generator {
 public:
  Generator(uint64_t seed, int64_t maxTokens, int format)
      : rng_(seed),
        constRng_(seed ^ 0x9e3779b97f4a7c15ull),
        fnRng_(seed ^ 0xc2b2ae3d27d4eb4full),
        maxTokens_(maxTokens),
        format_(format) {}

  Graph build() {
    g_.name = "random";
    g_.vocab = pick(4, 40);
    g_.types = pick(1, 4);
    Value x = embedding();
    for (int64_t l = 0, layers = pick(1, 3); l < layers; ++l) x = block(x);
    if (coin(0.6)) x = norm(x);
    const std::string l = logits(x);  // before act(x): the order the generator draws in
    g_.setSeedOutputs(l, act(x));
    return std::move(g_);
  }

 private:
  int64_t pick(int64_t lo, int64_t hi) { return lo + int64_t(rng_() % uint64_t(hi - lo + 1)); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  T oneOf(std::initializer_list<T> options) {
    return *(options.begin() + rng_() % options.size());
  }
  int64_t width() { return oneOf<int64_t>({1, 2, 4, 6, 8, 12, 16, 24, 32, 40, 48}); }

  std::string fresh(const std::string& what) { return "n" + std::to_string(next_++) + "." + what; }
  std::string weight(const std::string& name, std::vector<int64_t> shape) {
    g_.weights.push_back({name, std::move(shape), DType::F32});
    return name;
  }
  std::string add(OpKind kind, const std::string& name, std::vector<std::string> operands,
                  std::vector<double> attrs = {}) {
    g_.nodes.push_back({kind, name, std::move(operands), std::move(attrs)});
    return name;
  }
  Value op(OpKind kind, const char* what, const Value& like, std::vector<std::string> operands) {
    return {add(kind, fresh(what), std::move(operands)), like.rows, like.width};
  }
  std::string positions() {
    if (positions_.empty() || coin(0.1)) positions_ = add(OpKind::Positions, fresh("positions"), {"cu"});
    return positions_;
  }
  // A table gathered by `index`; tables are named embed.* (randomWeights gives them unit scale),
  // now and then a product of two weights.
  std::string gather(const std::string& index, int64_t rows, int64_t w) {
    const std::string name = fresh("gather");
    const std::string table = constant(0.1) ? computed(name, {rows, w}) : weight("embed." + name, {rows, w});
    return add(OpKind::GatherRows, name, {table, index});
  }
  // A value of static shape computed from weights (a static subgraph the kernels compute from
  // the weights section): a sum, an activation, or for a matrix a product of two weights.
  // Its choices come from a stream of their own and its nodes have names of their own, so that
  // a Graph without one is the same Graph as before they were added.
  std::string computed(const std::string& base, std::vector<int64_t> shape) {
    const std::string name = base + ".c" + std::to_string(constants_++);
    const uint64_t kind = constRng_() % 4;
    if (shape.size() == 2 && kind < 2) {
      const int64_t k = 1 + int64_t(constRng_() % 8);
      const std::string x = weight(name + ".x.weight", {shape[0], k});
      const std::string y = weight(name + ".y.weight", {shape[1], k});
      return add(OpKind::Linear, name, {x, y, ""});
    }
    const std::string a = weight(name + ".a.weight", shape);
    if (kind % 2) return add(OpKind::Gelu, name, {a});
    return add(OpKind::Add, name, {a, weight(name + ".b.weight", shape)});
  }
  bool constant(double p) { return std::uniform_real_distribution<double>(0, 1)(constRng_) < p; }
  // The ops of graph format 2 take the place of format 1's now and then, by a stream of their
  // own: a format 1 Graph of a seed is the Graph that seed gave before format 2.
  bool format2(double p) { return format_ >= 2 && std::uniform_real_distribution<double>(0, 1)(fnRng_) < p; }

  Value sum(const Value& a, const Value& b) {
    const bool swap = !coin(0.5);
    const OpKind kind = format2(0.2) ? OpKind::Sub : OpKind::Add;
    return op(kind, kind == OpKind::Sub ? "sub" : "add", a,
              swap ? std::vector{b.name, a.name} : std::vector{a.name, b.name});
  }
  Value activation(const Value& x) {
    OpKind kind = coin(0.5) ? OpKind::Silu : OpKind::Gelu;
    if (format2(0.5)) {
      static constexpr OpKind kNew[] = {OpKind::GeluTanh, OpKind::Relu, OpKind::Tanh, OpKind::Sigmoid};
      kind = kNew[fnRng_() % 4];
    }
    return op(kind, opSpec(kind).name, x, {x.name});
  }
  Value norm(const Value& x) {
    const std::string name = fresh("norm");
    const double eps = oneOf<double>({1e-6, 1e-5, 1e-3});
    const std::string w = constant(0.08) ? computed(name, {x.width}) : weight(name + ".weight", {x.width});
    if (coin(0.5)) return {add(OpKind::RmsNorm, name, {x.name, w}, {eps}), x.rows, x.width};
    const std::string b = weight(name + ".bias", {x.width});
    return {add(OpKind::LayerNorm, name, {x.name, w, b}, {eps}), x.rows, x.width};
  }
  Value linear(const Value& x, int64_t out, bool bias) {
    const std::string name = fresh("linear");
    const std::string w = constant(0.06) ? computed(name, {out, x.width}) : weight(name + ".weight", {out, x.width});
    const std::string b = !bias ? "" : constant(0.1) ? computed(name, {out}) : weight(name + ".bias", {out});
    return {add(OpKind::Linear, name, {x.name, w, b}), x.rows, out};
  }
  // RoPE of token rows by their positions (or, now and then, by their token ids).
  Value rope(const Value& x, int64_t heads, double theta) {
    const std::string pos = coin(0.85) ? positions() : "ids";
    return {add(OpKind::Rope, fresh("rope"), {x.name, pos}, {double(heads), theta}), x.rows, x.width};
  }

  Value embedding();
  Value attention(const Value& x);
  Value mlp(const Value& x);
  Value block(Value x);
  Value extra(const Value& x);
  std::string logits(const Value& x);
  std::string act(const Value& x);

  std::mt19937_64 rng_, constRng_, fnRng_;
  int64_t maxTokens_;
  int format_;
  Graph g_;
  int next_ = 0, constants_ = 0;
  std::string positions_;
};

// Token rows: a token table (now and then smaller than the vocabulary), maybe type rows from
// sequence rows (themselves normed or projected), learned positions, a norm.
Value Generator::embedding() {
  const int64_t d = oneOf<int64_t>({2, 4, 6, 8, 12, 16, 24, 32});
  const int64_t tokRows = coin(0.95) ? g_.vocab + pick(0, 3) : pick(1, g_.vocab);
  Value x{gather("ids", tokRows, d), Rows::T, d};
  if (coin(0.6)) {
    Value t{gather("qtype", g_.types + pick(0, 2), d), Rows::S, d};
    if (coin(0.25)) t = norm(t);
    if (coin(0.25)) t = linear(t, d, coin(0.5));
    const Value e = op(OpKind::ExpandSeqs, "expand", x, {t.name, "cu"});
    x = sum(x, e);
  }
  if (coin(0.4)) {
    const std::string pos = positions();
    x = sum(x, Value{gather(pos, maxTokens_ + pick(0, 8), d), Rows::T, d});
  }
  if (coin(0.4)) x = norm(x);
  return x;
}

// q, k, v of any heads, kv heads and head size, maybe RoPE, attention, an output projection.
Value Generator::attention(const Value& x) {
  const int64_t heads = oneOf<int64_t>({1, 2, 3, 4}), hd = oneOf<int64_t>({2, 4, 6, 8, 12, 16});
  int64_t kv = heads;
  while (coin(0.5) && kv > 1) kv = oneOf<int64_t>({1, 2, 3, 4, 6});
  if (heads % kv) kv = 1;
  Value q = linear(x, heads * hd, coin(0.3));
  Value k = linear(x, kv * hd, coin(0.3));
  const Value v = linear(x, kv * hd, coin(0.3));
  if (coin(0.6)) {
    const double theta = oneOf<double>({100.0, 10000.0, 500000.0});
    q = rope(q, heads, theta);
    k = rope(k, kv, theta);
  }
  const double scale = 1.0 / std::sqrt(double(hd)) * oneOf<double>({0.5, 1.0, 2.0});
  Value a{
      add(OpKind::Attention, fresh("attention"), {q.name, k.name, v.name, "cu"}, {double(heads), double(kv), scale}),
      Rows::T, heads * hd};
  return linear(a, x.width, coin(0.3));
}

// SwiGLU (either operand order, any biases), a GELU or SiLU MLP, or an activation of a sum.
Value Generator::mlp(const Value& x) {
  const int64_t f = width();
  Value h;
  switch (pick(0, 3)) {
    case 0: {
      const Value gate = linear(x, f, coin(0.4));
      const Value g = op(OpKind::Silu, "silu", gate, {gate.name});
      const Value u = linear(x, f, coin(0.4));
      h = coin(0.7) ? op(OpKind::Mul, "mul", u, {g.name, u.name}) : op(OpKind::Mul, "mul", u, {u.name, g.name});
      break;
    }
    case 1: {
      const Value l = linear(x, f, coin(0.4));
      h = op(OpKind::Gelu, "gelu", l, {l.name});
      break;
    }
    case 2:
      h = activation(linear(x, f, coin(0.4)));
      break;
    default: {
      const Value a = linear(x, f, coin(0.4));
      const Value b = linear(x, f, coin(0.4));
      h = activation(sum(a, b));
      break;
    }
  }
  return linear(h, x.width, coin(0.4));
}

// Pre- or post-norm; the attention branch added plainly, gated, through an activation, or beside
// the MLP (parallel branches summed); now and then a width change or an extra op.
Value Generator::block(Value x) {
  const bool post = coin(0.3);
  Value h = post ? x : norm(x);
  Value a = attention(h);
  const int64_t style = pick(0, 3);
  if (style == 0) x = sum(x, a);
  if (style == 1) {
    const Value gate = activation(linear(h, x.width, coin(0.3)));
    x = sum(x, op(OpKind::Mul, "mul", a, {a.name, gate.name}));
  }
  if (style == 2) x = sum(x, activation(a));
  if (style == 3) {
    const Value m = mlp(h);
    x = sum(sum(x, a), m);
  }
  if (post) x = norm(x);
  if (style != 3) {
    const Value m = mlp(post ? x : norm(x));
    x = sum(x, m);
    if (post) x = norm(x);
  }
  if (coin(0.2)) x = linear(x, oneOf<int64_t>({4, 8, 12, 16, 24}), coin(0.5));
  if (coin(0.3)) x = extra(x);
  return x;
}

// An op anywhere: an activation added on, a product, a norm, RoPE of any token rows.
Value Generator::extra(const Value& x) {
  switch (pick(0, 3)) {
    case 0:
      return sum(x, activation(x));
    case 1: {
      const Value a = activation(x);
      return op(OpKind::Mul, "mul", x, {x.name, a.name});
    }
    case 2:
      return norm(x);
    default: {
      const int64_t heads = x.width % 4 == 0 && coin(0.5) ? 2 : 1;
      if ((x.width / heads) % 2 != 0) return norm(x);
      return rope(x, heads, 10000.0);
    }
  }
}

// The marked tokens' rows, maybe normed, through a linear and an activation, plus a table of
// marker positions, to one logit each (sometimes the sum of two such heads).
std::string Generator::logits(const Value& x) {
  auto head = [&]() {
    Value r = op(OpKind::GatherMarkers, "markers", x, {x.name, "cu", "markers", "mcu"});
    r.rows = Rows::M;
    if (coin(0.4)) r = norm(r);
    if (coin(0.35)) r = activation(linear(r, width(), coin(0.5)));
    if (coin(0.2)) r = sum(r, Value{gather("markers", maxTokens_, r.width), Rows::M, r.width});
    Value l = linear(r, 1, coin(0.6));
    return Value{add(OpKind::Squeeze, fresh("squeeze"), {l.name}), Rows::M, 0};
  };
  Value out = head();
  if (coin(0.15)) {
    const Value second = head();
    out = sum(out, second);
  }
  if (coin(0.1)) out = activation(out);
  return out.name;
}

// Each sequence's first row (or the mean of its rows), maybe normed (a pooler) and projected, to
// the act pair; sometimes plus a pair per question type.
std::string Generator::act(const Value& x) {
  Value f = format2(0.3) ? op(OpKind::MeanSeqs, "mean", x, {x.name, "cu"})
                         : op(OpKind::FirstRows, "first", x, {x.name, "cu"});
  f.rows = Rows::S;
  if (coin(0.4)) f = norm(f);
  if (coin(0.3)) f = activation(linear(f, width(), coin(0.5)));
  Value a = linear(f, 2, coin(0.6));
  if (coin(0.2)) a = sum(a, Value{gather("qtype", g_.types, 2), Rows::S, 2});
  return a.name;
}

// A random config of the encoder family, as kime-graph builds it.
Graph encoderGraph(uint64_t seed, int64_t maxTokens) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  ModelConfig c;
  c.vocab = pick(4, 64), c.types = pick(1, 4), c.layers = pick(1, 3);
  c.heads = int64_t(1) << pick(0, 2);
  c.kvHeads = c.heads >> pick(0, 2);
  if (c.kvHeads < 1) c.kvHeads = 1;
  c.hidden = c.heads * 2 * pick(1, 8);
  c.ffn = 4 * pick(1, 12);
  c.norm = rng() % 2 ? "rms" : "layer";
  c.act = rng() % 2 ? "swiglu" : "gelu";
  c.pos = rng() % 2 ? "rope" : "learned";
  c.maxPos = maxTokens + pick(0, 16);
  c.bias = rng() % 2;
  return buildEncoderGraph(c, DType::F32, "encoder");
}

}  // namespace

Graph randomGraph(uint64_t seed, GraphFamily family, int64_t maxTokens, int format) {
  if (family == GraphFamily::Encoder) return encoderGraph(seed, maxTokens);
  return Generator(seed, maxTokens, format).build();
}

}  // namespace kime
