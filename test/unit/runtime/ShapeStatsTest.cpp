// The executor's shape statistics as counters: fill bins at their edges, per-bucket counts and
// sums, and the ring of sizes no bucket held (the latest KIME_STATS_MISSES, oldest first).
#include <gtest/gtest.h>

#include "shape_stats.h"

namespace kime {
namespace {

TEST(ShapeStats, FillBinsAreTenthsClosedAbove) {
  EXPECT_EQ(fillBin(0, 128), 0u);  // empty: the lowest bin
  EXPECT_EQ(fillBin(1, 128), 0u);
  EXPECT_EQ(fillBin(12, 120), 0u);  // exactly 10%: (0, 0.1]
  EXPECT_EQ(fillBin(13, 120), 1u);
  EXPECT_EQ(fillBin(64, 128), 4u);  // 50%: (0.4, 0.5]
  EXPECT_EQ(fillBin(65, 128), 5u);
  EXPECT_EQ(fillBin(128, 128), 9u);  // full
  EXPECT_EQ(fillBin(500, 128), 9u);  // past the bound (never from run()): kept in range
}

TEST(ShapeStats, CountsPerBucketAndInTotal) {
  ShapeStats st({{128, 8, 32}, {512, 32, 128}});
  st.ran(0, 64, 8, 0);
  st.ran(0, 128, 2, 32);
  st.ran(1, 300, 20, 100);
  st.refusedBatch();
  const kime_stats t = st.totals();
  EXPECT_EQ(t.batches, 3u);
  EXPECT_EQ(t.bad_batches, 1u);
  EXPECT_EQ(t.no_bucket, 0u);
  const kime_bucket_stats& b0 = st.bucket(0);
  EXPECT_EQ(b0.batches, 2u);
  EXPECT_EQ(b0.fill[KIME_FILL_TOKENS][4], 1u);
  EXPECT_EQ(b0.fill[KIME_FILL_TOKENS][9], 1u);
  EXPECT_EQ(b0.fill[KIME_FILL_SEQS][9], 1u);
  EXPECT_EQ(b0.fill[KIME_FILL_SEQS][2], 1u);  // 2 of 8: (0.2, 0.3]
  EXPECT_EQ(b0.fill[KIME_FILL_MARKERS][0], 1u);
  EXPECT_EQ(b0.total[KIME_FILL_TOKENS], 192u);
  EXPECT_EQ(b0.total[KIME_FILL_MARKERS], 32u);
  EXPECT_EQ(st.bucket(1).batches, 1u);
  EXPECT_EQ(st.bucket(1).bucket.tokens, 512u);
}

TEST(ShapeStats, KeepsTheLatestMissesOldestFirst) {
  ShapeStats st({{16, 1, 1}});
  st.missed(100, 1, 0);
  st.missed(200, 2, 0);
  kime_stats t = st.totals();
  ASSERT_EQ(t.no_bucket_kept, 2u);
  EXPECT_EQ(t.no_bucket_sizes[0].tokens, 100u);
  EXPECT_EQ(t.no_bucket_sizes[1].seqs, 2u);
  for (uint32_t i = 0; i < KIME_STATS_MISSES + 5; ++i) st.missed(1000 + i, 1, 0);
  t = st.totals();
  EXPECT_EQ(t.no_bucket, KIME_STATS_MISSES + 7u);
  ASSERT_EQ(t.no_bucket_kept, uint32_t(KIME_STATS_MISSES));
  EXPECT_EQ(t.no_bucket_sizes[0].tokens, 1005u);  // the 7 oldest were overwritten
  EXPECT_EQ(t.no_bucket_sizes[KIME_STATS_MISSES - 1].tokens, 1000u + KIME_STATS_MISSES + 4);
}

}  // namespace
}  // namespace kime
