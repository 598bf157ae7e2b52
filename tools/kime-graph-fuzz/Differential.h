// One random Graph through the compiler and the runtime, against the reference evaluator.
#ifndef KIME_TOOLS_GRAPHFUZZ_DIFFERENTIAL_H
#define KIME_TOOLS_GRAPHFUZZ_DIFFERENTIAL_H

#include <cstdint>
#include <string>
#include <vector>

#include "graph/RandomGraph.h"
#include "kime/core/KernelChoices.h"

namespace kime::fuzz {

struct Options {
  GraphFamily family = GraphFamily::Any;
  unsigned cudaEvery = 0;       // PTX too for every Nth seed
  std::string keep;             // a folder for failing Graphs, or empty
  bool fusion = true;           // off: generic kernels only (kime-compile --no-fusion)
  int format = Graph::kFormat;  // the Graph format whose ops the Graphs take (RandomGraph.h)
  // The CPU linears' arithmetic (kime-compile --cpu-precision): the Graphs compile for its x86
  // targets and are held to its reference (int8's computes as the int8 kernels do) and tolerance.
  Arithmetic precision = Arithmetic::f32;
};

struct Result {
  uint64_t seed = 0;
  size_t nodes = 0, kernels = 0, generic = 0;  // Graph nodes; kernels, of them generic classes
  std::string refused;                         // the compiler's error, when it refused the Graph
  size_t batches = 0, refusedBatches = 0, mismatches = 0;
  std::string firstMismatch;
  size_t conditioned = 0;  // outputs past kF32Tolerance but within the Graph's conditioning (compare)
  double worst = 0;        // the largest |got - want| as a share of the tolerance
  double worstRel = 0;     // and the largest relative error, |got - want| / max(|want|, 1e-3)
  std::string targets;     // the CPU code that ran
  // Batch invariance (kime/tooling/Invariance.h), 1 and 2 threads on each target: runs compared
  // with the sequence's run alone, and those not the same bytes.
  size_t invarianceRuns = 0, variant = 0;
  std::string firstVariant;

  bool ok() const { return refused.empty() && mismatches == 0 && variant == 0; }
};

// The CPU targets a precision's Graphs compile and run on, of those this CPU runs (none: bf16
// where the CPU lacks AVX512-BF16 and its Sapphire Rapids set).
std::vector<std::string> targetsFor(Arithmetic precision);

// Writes the Graph of `seed`, its weights and the two buckets into `dir` (graph.json,
// model.safetensors, buckets.json).
void writeGraph(uint64_t seed, const Options& o, const std::string& dir);

// Generates the Graph of `seed`, compiles it, compares every bucket's batches and checks that
// each sequence's outputs are the same bytes in any batch.
Result runGraph(uint64_t seed, const Options& o);

struct Summary {
  size_t graphs = 0, compiled = 0, refused = 0, mismatched = 0, batches = 0, kernels = 0, generic = 0, conditioned = 0;
  size_t invarianceRuns = 0, variantGraphs = 0;
  double worst = 0, worstRel = 0;

  void add(const Result& r);
  bool ok() const { return refused == 0 && mismatched == 0 && variantGraphs == 0 && graphs > 0; }
};

// "seed 12: 37 nodes, 21 kernels (6 generic), 24 batches on x86-64-avx2, worst 0.02 of tolerance"
std::string describe(const Result& r);
// The sweep's table: compiled, refused, mismatched, worst error.
std::string table(const Summary& s, const Options& o);

}  // namespace kime::fuzz

#endif  // KIME_TOOLS_GRAPHFUZZ_DIFFERENTIAL_H
