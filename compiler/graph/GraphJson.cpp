// The JSON form of a Graph (docs/graph-format.md).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "Graph.h"
#include "support/JsonFields.h"

namespace kime {

using json::Json;
using OJson = nlohmann::ordered_json;

static std::string inputsText() {
  std::string s;
  for (const InputDecl& in : graphInputs())
    s += std::string(s.empty() ? "" : ", ") + in.name + " " + shapes::str(in.shape.dims) + " " +
         shapes::str(in.shape.dtype);
  return s;
}

// The inputs are fixed by the batch contract (docs/batch.md); the file states them so that it reads on its own.
static void checkInputs(const Json& j, const std::string& where) {
  auto bad = [&] { throw CompileError(where + ": inputs must be exactly the batch's arrays: " + inputsText()); };
  if (!j.is_array() || j.size() != graphInputs().size()) bad();
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    const InputDecl& want = graphInputs()[i];
    if (!e.is_object() || e.size() != 3 || !e.contains("name") || !e.contains("dtype") || !e.contains("shape") ||
        e["name"] != want.name || e["dtype"] != shapes::str(want.shape.dtype))
      bad();
    Json shape = Json::array();
    for (const auto& d : want.shape.dims) shape.push_back(shapes::str(d));
    if (e["shape"] != shape) bad();
  }
}

static WeightDecl parseWeight(const Json& j, const std::string& where) {
  json::requireObject(j, where);
  json::onlyKeys(j, {"name", "dtype", "shape"}, where);
  WeightDecl w;
  w.name = json::stringField(j, "name", where);
  std::string dt = json::stringField(j, "dtype", where);
  auto dtype = shapes::parseDType(dt);
  if (!dtype || !shapes::isFloat(*dtype)) throw CompileError(where + ": dtype \"" + dt + "\" is not f32, f16 or bf16");
  w.dtype = *dtype;
  const Json& shape = json::field(j, "shape", where);
  if (!shape.is_array()) throw CompileError(where + ": field \"shape\" must be an array");
  for (const Json& d : shape) w.shape.push_back(json::asInt(d, where + ": a size"));
  return w;
}

static Node parseNode(const Json& j, size_t index, const std::string& source, int64_t format) {
  std::string where = source + ": node " + std::to_string(index);
  json::requireObject(j, where);
  std::string op = json::stringField(j, "op", where);
  const OpSpec* spec = findOpSpec(op);
  if (!spec) throw CompileError(where + ": unknown op \"" + op + "\"");
  Node n{spec->kind, json::stringField(j, "name", where + " (" + op + ")"), {}, {}};
  where += " (" + op + " \"" + n.name + "\")";
  if (spec->format > format)
    throw CompileError(where + ": op \"" + op + "\" is new in graph format " + std::to_string(spec->format) +
                       ", and this file says format " + std::to_string(format));
  std::set<std::string> known = {"op", "name"};
  for (const auto& o : spec->operands) {
    known.insert(o.field);
    auto it = j.find(o.field);
    if (it == j.end()) {
      if (!o.optional) throw CompileError(where + ": operand \"" + o.field + "\" is missing");
      n.operands.emplace_back();
    } else {
      n.operands.push_back(json::stringField(j, o.field, where));
    }
  }
  for (const auto& a : spec->attrs) {
    known.insert(a.field);
    n.attrs.push_back(a.integer ? static_cast<double>(json::intField(j, a.field, where))
                                : json::numberField(j, a.field, where));
  }
  json::onlyKeys(j, known, where);
  return n;
}

// Formats 1 and 2 have the seed's outputs only: logits [M] and act [S, 2].
static void checkSeedOutputs(const Graph& g, const std::vector<shapes::Shape>& shapes, int64_t format) {
  const shapes::Shape want[2] = {{{shapes::Dim::symbol(shapes::Sym::M)}, shapes::DType::F32},
                                 {{shapes::Dim::symbol(shapes::Sym::S), shapes::Dim::fixed(2)}, shapes::DType::F32}};
  for (size_t i = 0; i < 2; ++i) {
    const GraphOutput& o = g.outputs[i];
    for (size_t n = 0; n < g.nodes.size(); ++n)
      if (g.nodes[n].name == o.value && !(shapes[n] == want[i]))
        throw CompileError("output \"" + o.name + "\" must be " + shapes::str(want[i].dims) + " f32 in graph format " +
                           std::to_string(format) + ", but \"" + o.value + "\" is " + shapes::str(shapes[n].dims) +
                           " " + shapes::str(shapes[n].dtype) + " (format 3 has outputs of any width)");
  }
}

// Format 3: [{"name": NAME, "value": VALUE}, ...]; formats 1 and 2: {"logits": VALUE, "act": VALUE}.
static std::vector<GraphOutput> parseOutputs(const Json& outputs, const std::string& source, int64_t format) {
  const std::string where = source + ": outputs";
  std::vector<GraphOutput> out;
  if (format < 3) {
    json::requireObject(outputs, where);
    json::onlyKeys(outputs, {"logits", "act"}, where);
    out = {{"logits", json::stringField(outputs, "logits", where)}, {"act", json::stringField(outputs, "act", where)}};
    return out;
  }
  if (!outputs.is_array()) throw CompileError(where + " must be an array of {\"name\", \"value\"} (graph format 3)");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string at = where + " " + std::to_string(i);
    json::requireObject(outputs[i], at);
    json::onlyKeys(outputs[i], {"name", "value"}, at);
    out.push_back({json::stringField(outputs[i], "name", at), json::stringField(outputs[i], "value", at)});
  }
  return out;
}

