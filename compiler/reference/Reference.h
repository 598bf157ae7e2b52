// The reference evaluator: any Graph, on any Batch, in f64, plainly.
//
// It is the oracle of every test, so it favours being obviously right over being fast: each op
// is a direct loop over the formula of docs/graph-format.md, and every intermediate is kept.
#ifndef KIME_REFERENCE_REFERENCE_H
#define KIME_REFERENCE_REFERENCE_H

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "kime/batch.h"

namespace kime {

// The seed's Outputs, in f64.
struct RefOutputs {
  std::vector<double> logits;
  std::vector<std::array<double, 2>> act;
};

// Weights by their graph name, row major, widened to f64.
using RefWeights = std::map<std::string, std::vector<double>>;

// Checks the checkpoint against the graph's declarations (CompileError) and widens the weights.
RefWeights loadRefWeights(const Graph& g, const Checkpoint& c);

// Evaluates `g` on `batch`. The batch is checked first with the seed's rules and messages
// (checkBatch). An index a node cannot follow (a position past a learned table) is a Batch error
// that names the node.
[[nodiscard]] std::optional<Error> evaluateReference(const Graph& g, const RefWeights& w,
                                                     const Batch& batch, RefOutputs& out);

// How every check compares an output with the reference: within `tol` absolutely, or relatively
// where the reference exceeds 1 in size.
bool withinTolerance(double got, double want, double tol);

}  // namespace kime

#endif  // KIME_REFERENCE_REFERENCE_H
