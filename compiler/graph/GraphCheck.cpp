#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "Graph.h"
#include "support/Diagnostic.h"

namespace kime {

using shapes::Inferred;
using shapes::Shape;

const std::vector<OpSpec>& opSpecs() {
  static const std::vector<OpSpec> specs = {
      {OpKind::GatherRows, "gather_rows", {{"table", false}, {"index", false}}, {}},
      {OpKind::ExpandSeqs, "expand_seqs", {{"x", false}, {"cu", false}}, {}},
      {OpKind::Positions, "positions", {{"cu", false}}, {}},
      {OpKind::Add, "add", {{"lhs", false}, {"rhs", false}}, {}},
      {OpKind::Mul, "mul", {{"lhs", false}, {"rhs", false}}, {}},
      {OpKind::Silu, "silu", {{"x", false}}, {}},
      {OpKind::Gelu, "gelu", {{"x", false}}, {}},
      {OpKind::RmsNorm, "rms_norm", {{"x", false}, {"weight", false}}, {{"eps", false}}},
      {OpKind::LayerNorm, "layer_norm", {{"x", false}, {"weight", false}, {"bias", false}}, {{"eps", false}}},
      {OpKind::Linear, "linear", {{"x", false}, {"weight", false}, {"bias", true}}, {}},
      {OpKind::Rope, "rope", {{"x", false}, {"pos", false}}, {{"heads", true}, {"theta", false}}},
      {OpKind::Attention,
       "attention",
       {{"q", false}, {"k", false}, {"v", false}, {"cu", false}},
       {{"heads", true}, {"kv_heads", true}, {"scale", false}}},
      {OpKind::GatherMarkers, "gather_markers", {{"x", false}, {"cu", false}, {"markers", false}, {"mcu", false}}, {}},
      {OpKind::FirstRows, "first_rows", {{"x", false}, {"cu", false}}, {}},
      {OpKind::Squeeze, "squeeze", {{"x", false}}, {}},
      {OpKind::Sub, "sub", {{"lhs", false}, {"rhs", false}}, {}, 2},
      {OpKind::GeluTanh, "gelu_tanh", {{"x", false}}, {}, 2},
      {OpKind::Relu, "relu", {{"x", false}}, {}, 2},
      {OpKind::Tanh, "tanh", {{"x", false}}, {}, 2},
      {OpKind::Sigmoid, "sigmoid", {{"x", false}}, {}, 2},
      {OpKind::MeanSeqs, "mean_seqs", {{"x", false}, {"cu", false}}, {}, 2},
      {OpKind::TokenTypes, "token_types", {{"cu", false}}, {}, 3},
  };
  return specs;
}

const OpSpec& opSpec(OpKind kind) { return opSpecs()[static_cast<size_t>(kind)]; }

std::optional<eltwise::Fn> eltwiseFn(OpKind kind) {
  switch (kind) {
    case OpKind::Add:
      return eltwise::Fn::add;
    case OpKind::Sub:
      return eltwise::Fn::sub;
    case OpKind::Mul:
      return eltwise::Fn::mul;
    case OpKind::Silu:
      return eltwise::Fn::silu;
    case OpKind::Gelu:
      return eltwise::Fn::gelu;
    case OpKind::GeluTanh:
      return eltwise::Fn::gelu_tanh;
    case OpKind::Relu:
      return eltwise::Fn::relu;
    case OpKind::Tanh:
      return eltwise::Fn::tanh;
    case OpKind::Sigmoid:
      return eltwise::Fn::sigmoid;
    default:
      return std::nullopt;
  }
}

const OpSpec* findOpSpec(const std::string& name) {
  for (const OpSpec& s : opSpecs())
    if (name == s.name) return &s;
  return nullptr;
}

const std::vector<InputDecl>& graphInputs() {
  static const std::vector<InputDecl> inputs = {
      {"ids", shapes::idsShape()}, {"cu", shapes::cuShape()},       {"markers", shapes::markersShape()},
      {"mcu", shapes::cuShape()},  {"qtype", shapes::qtypeShape()},
  };
  return inputs;
}

bool gathersByPositions(const Graph& g, const Node& n) {
  if (n.kind != OpKind::GatherRows) return false;
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [&](const Node& p) { return p.kind == OpKind::Positions && p.name == n.operands[1]; });
}