Graph parseGraphJson(const std::string& text, const std::string& source) {
  Json j = json::parse(text, source);
  json::requireObject(j, source);
  json::onlyKeys(j, {"format", "name", "vocab", "types", "padding_id", "inputs", "weights", "nodes", "outputs"},
                 source);
  int64_t format = json::intField(j, "format", source);
  if (format < 1 || format > Graph::kFormat)
    throw CompileError(source + ": graph format " + std::to_string(format) +
                       " is not supported (this kime reads formats 1 to " + std::to_string(Graph::kFormat) + ")");
  Graph g;
  g.name = json::stringField(j, "name", source);
  g.vocab = json::intField(j, "vocab", source);
  g.types = json::intField(j, "types", source);
  if (j.contains("padding_id")) {
    if (format < 3) throw CompileError(source + ": \"padding_id\" is new in graph format 3");
    g.paddingId = json::intField(j, "padding_id", source);
  }
  checkInputs(json::field(j, "inputs", source), source);

  const Json& weights = json::field(j, "weights", source);
  if (!weights.is_array()) throw CompileError(source + ": field \"weights\" must be an array");
  for (size_t i = 0; i < weights.size(); ++i)
    g.weights.push_back(parseWeight(weights[i], source + ": weight " + std::to_string(i)));

  const Json& nodes = json::field(j, "nodes", source);
  if (!nodes.is_array()) throw CompileError(source + ": field \"nodes\" must be an array");
  for (size_t i = 0; i < nodes.size(); ++i) g.nodes.push_back(parseNode(nodes[i], i, source, format));

  g.outputs = parseOutputs(json::field(j, "outputs", source), source, format);

  try {
    const std::vector<shapes::Shape> shapes = checkGraph(g);
    if (format < 3) checkSeedOutputs(g, shapes, format);
  } catch (const CompileError& e) {
    throw CompileError(source + ": " + e.what());
  }
  return g;
}

Graph readGraphFile(const std::string& path) { return parseGraphJson(json::readFile(path), path); }

std::string writeGraphJson(const Graph& g) {
  // Written by hand around nlohmann so that each weight and node stays on one line.
  auto line = [](const OJson& j) { return j.dump(); };
  std::string s = "{\n";
  // The oldest format that holds it: the seed's outputs are format 2's.
  bool seed = g.hasSeedOutputs() && g.paddingId < 0 &&
              std::all_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return opSpec(n.kind).format < 3; });
  try {
    if (seed) checkSeedOutputs(g, checkGraph(g), 2);
  } catch (const CompileError&) {
    seed = false;  // named as the seed's, not of their shapes: format 3
  }
  s += "  \"format\": " + std::to_string(seed ? 2 : Graph::kFormat) + ",\n";
  s += "  \"name\": " + OJson(g.name).dump() + ",\n";
  s += "  \"vocab\": " + std::to_string(g.vocab) + ",\n";
  s += "  \"types\": " + std::to_string(g.types) + ",\n";
  if (g.paddingId >= 0) s += "  \"padding_id\": " + std::to_string(g.paddingId) + ",\n";
  s += "  \"inputs\": [\n";
  for (size_t i = 0; i < graphInputs().size(); ++i) {
    const InputDecl& in = graphInputs()[i];
    OJson shape = OJson::array();
    for (const auto& d : in.shape.dims) shape.push_back(shapes::str(d));
    s += "    " + line({{"name", in.name}, {"dtype", shapes::str(in.shape.dtype)}, {"shape", shape}});
    s += i + 1 < graphInputs().size() ? ",\n" : "\n";
  }
  s += "  ],\n  \"weights\": [\n";
  for (size_t i = 0; i < g.weights.size(); ++i) {
    const WeightDecl& w = g.weights[i];
    s += "    " + line({{"name", w.name}, {"dtype", shapes::str(w.dtype)}, {"shape", w.shape}});
    s += i + 1 < g.weights.size() ? ",\n" : "\n";
  }
  s += "  ],\n  \"nodes\": [\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const OpSpec& spec = opSpec(n.kind);
    OJson j = {{"op", spec.name}, {"name", n.name}};
    for (size_t k = 0; k < spec.operands.size(); ++k)
      if (!n.operands[k].empty()) j[spec.operands[k].field] = n.operands[k];
    for (size_t k = 0; k < spec.attrs.size(); ++k) {
      if (spec.attrs[k].integer)
        j[spec.attrs[k].field] = static_cast<int64_t>(n.attrs[k]);
      else
        j[spec.attrs[k].field] = n.attrs[k];
    }
    s += "    " + line(j) + (i + 1 < g.nodes.size() ? ",\n" : "\n");
  }
  s += "  ],\n";
  if (seed) {
    s += "  \"outputs\": " + line({{"logits", g.outputs[0].value}, {"act", g.outputs[1].value}}) + "\n}\n";
    return s;
  }
  s += "  \"outputs\": [\n";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    s += "    " + line({{"name", g.outputs[i].name}, {"value", g.outputs[i].value}}) +
         (i + 1 < g.outputs.size() ? ",\n" : "\n");
  s += "  ]\n}\n";
  return s;
}

}  // namespace kime
