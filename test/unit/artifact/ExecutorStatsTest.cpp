// An executor's shape statistics through the C API: the bucket each batch ran in, its fill, the
// refused batches, and the sizes no bucket held.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/kime.h"

namespace kime {
namespace {

struct Handles {
  kime_model* model = nullptr;
  kime_executor* exec = nullptr;
  ~Handles() {
    kime_executor_release(exec);
    kime_model_release(model);
  }
};

// One sequence of `n` tokens (ids 1) with `m` markers.
kime_status runOne(kime_executor* e, uint32_t n, uint32_t m, uint32_t firstId = 1) {
  std::vector<uint32_t> ids(n, 1), markers(m, 0), cu = {0, n}, mcu = {0, m};
  ids[0] = firstId;
  uint8_t qtype[] = {0};
  kime_batch b = {ids.data(), ids.size(), cu.data(), 2, markers.data(), m, mcu.data(), 2, qtype, 1};
  std::vector<float> logits(m + 1), act(2);
  kime_error err;
  return kime_executor_run(e, &b, logits.data(), logits.size(), act.data(), 2, nullptr, &err);
}

TEST(ExecutorStats, CountBucketsFillRefusalsAndMisses) {
  Handles h;
  kime_error err;
  ASSERT_EQ(kime_model_open(test::testArtifact().c_str(), &h.model, &err), KIME_OK) << err.message;
  kime_executor_options o;
  kime_executor_options_init(&o);
  o.stage = "serve";  // buckets 128/8/32 and 512/32/128
  o.threads = 1;
  ASSERT_EQ(kime_executor_create(h.model, &o, &h.exec, &err), KIME_OK) << err.message;
  ASSERT_EQ(runOne(h.exec, 64, 4), KIME_OK);    // bucket 0: tokens 50%, seqs 1/8, markers 4/32
  ASSERT_EQ(runOne(h.exec, 128, 32), KIME_OK);  // bucket 0, full in tokens and markers
  ASSERT_EQ(runOne(h.exec, 200, 1), KIME_OK);   // bucket 1
  EXPECT_EQ(runOne(h.exec, 600, 0), KIME_NO_BUCKET);
  EXPECT_EQ(runOne(h.exec, 10, 1, 999999), KIME_BAD_BATCH);

  kime_stats t;
  ASSERT_EQ(kime_executor_stats(h.exec, &t, &err), KIME_OK);
  EXPECT_EQ(t.batches, 3u);
  EXPECT_EQ(t.no_bucket, 1u);
  EXPECT_EQ(t.bad_batches, 1u);
  ASSERT_EQ(t.no_bucket_kept, 1u);
  EXPECT_EQ(t.no_bucket_sizes[0].tokens, 600u);
  EXPECT_EQ(t.no_bucket_sizes[0].seqs, 1u);

  kime_bucket_stats b;
  ASSERT_EQ(kime_executor_bucket_stats(h.exec, 0, &b, &err), KIME_OK);
  EXPECT_EQ(b.bucket.tokens, 128u);
  EXPECT_EQ(b.batches, 2u);
  EXPECT_EQ(b.fill[KIME_FILL_TOKENS][4], 1u);
  EXPECT_EQ(b.fill[KIME_FILL_TOKENS][9], 1u);
  EXPECT_EQ(b.fill[KIME_FILL_SEQS][1], 2u);  // 1 of 8: (0.1, 0.2]
  EXPECT_EQ(b.total[KIME_FILL_TOKENS], 192u);
  EXPECT_EQ(b.total[KIME_FILL_MARKERS], 36u);
  ASSERT_EQ(kime_executor_bucket_stats(h.exec, 1, &b, &err), KIME_OK);
  EXPECT_EQ(b.batches, 1u);
  EXPECT_EQ(b.fill[KIME_FILL_TOKENS][3], 1u);  // 200 of 512: (0.3, 0.4]
  EXPECT_EQ(kime_executor_bucket_stats(h.exec, 2, &b, &err), KIME_INVALID_ARGUMENT);
  EXPECT_EQ(kime_executor_stats(nullptr, &t, &err), KIME_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kime
