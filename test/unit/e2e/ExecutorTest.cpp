// The executor's contract, on the compiled example model: bucket choice, NoBucket, prepare and
// warm, reused Outputs, bit-identical runs, and the reference on edge-case batches.
#include <cstring>

#include <gtest/gtest.h>

#include "CompiledModel.h"
#include "kime/tooling/BatchFile.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

std::unique_ptr<Executor> serve(size_t threads = 2) {
  auto e = Executor::create(test::smallModel().model, "serve", {threads});
  if (!e) throw std::runtime_error(e.error().text());
  return std::move(*e);
}

void expectMatchesReference(const tooling::OwnedBatch& b, const Outputs& got) {
  const auto& cm = test::smallModel();
  RefOutputs want;
  ASSERT_FALSE(evaluateReference(cm.graph, cm.weights, b.view(), want));
  const std::vector<OutputDesc>& outputs = cm.model->outputs();
  EXPECT_TRUE(forEachOutputValue(got, want, [&](double x, double y, size_t o, size_t k) {
    EXPECT_TRUE(withinTolerance(x, y, kF32Tolerance)) << describeOutputValue(outputs[o], k) << ": " << x << " vs " << y;
  })) << "the outputs' sizes are not the reference's";
}

TEST(Executor, EveryServeBucketMatchesTheReferenceOnEdgeCases) {
  auto exec = serve();
  const auto& cm = test::smallModel();
  std::vector<Bucket> list = cm.model->buckets("serve");
  for (size_t i = 0; i < list.size(); ++i)
    for (const auto& nb : tooling::bucketBatches(list[i], cm.model->vocab(), cm.model->types(), 0, 3 + i)) {
      SCOPED_TRACE("bucket " + std::to_string(i) + ": " + nb.name);
      Outputs out;
      ASSERT_FALSE(exec->runInBucket(i, nb.batch.view(), out));  // in this bucket, not a smaller one
      expectMatchesReference(nb.batch, out);
    }
}

TEST(Executor, PicksTheSmallestBucketThatHoldsTheBatch) {
  auto exec = serve();
  Outputs out;
  Bucket used;
  auto small = tooling::uniformBatch(8, 16, 4, 4096, 4, 1);  // exactly the first bucket
  ASSERT_FALSE(exec->run(small.view(), out, &used));
  EXPECT_EQ(used, (Bucket{128, 8, 32}));
  auto more = tooling::uniformBatch(9, 4, 1, 4096, 4, 1);  // one sequence too many for it
  ASSERT_FALSE(exec->run(more.view(), out, &used));
  EXPECT_EQ(used, (Bucket{512, 32, 128}));
}

TEST(Executor, RunInBucketUsesTheBucketAskedFor) {
  auto exec = serve();
  auto b = tooling::uniformBatch(4, 8, 2, 4096, 4, 9);  // the first bucket holds it
  Outputs inFirst, inSecond;
  ASSERT_FALSE(exec->run(b.view(), inFirst));
  EXPECT_EQ(exec->warm(), (std::vector<Bucket>{{128, 8, 32}}));
  ASSERT_FALSE(exec->runInBucket(1, b.view(), inSecond));
  EXPECT_EQ(exec->warm().size(), 2u);  // the second bucket's plan ran
  ASSERT_EQ(inFirst[0].size(), inSecond[0].size());
  for (size_t k = 0; k < inFirst[0].size(); ++k) EXPECT_NEAR(inFirst[0][k], inSecond[0][k], 1e-5);
  // A batch the bucket does not hold is NoBucket, naming that bucket.
  auto big = tooling::uniformBatch(9, 4, 1, 4096, 4, 1);
  auto err = exec->runInBucket(0, big.view(), inFirst);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->kind, ErrorKind::NoBucket);
  EXPECT_FALSE(exec->runInBucket(5, b.view(), inFirst) == std::nullopt);
}

TEST(Executor, ABatchPastTheLargestBucketIsNoBucket) {
  auto exec = serve();
  Outputs out;
  auto big = tooling::uniformBatch(2, 300, 1, 4096, 4, 1);
  auto err = exec->run(big.view(), out);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->kind, ErrorKind::NoBucket);
  EXPECT_EQ(err->text(),
            "no serve bucket holds 600 tokens, 2 sequences and 2 markers (its largest bucket holds 512 tokens, 32 "
            "sequences and 128 markers)");
}

TEST(Executor, ABadBatchGetsTheSeedsMessage) {
  auto exec = serve();
  Outputs out;
  auto b = tooling::uniformBatch(2, 4, 1, 4096, 4, 1);
  b.ids[1] = 5000;
  auto err = exec->run(b.view(), out);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->text(), "bad batch: token id 5000 is past the vocabulary of 4096");
}

