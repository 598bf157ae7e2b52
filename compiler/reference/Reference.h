// The reference evaluator: any Graph, on any Batch, in f64, plainly.
//
// It is the oracle of every test, so it favours being obviously right over being fast: each op
// is a direct loop over the formula of docs/graph-format.md. Two concessions to speed, neither
// changing what is computed: the dense loops (linear, attention) run several outputs side by side
// in vectors (DenseF64.h; each output still summed in one fixed order, the same bits on every CPU),
// and an intermediate's storage is reused once no later node reads it.
#ifndef KIME_REFERENCE_REFERENCE_H
#define KIME_REFERENCE_REFERENCE_H

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "kime/batch.h"
#include "kime/core/KernelChoices.h"

namespace kime {

// The Graph's outputs (in its order, each its rows times its width), in f64.
using RefOutputs = OutputValues<double>;

// Weights by their graph name, row major, widened to f64.
using RefWeights = std::map<std::string, std::vector<double>>;

// Checks the checkpoint against the graph's declarations (CompileError) and widens the weights.
RefWeights loadRefWeights(const Graph& g, const Checkpoint& c);

// Evaluates `g` on `batch`. The batch is checked first with checkBatch's rules and messages
// (checkBatch). An index a node cannot follow (a position past a learned table) is a Batch error
// that names the node.
[[nodiscard]] std::optional<Error> evaluateReference(const Graph& g, const RefWeights& w, const Batch& batch,
                                                     RefOutputs& out);

// evaluateReference for many batches of one model: the weights that linears read are repacked
// once (DenseF64.h), and the storage of one batch's intermediates serves the next. `g` and `w`
// must outlive it. One batch at a time (each evaluation runs on the machine's threads).
class RefSession {
 public:
  RefSession(const Graph& g, const RefWeights& w);
  // On a checkpoint's weights (checked against `g`, CompileError): a weight that only linears
  // read is widened straight into its packed form, with no f64 copy of it kept. `ck` need only
  // outlive the constructor. `linears` is the arithmetic the compiled linears use: with int8, the linears that take
  // int8 compute as the int8 kernels do (quant/Int8.h), and a table gathered by the ids or positions is read as its
  // int8 rows give it back (LinearArithmetic.h): what --cpu-precision int8 costs in accuracy, measured. f32 and bf16
  // are computed exactly (f64; bf16's rounding is what its tolerance allows for).
  RefSession(const Graph& g, const Checkpoint& ck, Arithmetic linears = Arithmetic::f32);
  ~RefSession();
  [[nodiscard]] std::optional<Error> evaluate(const Batch& batch, RefOutputs& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// How far an output may be from the reference: |got - want| <= abs + rel * |want|. `abs` is the
// noise floor of the arithmetic (below it no sign can be judged), far under the outputs' size, so
// that a wrong sign or a wrong order of magnitude fails for any output larger than about `abs`.
struct Tolerance {
  double abs, rel;
};
// The f32 kernels; bf16 linears (--cpu-precision bf16: errors up to ~1.6e-2 absolute on outputs
// of size 0.02-3.4, measured on the example and test models); TF32 tensor cores (~1e-3 measured in
// the CUDA emulator).
constexpr Tolerance kF32Tolerance{1e-4, 1e-4};
constexpr Tolerance kBf16Tolerance{2e-2, 1e-2};
constexpr Tolerance kTf32Tolerance{1e-2, 1e-2};
// int8 linears and embedding tables (--cpu-precision int8): about 1.5 times the largest error
// kime-int8-error measured on the golden, example and base models (0.064 on outputs up to 3.2,
// where 0.26 is allowed; bench/NOTES.md).
constexpr Tolerance kInt8Tolerance{1e-1, 5e-2};

bool withinTolerance(double got, double want, Tolerance t);
// "0.0001" where abs and rel are equal, else "abs 0.02 + rel 0.01".
std::string describe(Tolerance t);

}  // namespace kime

#endif  // KIME_REFERENCE_REFERENCE_H