size_t learnedPositions(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (!gathersByPositions(g, n)) continue;
    for (const WeightDecl& w : g.weights)
      if (w.name == n.operands[0]) return size_t(w.shape[0]);
  }
  return 0;
}

std::vector<GatherLimit> gatherLimits(const Graph& g) {
  // A table is a weight or a value computed from weights (static rows either way).
  std::map<std::string, int64_t> tableRows;
  for (const WeightDecl& w : g.weights) tableRows[w.name] = w.shape.empty() ? 0 : w.shape[0];
  const std::vector<Shape> shapes = checkGraph(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (shapes[i].rank() > 0 && shapes[i].dims[0].isStatic()) tableRows[g.nodes[i].name] = shapes[i].dims[0].value;
  std::set<std::string> positions;
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::Positions) positions.insert(n.name);
  std::set<std::string> tokenTypes;
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::TokenTypes) tokenTypes.insert(n.name);
  const int64_t maxLen = int64_t(learnedPositions(g));
  std::vector<GatherLimit> limits;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind != OpKind::GatherRows) continue;
    const std::string& index = n.operands[1];
    const int64_t rows = tableRows.count(n.operands[0]) ? tableRows[n.operands[0]] : 0;
    kime_plan_input input;
    int64_t safeFrom = -1;  // the rows that hold every index the batch checks allow
    if (positions.count(index))
      input = KIME_INPUT_TOKPOS, safeFrom = maxLen ? maxLen : -1;
    else if (index == "ids")
      input = KIME_INPUT_IDS, safeFrom = g.vocab;
    else if (index == "qtype")
      input = KIME_INPUT_QTYPE, safeFrom = g.types;
    else if (tokenTypes.count(index))
      input = KIME_INPUT_TOKTYPE, safeFrom = g.types;
    else if (index == "cu")
      input = KIME_INPUT_CU;
    else if (index == "mcu")
      input = KIME_INPUT_MCU;
    else if (index == "markers")
      input = KIME_INPUT_MARKERS;
    else
      throw CompileError(describeNode(g, i) + ": internal: an index that is no batch input or positions");
    if (safeFrom >= 0 && rows >= safeFrom) continue;
    limits.push_back({input, size_t(rows), describeNode(g, i), n.operands[0]});
  }
  return limits;
}

std::string describeNode(const Graph& g, size_t index) {
  const Node& n = g.nodes[index];
  return "node " + std::to_string(index) + " (" + opSpec(n.kind).name + " \"" + n.name + "\")";
}

// The rule of `n`'s op applied to its operands' shapes.
static Inferred inferNode(const Node& n, const std::vector<const Shape*>& in) {
  const auto& a = n.attrs;
  if (auto fn = eltwiseFn(n.kind))
    return eltwise::arity(*fn) == 2 ? shapes::inferElementwise(*in[0], *in[1]) : shapes::inferUnary(*in[0]);
  switch (n.kind) {
    case OpKind::GatherRows:
      return shapes::inferGatherRows(*in[0], *in[1]);
    case OpKind::ExpandSeqs:
      return shapes::inferExpandSeqs(*in[0], *in[1]);
    case OpKind::Positions:
      return shapes::inferPositions(*in[0]);
    case OpKind::TokenTypes:
      return shapes::inferTokenTypes(*in[0]);
    case OpKind::RmsNorm:
      return shapes::inferRmsNorm(*in[0], *in[1], a[0]);
    case OpKind::LayerNorm:
      return shapes::inferLayerNorm(*in[0], *in[1], *in[2], a[0]);
    case OpKind::Linear:
      return shapes::inferLinear(*in[0], *in[1], in[2]);
    case OpKind::Rope:
      return shapes::inferRope(*in[0], *in[1], static_cast<int64_t>(a[0]), a[1]);
    case OpKind::Attention:
      return shapes::inferAttention(*in[0], *in[1], *in[2], *in[3], static_cast<int64_t>(a[0]),
                                    static_cast<int64_t>(a[1]), a[2]);
    case OpKind::GatherMarkers:
      return shapes::inferGatherMarkers(*in[0], *in[1], *in[2], *in[3]);
    case OpKind::FirstRows:
      return shapes::inferFirstRows(*in[0], *in[1]);
    case OpKind::Squeeze:
      return shapes::inferSqueeze(*in[0]);
    case OpKind::MeanSeqs:
      return shapes::inferMeanSeqs(*in[0], *in[1]);
    default:
      break;
  }
  return Inferred::fail("unknown op");
}