TEST(Executor, PrepareIsIdempotentAndWarmListsPreparedBuckets) {
  auto exec = serve();
  EXPECT_TRUE(exec->warm().empty());
  ASSERT_FALSE(exec->prepare(1));
  ASSERT_FALSE(exec->prepare(1));
  EXPECT_EQ(exec->warm(), (std::vector<Bucket>{{512, 32, 128}}));
  Outputs out;
  auto b = tooling::uniformBatch(1, 3, 1, 4096, 4, 2);
  ASSERT_FALSE(exec->run(b.view(), out));  // prepares bucket 0 lazily
  EXPECT_EQ(exec->warm().size(), 2u);
  auto err = exec->prepare(2);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->text(), "unsupported: stage serve has 2 buckets, not 3");
}

TEST(Executor, OutputsAreReusedAcrossBatches) {
  auto exec = serve();
  Outputs out;
  auto big = tooling::uniformBatch(8, 16, 4, 4096, 4, 1), small = tooling::uniformBatch(2, 5, 1, 4096, 4, 2);
  ASSERT_FALSE(exec->run(big.view(), out));
  const float* logits = out[0].data();
  ASSERT_FALSE(exec->run(small.view(), out));
  EXPECT_EQ(out[0].size(), 2u);
  EXPECT_EQ((out[1].size() / 2), 2u);
  EXPECT_EQ(out[0].data(), logits);  // shrinking keeps the storage
}

TEST(Executor, RunsAreBitIdenticalRepeatedAndAcrossThreadCounts) {
  auto one = serve(1), two = serve(2);
  auto b = tooling::uniformBatch(6, 13, 3, 4096, 4, 9);
  Outputs a, c, d;
  ASSERT_FALSE(two->run(b.view(), a));
  ASSERT_FALSE(two->run(b.view(), c));
  ASSERT_FALSE(one->run(b.view(), d));
  ASSERT_EQ(a[0].size(), d[0].size());
  EXPECT_EQ(0, std::memcmp(a[0].data(), c[0].data(), a[0].size() * 4));
  EXPECT_EQ(0, std::memcmp(a[0].data(), d[0].data(), a[0].size() * 4));
  EXPECT_EQ(0, std::memcmp(a[1].data(), d[1].data(), (a[1].size() / 2) * 8));
}

// Found by the batch fuzzer under UBSan: the empty batch's outputs were copied with memcpy from
// an empty vector's data() (null). The fuzzer's input, as it found it.
TEST(Executor, TheEmptyBatchTheFuzzerFoundRunsToEmptyOutputs) {
  const tooling::OwnedBatch b =
      tooling::parseBatchJson(R"({"ids": [], "cu": [0], "markers": [], "mcu": [0], "qtype": []})", "crash-d8fe9017");
  auto e = serve();
  Outputs out;
  out.values = {{1.0f}, {}};  // a run replaces what was there
  ASSERT_FALSE(e->run(b.view(), out));
  EXPECT_TRUE(out[0].empty());
  EXPECT_TRUE(out[1].empty());
}

TEST(Executor, CapsReportTheCpuAndItsThreads) {
  Caps c = serve(2)->caps();
  EXPECT_EQ(c.name, "cpu");
  EXPECT_EQ(c.threads, 2u);
  EXPECT_FALSE(c.graphs);
}

TEST(Executor, AnUnknownStageIsRefusedNamingTheStages) {
  auto e = Executor::create(test::smallModel().model, "batch");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().text(), "unsupported: the model has no stage \"batch\" (it has bulk, serve)");
}

TEST(BatchBuf, BuildsTheSeedsBatchAndReusesItsStorage) {
  BatchBuf buf;
  EXPECT_EQ(buf.batch().seqs(), 0u);
  EXPECT_FALSE(checkBatch(buf.batch(), 10, 2));
  uint32_t ids[] = {1, 2, 3}, m[] = {2};
  buf.push(ids, 3, m, 1, 1);
  buf.push(ids, 0, nullptr, 0, 0);
  Batch b = buf.batch();
  EXPECT_EQ(b.seqs(), 2u);
  EXPECT_EQ(std::vector<uint32_t>(b.cu.begin(), b.cu.end()), (std::vector<uint32_t>{0, 3, 3}));
  EXPECT_FALSE(checkBatch(b, 10, 2));
  buf.clear();
  EXPECT_EQ(buf.batch().seqs(), 0u);
}

}  // namespace
}  // namespace kime
