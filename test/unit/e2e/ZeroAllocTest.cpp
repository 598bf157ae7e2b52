// Once a bucket is prepared and Outputs has grown, a run allocates nothing: malloc and friends
// (and so operator new) are interposed by AllocCounter, the kernels' shared object included.
#include <gtest/gtest.h>

#include "CompiledModel.h"
#include "common/AllocCounter.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

TEST(ZeroAlloc, WarmRunsOfEveryBucketAllocateNothing) {
  ASSERT_TRUE(tools::allocCounterAvailable());
  const auto& cm = test::smallModel();
  size_t buckets = 0;
  for (const std::string& stage : cm.model->stages()) {
    auto exec = Executor::create(cm.model, stage, {2});
    ASSERT_TRUE(exec) << exec.error().text();
    std::vector<Bucket> list = cm.model->buckets(stage);
    for (size_t i = 0; i < list.size(); ++i, ++buckets) {
      SCOPED_TRACE(stage + " bucket " + std::to_string(i));
      auto batches = tooling::bucketBatches(list[i], cm.model->vocab(), cm.model->types(), 0, 11);
      Outputs out;
      ASSERT_FALSE((*exec)->prepare(i));
      for (const auto& b : batches)  // grows Outputs to the largest batch, warms the pool
        ASSERT_FALSE((*exec)->run(b.batch.view(), out));
      uint64_t before = tools::allocCount();
      for (int r = 0; r < 3; ++r)
        for (const auto& b : batches) ASSERT_FALSE((*exec)->run(b.batch.view(), out));
      EXPECT_EQ(tools::allocCount() - before, 0u);
    }
  }
  EXPECT_EQ(buckets, 3u);
}

// The executor's shape statistics count every warm run, and counting and reading them allocate
// nothing.
TEST(ZeroAlloc, ShapeStatisticsCountWithoutAllocating) {
  const auto& cm = test::smallModel();
  auto exec = Executor::create(cm.model, "serve", {2});
  ASSERT_TRUE(exec) << exec.error().text();
  const auto batches =
      tooling::bucketBatches(cm.model->buckets("serve")[1], cm.model->vocab(), cm.model->types(), 0, 5);
  Outputs out;
  for (const auto& b : batches) ASSERT_FALSE((*exec)->run(b.batch.view(), out));
  const uint64_t ranBefore = (*exec)->stats().batches;
  uint64_t before = tools::allocCount(), inBuckets = 0;
  for (int r = 0; r < 3; ++r)
    for (const auto& b : batches) ASSERT_FALSE((*exec)->run(b.batch.view(), out));
  const kime_stats t = (*exec)->stats();
  for (size_t i = 0; auto b = (*exec)->bucketStats(i); ++i) inBuckets += b->batches;
  EXPECT_EQ(tools::allocCount() - before, 0u);
  EXPECT_EQ(t.batches - ranBefore, 3 * batches.size());
  EXPECT_EQ(inBuckets, t.batches);
}

// The counter itself works: a run that must prepare a bucket does allocate.
TEST(ZeroAlloc, TheCounterSeesAPreparation) {
  const auto& cm = test::smallModel();
  auto exec = Executor::create(cm.model, "serve", {1});
  ASSERT_TRUE(exec);
  uint64_t before = tools::allocCount();
  ASSERT_FALSE((*exec)->prepare(0));
  EXPECT_GT(tools::allocCount() - before, 0u);
}

}  // namespace
}  // namespace kime
