// The CUDA backend on the compiled example model (its artifact carries sm_90 PTX).
//
// Without a GPU (CI): the backend's errors are checked (no driver at all; CUDA's stub library,
// which is not a driver), and the tests that need a GPU skip, saying why. On a GPU machine
// (scripts/gpu-check.sh) they compare every bucket with the reference evaluator and count
// allocations of warm runs.
#include <cstdlib>

#include <gtest/gtest.h>

#include "CompiledModel.h"
#include "codegen/cuda/CudaKernels.h"
#include "common/AllocCounter.h"
#include "kime/tooling/BatchGen.h"

namespace kime {

// How a tolerance reads in test listings (found by gtest through its namespace).
void PrintTo(const Tolerance& t, std::ostream* os) { *os << describe(t); }

namespace {

// Sets KIME_LIBCUDA for the life of the object.
struct LibcudaOverride {
  explicit LibcudaOverride(const char* path) { setenv("KIME_LIBCUDA", path, 1); }
  ~LibcudaOverride() { unsetenv("KIME_LIBCUDA"); }
};

Expected<std::unique_ptr<Executor>> onGpu(const std::string& stage, const std::string& math = "tf32") {
  return Executor::create(test::smallModel().model, stage, {2, "cuda", math});
}

// Whether `e` says this machine has no GPU to run on: no CUDA driver (or only CUDA's stub
// library), or a driver that sees no device. Any other error (a PTX that fails to JIT, a failed
// allocation or copy) fails the test instead.
bool noGpuHere(const Error& e) {
  if (e.kind != ErrorKind::Device) return false;
  for (const char* why : {"no CUDA driver", "CUDA_ERROR_STUB_LIBRARY", "CUDA_ERROR_NO_DEVICE", "sees no device"})
    if (e.text().find(why) != std::string::npos) return true;
  return false;
}

// In a test body: `exec` on the GPU, or the test skips with the driver's reason (or because
// this build makes no PTX for the model to carry).
#define KIME_GPU_EXECUTOR_OR_SKIP(exec, ...)                                                    \
  if (!cuda::canMakePtx()) GTEST_SKIP() << "this build has no NVRTC: the model carries no PTX"; \
  auto exec##Made = onGpu(__VA_ARGS__);                                                         \
  if (!exec##Made && noGpuHere(exec##Made.error()))                                             \
    GTEST_SKIP() << "needs a GPU with a CUDA driver: " << exec##Made.error().text();            \
  ASSERT_TRUE(exec##Made) << exec##Made.error().text();                                         \
  std::unique_ptr<Executor> exec = std::move(*exec##Made)

TEST(CudaBackend, WithoutADriverItIsAClearDeviceError) {
  test::smallModel();  // compiled before the variable is set
  LibcudaOverride none("/nonexistent/libcuda.so.1");
  auto e = onGpu("serve");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, ErrorKind::Device);
  EXPECT_NE(e.error().text().find("no CUDA driver: /nonexistent/libcuda.so.1"), std::string::npos) << e.error().text();
}

TEST(CudaBackend, CudasStubLibraryIsNotADriver) {
#ifndef KIME_CUDA_STUB_LIBRARY
  GTEST_SKIP() << "this build has no CUDA Toolkit, whose stub libcuda the test loads";
#else
  test::smallModel();
  LibcudaOverride stub(KIME_CUDA_STUB_LIBRARY);
  auto e = onGpu("serve");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, ErrorKind::Device);
  EXPECT_NE(e.error().text().find("cuInit failed: CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << e.error().text();
#endif
}

TEST(CudaBackend, AnUnknownDeviceIsUnsupported) {
  auto e = Executor::create(test::smallModel().model, "serve", {2, "tpu"});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, ErrorKind::Unsupported);
  EXPECT_EQ(e.error().text(), "unsupported: unknown device \"tpu\" (kime runs on \"cpu\" or \"cuda\")");
}

TEST(CudaBackend, CapsSayCudaWithGraphs) {
  KIME_GPU_EXECUTOR_OR_SKIP(exec, std::string("serve"));
  Caps c = exec->caps();
  EXPECT_EQ(c.name, "cuda");
  EXPECT_TRUE(c.graphs);
  EXPECT_FALSE(c.unifiedMemory);
  EXPECT_NE(exec->deviceDescription().find("sm_"), std::string::npos) << exec->deviceDescription();
}

// Tensor cores (TF32 inputs) within kTf32Tolerance of the f64 reference, the exact f32 kernels
// within kF32Tolerance.
class CudaMathTest : public ::testing::TestWithParam<std::pair<const char*, Tolerance>> {};

TEST_P(CudaMathTest, EveryBucketMatchesTheReferenceOnTheGpu) {
  const auto [math, tolerance] = GetParam();
  const auto& cm = test::smallModel();
  for (const std::string& stage : cm.model->stages()) {
    KIME_GPU_EXECUTOR_OR_SKIP(exec, stage, math);
    std::vector<Bucket> list = cm.model->buckets(stage);
    for (size_t i = 0; i < list.size(); ++i)
      for (const auto& nb : tooling::bucketBatches(list[i], cm.model->vocab(), cm.model->types(), 0, 11 + i)) {
        SCOPED_TRACE(stage + " bucket " + describe(list[i]) + ": " + nb.name);
        Outputs got;
        ASSERT_FALSE(exec->run(nb.batch.view(), got));
        RefOutputs want;
        ASSERT_FALSE(evaluateReference(cm.graph, cm.weights, nb.batch.view(), want));
        EXPECT_TRUE(forEachOutputValue(got, want, [&](double x, double y, size_t o, size_t k) {
          EXPECT_TRUE(withinTolerance(x, y, tolerance))
              << describeOutputValue(cm.model->outputs()[o], k) << ": " << x << " vs " << y;
        })) << "the outputs' sizes are not the reference's";
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Math, CudaMathTest,
                         ::testing::Values(std::pair<const char*, Tolerance>{"tf32", kTf32Tolerance},
                                           std::pair<const char*, Tolerance>{"f32", kF32Tolerance}),
                         [](const auto& info) { return std::string(info.param.first); });

TEST(CudaBackend, AnUnknownMathIsUnsupported) {
  auto e = Executor::create(test::smallModel().model, "serve", {2, "cuda", "fp8"});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, ErrorKind::Unsupported);
  EXPECT_NE(e.error().text().find("unknown CUDA math \"fp8\""), std::string::npos) << e.error().text();
}

TEST(CudaBackend, WarmGpuRunsAllocateNothing) {
  const auto& cm = test::smallModel();
  KIME_GPU_EXECUTOR_OR_SKIP(exec, std::string("serve"));
  std::vector<Bucket> list = cm.model->buckets("serve");
  std::vector<tooling::OwnedBatch> batches;
  for (size_t i = 0; i < list.size(); ++i) {
    ASSERT_FALSE(exec->prepare(i));
    batches.push_back(tooling::uniformBatch(list[i].seqs, list[i].tokens / list[i].seqs, 1, cm.model->vocab(),
                                            cm.model->types(), 5 + i));
  }
  Outputs out;
  for (const auto& b : batches) ASSERT_FALSE(exec->run(b.view(), out));  // outputs grow once
  const uint64_t before = tools::allocCount();
  for (int r = 0; r < 3; ++r)
    for (const auto& b : batches) ASSERT_FALSE(exec->run(b.view(), out));
  EXPECT_EQ(tools::allocCount() - before, 0u);
}

}  // namespace
}  // namespace kime
