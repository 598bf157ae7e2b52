// kime's passes (declared in Passes.td) and the pipeline that runs them for one bucket.
#ifndef KIME_TRANSFORMS_PASSES_H
#define KIME_TRANSFORMS_PASSES_H

#include <string>

#include "kime/IR/KimeDialect.h"
#include "kime/core/KernelChoices.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kime {

#define GEN_PASS_DECL
#include "kime/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kime/Transforms/Passes.h.inc"

// The choices of a bucket's pipeline.
struct PipelineOptions {
  bool pruneRows = true;                     // kime-prune-rows
  Arithmetic linearArith = Arithmetic::f32;  // kime-fuse's linear-arith
  bool fusion = true;                        // kime-fuse's fused patterns (off: generic kernels, to measure fusion)
};

// specialize-bucket, prune-rows (unless told not to), fuse (linears in bf16 where asked and
// their widths allow), plan-memory, verify-backend-contract, in that order.
void buildBucketPipeline(OpPassManager& pm, int64_t tokens, int64_t seqs, int64_t markers,
                         const PipelineOptions& options = {});

// The attribute names the passes leave on the function.
inline constexpr const char* kBucketAttr = "kime.bucket";
inline constexpr const char* kArenaAttr = "kime.arena";

}  // namespace mlir::kime

#endif  // KIME_TRANSFORMS_PASSES_H
