// What runs an executor's plans on one device. The executor checks each batch, picks its bucket
// and counts; a backend prepares a bucket's plan (everything it will need allocated there) and
// replays it, allocating nothing once prepared. One per executor: the CPU's (the artifact's
// Halide kernels on the executor's threads) or CUDA's (the PTX through the driver).
#ifndef KIME_RUNTIME_BACKEND_H
#define KIME_RUNTIME_BACKEND_H

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model_impl.h"

namespace kime {

class Backend {
 public:
  virtual ~Backend() = default;
  // Makes bucket `index` of the stage ready to run; nothing to do when it is already.
  virtual std::optional<Error> prepare(size_t index) = 0;
  virtual bool prepared(size_t index) const = 0;
  // Runs a checked batch that bucket `index` holds; the bucket must be prepared.
  virtual std::optional<Error> run(size_t index, const Batch& b, Outputs& out) = 0;
  // "cpu x86-64-avx512, 2 threads", "cuda NVIDIA H100 (sm_90 PTX, tf32 tensor cores)".
  virtual std::string description() const = 0;
  virtual Caps caps() const = 0;
  // Per-kernel timing where the backend measures it (the CPU's): the seconds of bucket `index`'s
  // steps since profiling was last turned on, by kernel class or by kernel.
  virtual void setProfiling(bool on) {}
  virtual std::vector<std::pair<std::string, double>> profile(size_t index, bool perKernel) const { return {}; }
};

// The CPU backend of `stage`, on `threads` threads (the kernels' spin pool is reserved here).
std::unique_ptr<Backend> cpuBackend(ModelImpl& m, const StageInfo& stage, size_t threads);

// The CUDA backend of `stage` in one arithmetic: the model's device state made (or shared) here,
// so that a missing driver or device is this call's error.
Expected<std::unique_ptr<Backend>> cudaBackend(ModelImpl& m, const StageInfo& stage, CudaMath math);

}  // namespace kime

#endif  // KIME_RUNTIME_BACKEND_H
