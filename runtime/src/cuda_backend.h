// The CUDA backend: the artifact's PTX as a module, the weights on the device, and per bucket a
// device arena, pinned staging and one CUDA graph captured at the bucket's size.
//
// A run fills the pinned staging (the actual counts T, S, M first, then the batch's arrays and
// the per-token indices), launches the graph (copy in, every kernel of the plan, copy out) and
// waits for it. Kernels read the counts from the device and skip the bucket's padding, so one
// graph serves every batch the bucket holds. Nothing is allocated once a bucket is prepared.
#ifndef KIME_RUNTIME_CUDA_BACKEND_H
#define KIME_RUNTIME_CUDA_BACKEND_H

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "model_impl.h"

namespace kime {

// A model's device state, shared by the executors of its stages.
struct CudaModel {
  const cu::Driver* d = nullptr;
  cu::Device device = 0;
  cu::Context ctx = nullptr;
  cu::Module module = nullptr;
  std::vector<cu::Function> functions;  // by kernel index
  cu::DevicePtr weights = 0;
  std::vector<uint64_t> weightOffsets;  // by weight index, bytes into `weights`
  std::string deviceName, arch;         // e.g. "NVIDIA H200", "sm_90" (the PTX loaded)
  CudaMath math = kTf32;

  ~CudaModel();
};

// The model's CUDA state for one arithmetic, made on first use: the driver, the best PTX of that
// arithmetic for device 0, the weights uploaded. Device errors carry the driver's message ("no
// CUDA driver: ..." where there is none); an artifact without PTX the device can run is
// Unsupported.
Expected<std::shared_ptr<CudaModel>> cudaModel(ModelImpl& m, CudaMath math);

struct CudaPlan;
struct CudaPlanDeleter {
  void operator()(CudaPlan* p) const;
};
using CudaPlanPtr = std::unique_ptr<CudaPlan, CudaPlanDeleter>;

// Allocates and captures the plan of one bucket.
std::optional<Error> prepareCudaPlan(CudaModel& cm, const BucketInfo& bucket, CudaPlanPtr& out);
// Runs a checked batch the plan's bucket holds.
std::optional<Error> runCudaPlan(CudaModel& cm, CudaPlan& plan, const Batch& batch, Outputs& out);

}  // namespace kime

#endif  // KIME_RUNTIME_CUDA_BACKEND_H
