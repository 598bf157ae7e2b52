// What a bucket costs, measured from the compiler's own plan for it (kime-buckets' cost models):
// its arena (kime-plan-memory's bytes) and the matmul FLOPs its plan runs for a batch that fills
// it (S sequences of T/S tokens and M markers: what a CUDA graph captured for the bucket pads
// every batch to).
#ifndef KIME_PIPELINE_BUCKETCOST_H
#define KIME_PIPELINE_BUCKETCOST_H

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "kime/batch.h"

namespace mlir {
class MLIRContext;
}

namespace kime {

struct BucketMeasure {
  int64_t arena = 0;  // bytes
  double flops = 0;   // at the bucket's bounds
};

class BucketMeasurer {
 public:
  // `ropeRows`: the longest sequence any bucket will hold (sizes RoPE tables, not the arena).
  BucketMeasurer(const Graph& g, const Checkpoint& ck, int64_t ropeRows);
  ~BucketMeasurer();
  // Lowers the graph for `b` (once per bucket) and reads the measures off its plan.
  const BucketMeasure& measure(const Bucket& b);
  size_t lowered() const { return cache_.size(); }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, BucketMeasure> cache_;
};

// What each bucket of a bucket list adds to an artifact's CPU code, compiled for `target`: the
// kernels no earlier bucket of the list has (identical kernels are compiled once), their code
// bytes as a shared object of their own (with its copy of the Halide runtime) and the seconds
// that took.
struct BucketCode {
  size_t newKernels = 0;
  size_t bytes = 0;
  double seconds = 0;
};
std::vector<BucketCode> measureCode(const Graph& g, const Checkpoint& ck, const std::vector<Bucket>& buckets,
                                    const std::string& target, int jobs);

}  // namespace kime

#endif  // KIME_PIPELINE_BUCKETCOST_H
