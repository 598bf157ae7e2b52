#include "ModelConfig.h"

#include <cmath>
#include <random>

#include "support/JsonFields.h"

namespace kime {

ModelConfig parseModelConfig(const std::string& text, const std::string& source) {
  json::Json j = json::parse(text, source);
  json::requireObject(j, source);
  json::onlyKeys(j,
                 {"vocab", "types", "hidden", "layers", "heads", "kv_heads", "ffn", "norm", "norm_eps", "act", "pos",
                  "rope_theta", "max_pos", "bias"},
                 source);
  ModelConfig c;
  c.vocab = json::intField(j, "vocab", source);
  c.types = json::intField(j, "types", source);
  c.hidden = json::intField(j, "hidden", source);
  c.layers = json::intField(j, "layers", source);
  c.heads = json::intField(j, "heads", source);
  c.kvHeads = j.contains("kv_heads") ? json::intField(j, "kv_heads", source) : c.heads;
  c.ffn = json::intField(j, "ffn", source);
  c.norm = json::stringField(j, "norm", source);
  if (j.contains("norm_eps")) c.normEps = json::numberField(j, "norm_eps", source);
  c.act = json::stringField(j, "act", source);
  c.pos = json::stringField(j, "pos", source);
  if (j.contains("rope_theta")) c.ropeTheta = json::numberField(j, "rope_theta", source);
  if (j.contains("max_pos")) c.maxPos = json::intField(j, "max_pos", source);
  if (j.contains("bias")) {
    if (!j["bias"].is_boolean()) throw CompileError(source + ": field \"bias\" must be true or false");
    c.bias = j["bias"].get<bool>();
  }

  auto fail = [&](const std::string& m) { throw CompileError(source + ": " + m); };
  for (auto [key, v] : {std::pair<const char*, int64_t>{"vocab", c.vocab},
                        {"types", c.types},
                        {"hidden", c.hidden},
                        {"layers", c.layers},
                        {"heads", c.heads},
                        {"kv_heads", c.kvHeads},
                        {"ffn", c.ffn},
                        {"max_pos", c.maxPos}})
    if (v <= 0) fail(std::string(key) + " must be positive, not " + std::to_string(v));
  if (c.types > 256) fail("types must be at most 256 (qtype is u8), not " + std::to_string(c.types));
  if (c.vocab > (int64_t{1} << 32)) fail("vocab must fit u32 token ids");
  if (c.norm != "rms" && c.norm != "layer") fail("norm must be \"rms\" or \"layer\", not \"" + c.norm + "\"");
  if (c.act != "swiglu" && c.act != "gelu") fail("act must be \"swiglu\" or \"gelu\", not \"" + c.act + "\"");
  if (c.pos != "rope" && c.pos != "learned") fail("pos must be \"rope\" or \"learned\", not \"" + c.pos + "\"");
  if (c.hidden % c.heads != 0)
    fail("hidden " + std::to_string(c.hidden) + " is not a multiple of " + std::to_string(c.heads) + " heads");
  if (c.heads % c.kvHeads != 0)
    fail(std::to_string(c.heads) + " heads are not a multiple of " + std::to_string(c.kvHeads) + " kv_heads");
  if (c.pos == "rope" && c.headDim() % 2 != 0) fail("rope needs an even head size, not " + std::to_string(c.headDim()));
  if (!(c.normEps > 0 && c.normEps < 1)) fail("norm_eps must be in (0, 1)");
  if (!(c.ropeTheta > 0)) fail("rope_theta must be positive");
  return c;
}

namespace {

// Appends nodes and weights with the family's naming.
struct Builder {
  Graph& g;
  shapes::DType dtype;