// The operands that stand for the batch's own arrays ("cu", "markers", "mcu" of attention,
// expand_seqs, positions, first_rows and gather_markers) must be those inputs: cu and mcu have
// one shape, and a sequence's tokens follow cu only.
static void checkBatchOperands(const Node& n, const OpSpec& spec, const std::string& where) {
  if (n.kind == OpKind::GatherRows) return;  // its index may be any of them
  for (size_t k = 0; k < spec.operands.size(); ++k) {
    const std::string& field = spec.operands[k].field;
    if ((field == "cu" || field == "markers" || field == "mcu") && n.operands[k] != field)
      throw CompileError(where + ": operand \"" + field + "\" must be the input \"" + field + "\", not \"" +
                         n.operands[k] + "\"");
  }
}

static Shape weightShape(const WeightDecl& w) {
  Shape s;
  for (int64_t d : w.shape) s.dims.push_back(shapes::Dim::fixed(d));
  s.dtype = w.dtype;
  return s;
}

namespace {

using Values = std::map<std::string, Shape>;

// Node `i`'s operands, each a value declared before it (nullptr for an optional one left out);
// each weight read leaves `unusedWeights`. Its attributes are finite, integers where they must be.
std::vector<const Shape*> nodeOperands(const Graph& g, size_t i, const Values& values,
                                       std::set<std::string>& unusedWeights) {
  auto fail = [](const std::string& m) { throw CompileError(m); };
  const Node& n = g.nodes[i];
  const OpSpec& spec = opSpec(n.kind);
  const std::string where = describeNode(g, i);
  std::vector<const Shape*> in;
  for (size_t k = 0; k < spec.operands.size(); ++k) {
    const std::string& ref = n.operands.at(k);
    if (ref.empty()) {
      if (!spec.operands[k].optional) fail(where + ": operand \"" + spec.operands[k].field + "\" is missing");
      in.push_back(nullptr);
      continue;
    }
    auto it = values.find(ref);
    if (it == values.end())
      fail(where + ": operand \"" + spec.operands[k].field + "\" names \"" + ref +
           "\", which is not an input, a weight or an earlier node");
    unusedWeights.erase(ref);
    in.push_back(&it->second);
  }
  for (size_t k = 0; k < spec.attrs.size(); ++k) {
    double v = n.attrs.at(k);
    if (!std::isfinite(v)) fail(where + ": \"" + spec.attrs[k].field + "\" must be finite");
    if (spec.attrs[k].integer && (v != std::floor(v) || std::fabs(v) > 1e9))
      fail(where + ": \"" + spec.attrs[k].field + "\" must be an integer, not " + std::to_string(v));
  }
  return in;
}

// The Graph's weights as values: named, float, with positive static sizes, each name once.
void declareWeights(const Graph& g, Values& values, std::set<std::string>& unusedWeights) {
  auto fail = [](const std::string& m) { throw CompileError(m); };
  for (size_t i = 0; i < g.weights.size(); ++i) {
    const WeightDecl& w = g.weights[i];
    std::string where = "weight " + std::to_string(i) + " (\"" + w.name + "\")";
    if (w.name.empty()) fail("weight " + std::to_string(i) + " has no name");
    if (!shapes::isFloat(w.dtype)) fail(where + ": dtype must be f32, f16 or bf16");
    if (w.shape.empty()) fail(where + ": shape must have at least one dimension");
    for (int64_t d : w.shape)
      if (d <= 0) fail(where + ": sizes must be positive, not " + std::to_string(d));
    if (!values.emplace(w.name, weightShape(w)).second) fail(where + ": the name \"" + w.name + "\" is already taken");
    unusedWeights.insert(w.name);
  }
}

// Each output names a value of an output's shape, under a name of its own.
void checkOutputs(const Graph& g, const Values& values) {
  auto fail = [](const std::string& m) { throw CompileError(m); };
  if (g.outputs.empty()) fail("the graph has no outputs");
  std::set<std::string> names;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const GraphOutput& o = g.outputs[i];
    const std::string where = "output " + std::to_string(i) + " (\"" + o.name + "\")";
    if (o.name.empty()) fail("output " + std::to_string(i) + " has no name");
    if (!names.insert(o.name).second) fail(where + ": the name is already taken by another output");
    auto it = values.find(o.value);
    if (it == values.end()) fail(where + " names \"" + o.value + "\", which is not a value");
    if (!outputOfShape(o.name, it->second))
      fail(where + " must be [M], [M, K], [S] or [S, K] f32 (per marker or per sequence), but \"" + o.value + "\" is " +
           shapes::str(it->second.dims) + " " + shapes::str(it->second.dtype));
  }
}

}  // namespace

