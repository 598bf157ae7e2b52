// A framework's own outputs on sample batches: what PyTorch computed for an exported model
// (kime.onnx.expected_outputs writes them; docs/onnx.md), as a JSON file
//   {"cases": [{"name": "...", "batch": {"ids", "cu", "markers", "mcu", "qtype"},
//               OUTPUT: [...] or [[...], ...], ...}, ...]}
// where each OUTPUT is one of the model's outputs by name (e.g. "logits": [...], "act": [[a, b], ...]):
// a value per row, or a list of its width per row.
// kime-import --expect checks an import against them with the f64 reference; kime-compile
// --selftest-from makes them the artifact's self-test, so a device checks its kernels against
// the framework's numbers, not only the reference's.
#ifndef KIME_PIPELINE_EXPECTEDOUTPUTS_H
#define KIME_PIPELINE_EXPECTEDOUTPUTS_H

#include <array>
#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "kime/tooling/BatchFile.h"
#include "reference/Reference.h"

namespace kime {

struct ExpectedCase {
  std::string name;
  tooling::OwnedBatch batch;
  struct Output {
    std::string name;
    std::vector<double> values;  // row-major
    size_t width = 1;            // the inner lists' length (1 for a list of numbers)
  };
  std::vector<Output> outputs;  // as the file lists them

  // The outputs in the order and shapes of `descs`: CompileError where one is missing or of
  // another shape than the batch and `descs` make.
  RefOutputs inOrder(const std::vector<OutputDesc>& descs) const;
};

// Reads `path`; throws CompileError naming the file, the case and the field.
std::vector<ExpectedCase> readExpectedOutputs(const std::string& path);
std::vector<ExpectedCase> parseExpectedOutputs(const std::string& text, const std::string& source);

// The f64 reference of `g` on every case against its expected outputs: the largest difference
// past kF32Tolerance's allowance (0 where all are within it) and, in `worst`, where. Throws
// CompileError naming a case the reference refuses (a batch the model cannot take).
struct ExpectedDifference {
  double maxAbs = 0;  // the largest |reference - expected|
  double overBy = 0;  // the largest |difference| / (kF32Tolerance's allowance); over 1 fails
  std::string worst;  // "case \"b0\": logits[3] is ... in kime's reference, ... expected"
};
ExpectedDifference compareWithReference(const Graph& g, const Checkpoint& ck, const std::vector<ExpectedCase>& cases);

}  // namespace kime

#endif  // KIME_PIPELINE_EXPECTEDOUTPUTS_H
