// The importer's state while it walks an ONNX graph in order: each value's abstract value
// (Values.h), the Graph being built, and what the op handlers (Ops*.cpp) share.
#ifndef KIME_IMPORT_ONNX_IMPORTER_H
#define KIME_IMPORT_ONNX_IMPORTER_H

#include <functional>
#include <map>
#include <string>

#include "GraphEmitter.h"
#include "OnnxImport.h"
#include "Values.h"
#include "onnx/onnx_pb.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

class Importer;
using OpHandler = void (*)(Importer&);

// A refusal that already names the node (what Importer::refuse throws).
class Refusal : public CompileError {
 public:
  using CompileError::CompileError;
};
using OpTable = std::map<std::string, OpHandler>;

// Each file of handlers adds its ops.
void addShapeOps(OpTable& t);
void addSelectOps(OpTable& t);
void addMathOps(OpTable& t);
void addNnOps(OpTable& t);

class Importer {
 public:
  Importer(const onnx::ModelProto& m, std::string source, const OnnxImportOptions& o);
  OnnxImport run();

  // The node being imported: its inputs (absent optional ones are empty names) and outputs.
  const onnx::NodeProto& node() const { return *node_; }
  bool has(size_t k) const;
  const Value& in(size_t k) const;
  void out(size_t k, Value v);
  // Refuses the node: "SOURCE: node 'NAME' (OP): why". Never returns.
  [[noreturn]] void refuse(const std::string& why) const;
  // The name the Graph gives what output k computes.
  std::string hint(size_t k = 0) const;

  // Attributes of the node (defaults where absent).
  bool hasAttr(const std::string& name) const;
  int64_t attrInt(const std::string& name, int64_t fallback) const;
  double attrFloat(const std::string& name, double fallback) const;
  std::string attrString(const std::string& name) const;  // "" where the node has none
  std::vector<int64_t> attrInts(const std::string& name) const;
  const onnx::AttributeProto* attr(const std::string& name) const;

  // Input k as a constant, or as integers that may involve B and L (a constant's or a SymVal's);
  // refuses the node when it is neither, saying what `what` is.
  const Tensor& constIn(size_t k, const std::string& what) const;
  std::vector<SymInt> symIn(size_t k, const std::string& what) const;

  GraphEmitter& graph() { return graph_; }
  bool hasMask() const { return hasMask_; }
  // A table gathered by token ids or question types: the vocabulary and the types are its rows.
  void noteVocab(int64_t rows);
  void noteTypes(int64_t rows);
  // The token ids compared with `id` (the padding id of RoBERTa's positions): the Graph's padding id,
  // which batches may not hold; refused where the model compares them with another id too.
  void notePaddingId(int64_t id);
  // Whether Graph value `value` is read by no live ONNX value but through `tree` (whose result is
  // made once for all of them), so that a scale may be folded into the node that computes it.
  bool heldOnlyThrough(const std::string& value, const RowExpr* tree) const;
  // Whether Graph value `value` is read by no live ONNX value but the node's own inputs, and by
  // each of those for the last time.
  bool readOnlyHere(const std::string& value) const;

  // The rows of `a` as a Graph value with nothing pending (its RowExpr made into Graph ops), or a
  // refusal naming the node. Templates.cpp.
  ActVal materialize(const ActVal& a);
  // `a` with its RowExpr made into a norm or RoPE where it already is one; else `a`.
  ActVal settle(const ActVal& a);
  // A per-sequence value read by every token of its sequence (expand_seqs).
  ActVal toTokens(const ActVal& a);

 private:
  ActVal materializeOnce(const ActVal& a);
  void declareInputs();
  void importNode(const onnx::NodeProto& n);
  std::string outputValue(const std::string& wanted, bool perToken);
  // The Graph's outputs: options_' seed contract, the ones --output names, or every ONNX output.
  std::vector<GraphOutput> graphOutputs();
  std::string outputRows(const std::string& name, const ActVal& a, bool perToken, int64_t width);

  const onnx::ModelProto& model_;
  std::string source_;
  OnnxImportOptions options_;
  GraphEmitter graph_;
  std::map<std::string, Value> values_;
  std::map<std::string, size_t> usesLeft_;  // reads of each ONNX value still to come
  // Each RowExpr made into Graph ops once, whichever ONNX values hold it (kept alive here).
  std::map<const RowExpr*, std::pair<RowExprPtr, ActVal>> materialized_;
  const onnx::NodeProto* node_ = nullptr;
  bool hasMask_ = false;
  int64_t vocab_ = 0, types_ = 0;
  int64_t paddingId_ = -1;
};

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_IMPORTER_H