  std::string weight(const std::string& name, std::vector<int64_t> shape) {
    g.weights.push_back({name, std::move(shape), dtype});
    return name;
  }
  std::string node(OpKind kind, const std::string& name, std::vector<std::string> operands,
                   std::vector<double> attrs = {}) {
    g.nodes.push_back({kind, name, std::move(operands), std::move(attrs)});
    return name;
  }
  std::string norm(const ModelConfig& c, const std::string& name, const std::string& x) {
    std::string w = weight(name + ".weight", {c.hidden});
    if (c.norm == "rms") return node(OpKind::RmsNorm, name, {x, w}, {c.normEps});
    std::string b = weight(name + ".bias", {c.hidden});
    return node(OpKind::LayerNorm, name, {x, w, b}, {c.normEps});
  }
  std::string linear(const std::string& name, const std::string& x, int64_t out, int64_t in, bool bias) {
    std::string w = weight(name + ".weight", {out, in});
    std::string b = bias ? weight(name + ".bias", {out}) : "";
    return node(OpKind::Linear, name, {x, w, b});
  }
};

}  // namespace

Graph buildEncoderGraph(const ModelConfig& c, shapes::DType dtype, const std::string& name) {
  Graph g;
  g.name = name;
  g.vocab = c.vocab;
  g.types = c.types;
  Builder b{g, dtype};
  const int64_t hd = c.headDim(), qd = c.heads * hd, kvd = c.kvHeads * hd;

  std::string tok = b.node(OpKind::GatherRows, "embed.tok.rows", {b.weight("embed.tok", {c.vocab, c.hidden}), "ids"});
  std::string typ =
      b.node(OpKind::GatherRows, "embed.type.seqs", {b.weight("embed.type", {c.types, c.hidden}), "qtype"});
  typ = b.node(OpKind::ExpandSeqs, "embed.type.rows", {typ, "cu"});
  std::string pos = b.node(OpKind::Positions, "positions", {"cu"});
  std::string x = b.node(OpKind::Add, "embed", {tok, typ});
  if (c.pos == "learned") {
    std::string p = b.node(OpKind::GatherRows, "embed.pos.rows", {b.weight("embed.pos", {c.maxPos, c.hidden}), pos});
    x = b.node(OpKind::Add, "embed.with_pos", {x, p});
  }

  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l);
    std::string a = b.norm(c, p + ".attn_norm", x);
    std::string q = b.linear(p + ".attn.q", a, qd, c.hidden, c.bias);
    std::string k = b.linear(p + ".attn.k", a, kvd, c.hidden, c.bias);
    std::string v = b.linear(p + ".attn.v", a, kvd, c.hidden, c.bias);
    if (c.pos == "rope") {
      q = b.node(OpKind::Rope, q + ".rope", {q, pos}, {double(c.heads), c.ropeTheta});
      k = b.node(OpKind::Rope, k + ".rope", {k, pos}, {double(c.kvHeads), c.ropeTheta});
    }
    std::string o = b.node(OpKind::Attention, p + ".attn", {q, k, v, "cu"},
                           {double(c.heads), double(c.kvHeads), 1.0 / std::sqrt(double(hd))});
    o = b.linear(p + ".attn.o", o, c.hidden, qd, c.bias);
    x = b.node(OpKind::Add, p + ".attn.residual", {x, o});

    std::string m = b.norm(c, p + ".mlp_norm", x);
    std::string y;
    if (c.act == "swiglu") {
      std::string gate = b.linear(p + ".mlp.gate", m, c.ffn, c.hidden, false);
      gate = b.node(OpKind::Silu, p + ".mlp.gate.silu", {gate});
      std::string up = b.linear(p + ".mlp.up", m, c.ffn, c.hidden, false);
      y = b.node(OpKind::Mul, p + ".mlp.act", {gate, up});
      y = b.linear(p + ".mlp.down", y, c.hidden, c.ffn, false);
    } else {
      y = b.linear(p + ".mlp.up", m, c.ffn, c.hidden, true);
      y = b.node(OpKind::Gelu, p + ".mlp.gelu", {y});
      y = b.linear(p + ".mlp.down", y, c.hidden, c.ffn, true);
    }
    x = b.node(OpKind::Add, p + ".mlp.residual", {x, y});
  }

  std::string f = b.norm(c, "final_norm", x);
  std::string rows = b.node(OpKind::GatherMarkers, "head.marker.rows", {f, "cu", "markers", "mcu"});
  std::string logit = b.linear("head.marker", rows, 1, c.hidden, true);
  const std::string logits = b.node(OpKind::Squeeze, "head.marker.logits", {logit});
  std::string first = b.node(OpKind::FirstRows, "head.act.rows", {f, "cu"});
  g.setSeedOutputs(logits, b.linear("head.act", first, 2, c.hidden, true));
  checkGraph(g);  // the builder's own output must always be a valid graph
  return g;
}

namespace {

// Box-Muller over a 64-bit Mersenne twister: the same numbers on every platform and library,
// which std::normal_distribution does not promise.
struct Normal {
  std::mt19937_64 rng;
  double next() {
    double u1 = (double(rng() >> 11) + 1.0) * 0x1.0p-53, u2 = double(rng() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
};

}  // namespace

std::map<std::string, std::vector<float>> randomWeights(const Graph& g, uint64_t seed) {
  Normal n{std::mt19937_64(seed)};
  std::map<std::string, std::vector<float>> out;
  auto endsWith = [](const std::string& s, const char* suf) {
    std::string t(suf);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
  };
  for (const WeightDecl& w : g.weights) {
    size_t count = 1;
    for (int64_t d : w.shape) count *= size_t(d);
    double mean = 0, scale = 1;
    bool isNorm = w.name.find("norm") != std::string::npos;
    if (isNorm && endsWith(w.name, ".weight")) {
      mean = 1, scale = 0.1;
    } else if (endsWith(w.name, ".bias") || (w.shape.size() == 1)) {
      scale = 0.1;
    } else if (w.name.rfind("embed.", 0) == 0) {
      scale = 1;
    } else {
      scale = 1 / std::sqrt(double(w.shape.back()));
    }
    std::vector<float> v(count);
    for (float& x : v) x = shapes::roundTo(w.dtype, float(mean + scale * n.next()));
    out.emplace(w.name, std::move(v));
  }
  return out;
}

}  // namespace kime
