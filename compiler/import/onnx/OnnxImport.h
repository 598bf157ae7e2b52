// kime's ONNX importer: an encoder exported from PyTorch (torch.onnx, opsets 13 to 17, dynamic
// batch and length) becomes a Graph and its checkpoint. docs/onnx.md says which models it takes:
// inputs input_ids [B, L] (and attention_mask [B, L], qtype [B] or token_type_ids [B, L]),
// outputs by name: each [B, L] or [B, L, K] per token (read at the markers) or [B] or [B, K] per
// sequence.
#ifndef KIME_IMPORT_ONNX_ONNXIMPORT_H
#define KIME_IMPORT_ONNX_ONNXIMPORT_H

#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"

namespace kime {

struct OnnxImportOptions {
  // The seed's contract: with seedOutputs (or either name given), the Graph's outputs are exactly
  // `logits` (this per-token output, one wide) and `act` (this per-sequence pair); an empty name:
  // the one output that fits.
  std::string logits, act;
  bool seedOutputs = false;
  std::string name;  // the Graph's name; empty: the model's graph name
  // The ONNX outputs to keep, by name (--output); empty: every one (without logits or act).
  std::vector<std::string> outputs;
};

struct OnnxImport {
  Graph graph;
  std::vector<TensorData> weights;  // the checkpoint of the Graph's weights
};

// Reads and imports MODEL.onnx (or ONNX text, .onnxtxt). Throws CompileError naming the file
// and, where a node is refused, the node ("node 'Where_12' (Where): ...").
OnnxImport importOnnxFile(const std::string& path, const OnnxImportOptions& options = {});
// The same from bytes (the fuzzer's entry); `dir` holds external data, if any.
OnnxImport importOnnxBytes(const std::string& bytes, const std::string& source, const OnnxImportOptions& options = {});

}  // namespace kime

#endif  // KIME_IMPORT_ONNX_ONNXIMPORT_H
