// kime-buckets' planner: buckets known by hand for small samples, every sample held, the
// executor's first-that-holds rule costed, a memory cap respected, and a skewed sample (many short
// batches, a few long) served at half the cost of an even split of the same count.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "buckets/BucketPlanner.h"

namespace kime {
namespace {

const BucketCostFn kTokens = [](const Bucket& b) { return double(b.tokens); };

std::vector<SizeSample> repeat(SizeSample s, size_t n) { return std::vector<SizeSample>(n, s); }

std::vector<SizeSample> join(std::initializer_list<std::vector<SizeSample>> parts) {
  std::vector<SizeSample> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(BucketPlanner, FindsTheBucketsKnownByHand) {
  // 50 x 10 tokens, 30 x 20, 20 x 100; two buckets: {20, 100} costs 80*20 + 20*100 = 3600 against
  // 5500 for {10, 100} (and 10000 for {100} alone).
  const auto s = join({repeat({10, 1, 1}, 50), repeat({20, 2, 3}, 30), repeat({100, 4, 8}, 20)});
  BucketProposal p = proposeBuckets(s, 2, kTokens);
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_EQ(p.buckets[0], (Bucket{20, 2, 3}));
  EXPECT_EQ(p.buckets[1], (Bucket{100, 4, 8}));
  EXPECT_DOUBLE_EQ(p.expectedCost, 36.0);
  EXPECT_DOUBLE_EQ(expectedCost(s, p.buckets, kTokens), 36.0);
  p = proposeBuckets(s, 1, kTokens);
  ASSERT_EQ(p.buckets.size(), 1u);
  EXPECT_EQ(p.buckets[0], (Bucket{100, 4, 8}));
  p = proposeBuckets(s, 5, kTokens);  // more buckets than sizes: one per size
  EXPECT_EQ(p.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(p.expectedCost, (50 * 10 + 30 * 20 + 20 * 100) / 100.0);
}

TEST(BucketPlanner, ABucketHoldsTheLargestSequencesAndMarkersOfItsGroup) {
  // The 20-token samples need 6 sequences; the 10-token ones 1: a group's bucket takes the max.
  const auto s = join({repeat({10, 1, 1}, 10), repeat({20, 6, 2}, 1), repeat({20, 1, 9}, 1)});
  BucketProposal p = proposeBuckets(s, 1, kTokens);
  EXPECT_EQ(p.buckets[0], (Bucket{20, 6, 9}));
  EXPECT_DOUBLE_EQ(expectedCost(s, {{10, 1, 1}, {20, 6, 9}}, kTokens), (10 * 10 + 2 * 20) / 12.0);
  std::vector<size_t> held(2);
  for (size_t i : assignSamples(s, {{10, 1, 1}, {20, 6, 9}})) ++held.at(i);
  EXPECT_EQ(held, (std::vector<size_t>{10, 2}));
  EXPECT_TRUE(std::isinf(expectedCost(s, {{10, 1, 1}, {20, 6, 2}}, kTokens)));  // {20, 1, 9} fits none
  // Every sample is assigned, those after one that fits nowhere too.
  const std::vector<size_t> assigned = assignSamples(s, {{10, 1, 1}, {20, 6, 2}});
  EXPECT_EQ(std::vector<size_t>(assigned.end() - 2, assigned.end()), (std::vector<size_t>{1, 2}));
}

TEST(BucketPlanner, AMemoryCapRulesBucketsOut) {
  const auto s = join({repeat({10, 1, 1}, 90), repeat({100, 1, 1}, 10)});
  // Nothing over 50 tokens but what the largest sample needs: the small ones go with it.
  const BucketCostFn capped = [](const Bucket& b) {
    return b.tokens > 50 && b.tokens < 100 ? HUGE_VAL : double(b.tokens);
  };
  EXPECT_EQ(proposeBuckets(s, 2, capped).buckets.size(), 2u);
  const BucketCostFn noneFits = [](const Bucket& b) { return b.tokens >= 100 ? HUGE_VAL : double(b.tokens); };
  EXPECT_THROW(proposeBuckets(s, 2, noneFits), std::runtime_error);
  EXPECT_THROW(proposeBuckets({}, 2, kTokens), std::invalid_argument);
  EXPECT_THROW(proposeBuckets(s, 0, kTokens), std::invalid_argument);
}

TEST(BucketPlanner, BeatsAnEvenSplitOnASkewedSample) {
  std::mt19937 rng(3);
  auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  std::vector<SizeSample> s;
  for (int i = 0; i < 1000; ++i) {
    const bool longBatch = uniform(0, 9) == 0;  // 10% long
    const uint32_t seqs = longBatch ? uniform(8, 32) : uniform(1, 4);
    uint32_t tokens = 0;
    for (uint32_t k = 0; k < seqs; ++k) tokens += longBatch ? uniform(8, 24) : uniform(4, 24);
    s.push_back({tokens, seqs, uniform(0, 2 * seqs)});
  }
  for (size_t n : {2, 3, 4}) {
    const BucketProposal p = proposeBuckets(s, n, kTokens);
    const double even = expectedCost(s, evenSplit(s, n), kTokens);
    EXPECT_LE(p.buckets.size(), n);
    EXPECT_LT(p.expectedCost, 0.6 * even) << n << " buckets: " << p.expectedCost << " vs " << even;
  }
}

}  // namespace
}  // namespace kime
