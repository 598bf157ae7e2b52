// The Graph an ONNX model becomes, built node by node: weights with their values (the checkpoint
// to write), nodes with unique names, and, at the end, only what the outputs read.
#ifndef KIME_IMPORT_ONNX_GRAPHEMITTER_H
#define KIME_IMPORT_ONNX_GRAPHEMITTER_H

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"

namespace kime::onnx_import {

class GraphEmitter {
 public:
  explicit GraphEmitter(std::string name);

  // A weight of these values, named after `hint` (made unique); stored as `dtype`.
  std::string weight(const std::string& hint, std::vector<int64_t> shape, std::vector<float> values,
                     shapes::DType dtype = shapes::DType::F32);
  // The weight made for `key` (an initializer's name) when there is one; else a new one as above.
  std::string sharedWeight(const std::string& key, const std::string& hint, std::vector<int64_t> shape,
                           std::vector<float> values, shapes::DType dtype = shapes::DType::F32);
  // A node named after `hint` (made unique); returns its value's name.
  std::string node(OpKind kind, const std::string& hint, std::vector<std::string> operands,
                   std::vector<double> attrs = {});
  // The tokens' positions (one node, made on first use).
  std::string positions();
  // Each token's type (token_types: the batch's per-token types, or its sequence's qtype).
  std::string tokenTypes();

  // The node that computes `value`, or null (an input or a weight).
  Node* producer(const std::string& value);
  // A weight's values, to change before anything else reads it (folding a scale into a linear).
  TensorData* weightData(const std::string& name);
  // The nodes that read `value` so far.
  size_t readers(const std::string& value) const;

  // The Graph of the nodes that the outputs reach, their weights only; checked.
  Graph finish(const std::vector<GraphOutput>& outputs, int64_t vocab, int64_t types);
  // The checkpoint of `g`'s weights.
  std::vector<TensorData> checkpoint(const Graph& g) const;

 private:
  std::string unique(const std::string& hint);

  Graph g_;
  std::map<std::string, TensorData> data_;
  std::map<std::string, size_t> producer_;     // value -> node index
  std::map<std::string, std::string> shared_;  // key -> weight
  std::set<std::string> taken_;
  std::string positions_, tokenTypes_;
};

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_GRAPHEMITTER_H
