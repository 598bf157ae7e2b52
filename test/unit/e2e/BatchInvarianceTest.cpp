// A sequence's outputs are the same bytes in any batch (docs/batch.md): the example model's
// stages, each with 1 and 2 threads, run random sequences alone and at random places among
// random neighbours in each of their buckets (kime/tooling/Invariance.h).
#include <cstring>

#include <gtest/gtest.h>

#include "CompiledModel.h"
#include "kime/tooling/Invariance.h"

namespace kime {
namespace {

TEST(BatchInvariance, ASequenceHasTheSameBytesInEveryBatchBucketStageAndThreadCount) {
  const auto& cm = test::smallModel();
  std::vector<std::unique_ptr<Executor>> execs;
  std::vector<tooling::InvarianceTarget> targets;
  for (const std::string& stage : {std::string("serve"), std::string("bulk")})
    for (size_t threads : {1, 2}) {
      auto made = Executor::create(cm.model, stage, {threads});
      ASSERT_TRUE(made) << made.error().text();
      execs.push_back(std::move(*made));
      targets.push_back({execs.back().get(), cm.model->buckets(stage),
                         stage + ", " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : "")});
    }
  tooling::InvarianceOptions o;
  o.outputs = cm.model->outputs();
  o.vocab = cm.model->vocab(), o.types = cm.model->types(), o.trials = 5, o.seed = 43;
  const tooling::InvarianceReport r = tooling::checkBatchInvariance(targets, o);
  EXPECT_EQ(r.failure, "");
  EXPECT_EQ(r.differing, 0u);
  // Every bucket's runs were compared: 3 buckets x 2 thread counts x 5 sequences among
  // neighbours, and most of them also alone in another stage or thread count.
  EXPECT_EQ(r.sequences, 30u);
  EXPECT_GE(r.runs, 40u);
}

// The bytes compared are the sequence's own: packSequences puts it where its outputs are read.
TEST(BatchInvariance, PackedSequencesKeepTheirOwnOutputs) {
  const auto& cm = test::smallModel();
  auto serve = Executor::create(cm.model, "serve", {1});
  ASSERT_TRUE(serve) << serve.error().text();
  tooling::Sequence s;
  s.ids = {1, 2, 3, 4, 5}, s.markers = {0, 4}, s.qtype = 1;
  tooling::Sequence t = s;
  t.ids[0] = 7;
  Outputs a, b;
  ASSERT_FALSE((*serve)->run(tooling::packSequences({s}).batch(), a));
  ASSERT_FALSE((*serve)->run(tooling::packSequences({t, s}).batch(), b));
  // Sequence 1 of [t, s] is s: its bytes are s's alone; t's (sequence 0) are not.
  EXPECT_EQ(std::memcmp(&a[1][0], &b[1][2], sizeof(float) * 2), 0);  // act, the seed's second output
  EXPECT_NE(std::memcmp(&a[1][0], &b[1][0], sizeof(float) * 2), 0);
}

}  // namespace
}  // namespace kime
