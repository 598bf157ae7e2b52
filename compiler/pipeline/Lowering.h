// One bucket of a Graph, lowered: the pass pipeline, then the kernel calls read off the IR.
#ifndef KIME_PIPELINE_LOWERING_H
#define KIME_PIPELINE_LOWERING_H

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "WeightPacker.h"
#include "graph/Graph.h"
#include "kernels/KernelSpec.h"
#include "kime/Transforms/Passes.h"
#include "kime/batch.h"

namespace mlir {
class MLIRContext;
}

namespace kime {

// The distinct kernels of an artifact; identical ones (equal specs) are kept once.
struct KernelRegistry {
  std::vector<KernelSpec> specs;
  // Whether a few-row linear (KernelSpec::fewRows) compiles to other code than the general one:
  // codegen's question (cpu::fewRowsChangesSchedule), put by whoever makes the registry. Unset:
  // never, and a few-row bucket shares the general kernel.
  std::function<bool(const KernelSpec&)> fewRowsDiffers;

  int64_t intern(KernelSpec s);
  std::string name(int64_t i) const;  // the symbol: "k3_linear"
};

struct BucketPlan {
  Bucket bucket;
  int64_t arena = 0;  // bytes
  std::vector<PlanStep> steps;
  std::vector<PlanArg> outputs;  // where the Graph's outputs are in the arena, in its order
};

// Runs kime-specialize-bucket, kime-prune-rows (unless off), kime-fuse, kime-plan-memory
// and kime-verify-backend-contract on the graph for `bucket` and reads the plan off the result.
// `ropeRows` sizes RoPE tables (the longest sequence of any bucket). With `mlirOut`, the planned
// IR is printed there.
// Throws CompileError with the pass's diagnostics.
BucketPlan lowerBucket(mlir::MLIRContext& ctx, const Graph& g, const Bucket& bucket, int64_t ropeRows,
                       WeightPacker& weights, KernelRegistry& kernels, const mlir::kime::PipelineOptions& options,
                       std::string* mlirOut = nullptr);

}  // namespace kime

#endif  // KIME_PIPELINE_LOWERING_H
