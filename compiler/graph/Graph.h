// The Graph: kime's input format (docs/graph-format.md), as C++ values.
//
// A Graph reads a batch (ids, cu, markers, mcu, qtype: docs/batch.md), declares its weights by name,
// shape and dtype, and lists nodes in an order where every operand is defined before it is used.
// Values share one namespace: the five inputs, the weights, and the nodes (a node's value is
// named after the node).
#ifndef KIME_GRAPH_GRAPH_H
#define KIME_GRAPH_GRAPH_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kime/batch.h"
#include "kime/core/Eltwise.h"
#include "kime/core/Shapes.h"
#include "kime/gather_limits.h"

namespace kime {

enum class OpKind {
  GatherRows,
  ExpandSeqs,
  Positions,
  Add,
  Mul,
  Silu,
  Gelu,
  RmsNorm,
  LayerNorm,
  Linear,
  Rope,
  Attention,
  GatherMarkers,
  FirstRows,
  Squeeze,
  // format 2
  Sub,
  GeluTanh,
  Relu,
  Tanh,
  Sigmoid,
  MeanSeqs,
  // format 3
  TokenTypes,
};

// The elementwise function an op applies (add, sub, mul and the activations), or none.
std::optional<eltwise::Fn> eltwiseFn(OpKind kind);

// What the format says about one op: its JSON name, its operand fields in order (some optional)
// and its attribute fields.
struct OpSpec {
  struct Operand {
    const char* field;
    bool optional;
  };
  struct Attr {
    const char* field;
    bool integer;
  };
  OpKind kind;
  const char* name;
  std::vector<Operand> operands;
  std::vector<Attr> attrs;
  int format = 1;  // the first Graph format that has the op
};

const std::vector<OpSpec>& opSpecs();
const OpSpec& opSpec(OpKind kind);
const OpSpec* findOpSpec(const std::string& name);

struct Node {
  OpKind kind;
  std::string name;
  std::vector<std::string> operands;  // in OpSpec order; "" for an absent optional operand
  std::vector<double> attrs;          // in OpSpec order

  bool operator==(const Node& o) const {
    return kind == o.kind && name == o.name && operands == o.operands && attrs == o.attrs;
  }
};

struct WeightDecl {
  std::string name;
  std::vector<int64_t> shape;
  shapes::DType dtype = shapes::DType::F32;

  bool operator==(const WeightDecl& o) const { return name == o.name && shape == o.shape && dtype == o.dtype; }
};

// One of the Graph's outputs: its name and the value it is (docs/graph-format.md: [M], [M, K],
// [S] or [S, K] f32).
struct GraphOutput {
  std::string name;
  std::string value;

  bool operator==(const GraphOutput& o) const { return name == o.name && value == o.value; }
};

struct Graph {
  // The format written; a reader takes every format from 1 to it (docs/graph-format.md).
  static constexpr int kFormat = 3;
  std::string name;
  int64_t vocab = 0;  // token ids must be below it
  int64_t types = 0;  // question types must be below it
  std::vector<WeightDecl> weights;
  std::vector<Node> nodes;
  std::vector<GraphOutput> outputs;  // in order; format 1 and 2: logits [M], act [S, 2]
  // A token id no batch may hold (format 3's "padding_id"; -1: none): an imported model's padding
  // id, whose tokens its exported positions do not count (RoBERTa's padding_idx + cumsum(ids != pad)).
  int64_t paddingId = -1;

  bool operator==(const Graph& o) const {
    return name == o.name && vocab == o.vocab && types == o.types && weights == o.weights && nodes == o.nodes &&
           outputs == o.outputs && paddingId == o.paddingId;
  }
  // The seed's outputs: logits (the value `logits`, [M]) and act (`act`, [S, 2]).
  void setSeedOutputs(const std::string& logits, const std::string& act) {
    outputs = {{"logits", logits}, {"act", act}};
  }
  // Whether its outputs are named as the seed's (logits, act), the default of formats 1 and 2.
  bool hasSeedOutputs() const { return outputs.size() == 2 && outputs[0].name == "logits" && outputs[1].name == "act"; }
};

// The batch's arrays as graph inputs, in order: name and shape.
struct InputDecl {
  const char* name;
  shapes::Shape shape;
};
const std::vector<InputDecl>& graphInputs();

// The longest sequence the graph takes: the rows of a learned position table (a table gathered
// by positions); 0 when it has none.
size_t learnedPositions(const Graph& g);

// Whether `n` gathers a table's rows by the tokens' positions (a positions node's result).
bool gathersByPositions(const Graph& g, const Node& n);

// The gathers whose index a batch may take past their table, in node order: those by cu, mcu
// or markers, and those by token ids, types or positions whose table has fewer rows than the
// vocabulary, the types or the learned positions (checkBatch's limits) allow.
std::vector<GatherLimit> gatherLimits(const Graph& g);

// "node 12 (linear "layers.3.mlp.up")": how messages name a node.
std::string describeNode(const Graph& g, size_t index);

// Checks names, order, operand references, attributes and every node's shape rule; throws
// CompileError naming the node and the field. Returns each node's result shape, by node index.
std::vector<shapes::Shape> checkGraph(const Graph& g);

// The outputs of a checked graph as the runtime describes them: name, rows (per marker or per
// sequence) and width.
std::vector<OutputDesc> outputDescs(const Graph& g);
// The output a value's shape makes ([M], [M, K], [S], [S, K] f32), or nothing.
std::optional<OutputDesc> outputOfShape(const std::string& name, const shapes::Shape& s);

// Reads and writes the JSON form. `source` names the input in messages (a file name).
Graph parseGraphJson(const std::string& text, const std::string& source);
Graph readGraphFile(const std::string& path);
std::string writeGraphJson(const Graph& g);

}  // namespace kime

#endif  // KIME_GRAPH_GRAPH_H
