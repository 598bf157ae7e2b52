// A model lowered for all its buckets: what the manifest, --emit and codegen are made from.
#ifndef KIME_PIPELINE_LOWEREDMODEL_H
#define KIME_PIPELINE_LOWEREDMODEL_H

#include <cstdint>
#include <string>
#include <vector>

#include "Lowering.h"
#include "kime/batch.h"

namespace kime {

// A stage of the bucket file: its buckets as indices into LoweredModel::buckets.
struct StageBuckets {
  std::string name;
  std::vector<uint32_t> buckets;
};

// The distinct buckets of all stages (in order of first appearance) with their plans, the
// distinct kernels, and each stage's buckets.
struct LoweredModel {
  std::vector<Bucket> buckets;
  std::vector<BucketPlan> plans;
  std::vector<std::string> mlir;  // per bucket, with --emit=mlir
  std::vector<StageBuckets> stages;
  KernelRegistry kernels;
  std::vector<std::string> names;  // per kernel, its symbol
};

}  // namespace kime

#endif  // KIME_PIPELINE_LOWEREDMODEL_H