std::vector<Shape> checkGraph(const Graph& g) {
  auto fail = [](const std::string& m) { throw CompileError(m); };
  if (g.vocab <= 0) fail("vocab must be positive, not " + std::to_string(g.vocab));
  if (g.types <= 0) fail("types must be positive, not " + std::to_string(g.types));
  if (g.paddingId < -1 || g.paddingId >= g.vocab)
    fail("padding_id " + std::to_string(g.paddingId) + " is not a token id (below vocab " + std::to_string(g.vocab) +
         ")");

  Values values;
  std::set<std::string> unusedWeights;
  for (const InputDecl& in : graphInputs()) values.emplace(in.name, in.shape);
  declareWeights(g, values, unusedWeights);

  std::vector<Shape> result;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const OpSpec& spec = opSpec(n.kind);
    std::string where = describeNode(g, i);
    if (n.name.empty()) fail("node " + std::to_string(i) + " (" + spec.name + "): no name");
    if (values.count(n.name)) fail(where + ": the name \"" + n.name + "\" is already taken");
    Inferred r = inferNode(n, nodeOperands(g, i, values, unusedWeights));
    if (!r.ok()) fail(where + ": " + r.error);
    checkBatchOperands(n, spec, where);
    values.emplace(n.name, r.shape);
    result.push_back(r.shape);
  }

  checkOutputs(g, values);
  if (!unusedWeights.empty()) fail("weight \"" + *unusedWeights.begin() + "\" is declared but no node reads it");
  return result;
}

std::optional<OutputDesc> outputOfShape(const std::string& name, const Shape& s) {
  if (s.dtype != shapes::DType::F32 || s.dims.empty() || s.dims.size() > 2) return std::nullopt;
  const shapes::Sym rows = s.dims[0].sym;
  if (rows != shapes::Sym::M && rows != shapes::Sym::S) return std::nullopt;
  if (s.dims.size() == 2 && (!s.dims[1].isStatic() || s.dims[1].value < 1)) return std::nullopt;
  const size_t width = s.dims.size() == 2 ? size_t(s.dims[1].value) : 1;
  return OutputDesc{name, rows == shapes::Sym::M ? OutputKind::PerMarker : OutputKind::PerSequence, width};
}

std::vector<OutputDesc> outputDescs(const Graph& g) {
  const std::vector<Shape> shapes = checkGraph(g);
  std::map<std::string, const Shape*> byName;
  for (size_t i = 0; i < g.nodes.size(); ++i) byName[g.nodes[i].name] = &shapes[i];
  std::vector<OutputDesc> out;
  for (const GraphOutput& o : g.outputs) out.push_back(*outputOfShape(o.name, *byName.at(o.value)));
  return out;
}

}  // namespace kime
