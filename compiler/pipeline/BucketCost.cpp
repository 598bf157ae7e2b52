#include "pipeline/BucketCost.h"

#include <algorithm>
#include <chrono>

#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/Schedule.h"
#include "mlir/IR/MLIRContext.h"
#include "pipeline/Lowering.h"

namespace kime {

struct BucketMeasurer::State {
  State(const Graph& g, const Checkpoint& ck, int64_t rows) : graph(g), ropeRows(rows), weights(ck) {}
  const Graph& graph;
  int64_t ropeRows;
  mlir::MLIRContext ctx;
  WeightPacker weights;
  KernelRegistry kernels{{}, cpu::fewRowsChangesSchedule};
};

BucketMeasurer::BucketMeasurer(const Graph& g, const Checkpoint& ck, int64_t ropeRows)
    : state_(std::make_unique<State>(g, ck, ropeRows)) {}

BucketMeasurer::~BucketMeasurer() = default;

const BucketMeasure& BucketMeasurer::measure(const Bucket& b) {
  const auto key = std::make_tuple(b.tokens, b.seqs, b.markers);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  State& s = *state_;
  const BucketPlan plan = lowerBucket(s.ctx, s.graph, b, s.ropeRows, s.weights, s.kernels, {});
  // A batch that fills the bucket: S sequences of T/S tokens; query-key pairs per sequence
  // len^2, and for the output rows (first tokens and markers) len * (1 + markers).
  const double len = double(b.tokens) / double(b.seqs), pairs = len * len * double(b.seqs),
               outputPairs = len * double(b.seqs + b.markers);
  BucketMeasure m{plan.arena, 0};
  for (const PlanStep& step : plan.steps) {
    const PlanArg& out = step.args.back();
    double rows = double(out.rowCount);
    if (s.kernels.specs[size_t(step.kernel)].kind() == KIME_CLASS_ATTENTION)
      rows = out.rows == KIME_ROWS_R ? outputPairs : pairs;
    m.flops += step.flops * rows;
  }
  return cache_.emplace(key, m).first->second;
}

std::vector<BucketCode> measureCode(const Graph& g, const Checkpoint& ck, const std::vector<Bucket>& buckets,
                                    const std::string& target, int jobs) {
  int64_t ropeRows = 1;
  for (const Bucket& b : buckets) ropeRows = std::max<int64_t>(ropeRows, b.tokens);
  mlir::MLIRContext ctx;
  WeightPacker weights(ck);
  KernelRegistry kernels{{}, cpu::fewRowsChangesSchedule};
  std::vector<BucketCode> out;
  for (const Bucket& b : buckets) {
    const size_t before = kernels.specs.size();
    lowerBucket(ctx, g, b, ropeRows, weights, kernels, {});
    BucketCode c;
    c.newKernels = kernels.specs.size() - before;
    if (c.newKernels) {
      std::vector<KernelSpec> specs(kernels.specs.begin() + int64_t(before), kernels.specs.end());
      std::vector<std::string> names;
      for (size_t i = before; i < kernels.specs.size(); ++i) names.push_back(kernels.name(int64_t(i)));
      const auto t0 = std::chrono::steady_clock::now();
      c.bytes = cpu::compileSharedObject(specs, names, target, jobs).size();
      c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace kime
