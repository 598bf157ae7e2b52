#include "GraphEmitter.h"

#include <algorithm>

#include "support/Diagnostic.h"

namespace kime::onnx_import {

GraphEmitter::GraphEmitter(std::string name) {
  g_.name = std::move(name);
  for (const InputDecl& in : graphInputs()) taken_.insert(in.name);
}

std::string GraphEmitter::unique(const std::string& hint) {
  std::string base = hint.empty() ? "v" : hint;
  // A leading "/" (torch.onnx's scope paths) reads badly in messages and the plan.
  while (!base.empty() && base[0] == '/') base.erase(0, 1);
  std::replace(base.begin(), base.end(), '/', '.');
  if (base.empty()) base = "v";
  std::string name = base;
  for (int k = 1; taken_.count(name); ++k) name = base + "." + std::to_string(k);
  taken_.insert(name);
  return name;
}

std::string GraphEmitter::weight(const std::string& hint, std::vector<int64_t> shape, std::vector<float> values,
                                 shapes::DType dtype) {
  const std::string name = unique(hint);
  g_.weights.push_back({name, shape, dtype});
  data_[name] = TensorData{name, dtype, std::move(shape), std::move(values)};
  return name;
}

std::string GraphEmitter::sharedWeight(const std::string& key, const std::string& hint, std::vector<int64_t> shape,
                                       std::vector<float> values, shapes::DType dtype) {
  auto it = shared_.find(key);
  if (it != shared_.end()) return it->second;
  return shared_[key] = weight(hint, std::move(shape), std::move(values), dtype);
}

std::string GraphEmitter::node(OpKind kind, const std::string& hint, std::vector<std::string> operands,
                               std::vector<double> attrs) {
  const std::string name = unique(hint);
  producer_[name] = g_.nodes.size();
  g_.nodes.push_back({kind, name, std::move(operands), std::move(attrs)});
  return name;
}

std::string GraphEmitter::positions() {
  if (positions_.empty()) positions_ = node(OpKind::Positions, "positions", {"cu"});
  return positions_;
}

std::string GraphEmitter::tokenTypes() {
  if (tokenTypes_.empty()) tokenTypes_ = node(OpKind::TokenTypes, "token_types", {"cu"});
  return tokenTypes_;
}

Node* GraphEmitter::producer(const std::string& value) {
  auto it = producer_.find(value);
  return it == producer_.end() ? nullptr : &g_.nodes[it->second];
}

TensorData* GraphEmitter::weightData(const std::string& name) {
  auto it = data_.find(name);
  return it == data_.end() ? nullptr : &it->second;
}

size_t GraphEmitter::readers(const std::string& value) const {
  size_t n = 0;
  for (const Node& node : g_.nodes) n += size_t(std::count(node.operands.begin(), node.operands.end(), value));
  return n;
}

Graph GraphEmitter::finish(const std::vector<GraphOutput>& outputs, int64_t vocab, int64_t types) {
  // Backwards from the outputs: the nodes they reach, and the weights those read.
  std::set<std::string> live;
  for (const GraphOutput& o : outputs) live.insert(o.value);
  std::vector<bool> keep(g_.nodes.size(), false);
  for (size_t i = g_.nodes.size(); i-- > 0;) {
    if (!live.count(g_.nodes[i].name)) continue;
    keep[i] = true;
    for (const std::string& ref : g_.nodes[i].operands)
      if (!ref.empty()) live.insert(ref);
  }
  Graph g;
  g.name = g_.name;
  g.vocab = vocab, g.types = types;
  for (const WeightDecl& w : g_.weights)
    if (live.count(w.name)) g.weights.push_back(w);
  for (size_t i = 0; i < g_.nodes.size(); ++i)
    if (keep[i]) g.nodes.push_back(g_.nodes[i]);
  g.outputs = outputs;
  try {
    checkGraph(g);
  } catch (const CompileError& e) {
    throw CompileError(std::string("internal: the imported Graph does not check: ") + e.what());
  }
  return g;
}

std::vector<TensorData> GraphEmitter::checkpoint(const Graph& g) const {
  std::vector<TensorData> out;
  for (const WeightDecl& w : g.weights) out.push_back(data_.at(w.name));
  return out;
}

}  // namespace kime::onnx_import
