// Buckets chosen from sample batch sizes (kime-buckets): at most N buckets that hold every
// sample, minimizing the expected cost of a batch under a cost model (the cost of running one
// batch in a bucket; kime-buckets measures it from the compiler's plans).
//
// Exact over token-ordered chains by dynamic programming: the distinct token counts are sorted
// and split into at most N contiguous groups; a group's bucket is the largest tokens, sequences
// and markers of its samples. Buckets are tried in order of tokens, and every sample of a group
// has more tokens than any earlier bucket, so it runs in its group's bucket (the executor's
// first-that-holds rule gives the same assignment the DP costs).
#ifndef KIME_BUCKETS_BUCKETPLANNER_H
#define KIME_BUCKETS_BUCKETPLANNER_H

#include <functional>
#include <vector>

#include "kime/batch.h"

namespace kime {

struct SizeSample {
  uint32_t tokens = 0, seqs = 0, markers = 0;
};

// The cost of one batch run in a bucket; +infinity where the bucket is not allowed (a memory cap).
using BucketCostFn = std::function<double(const Bucket&)>;

struct BucketProposal {
  std::vector<Bucket> buckets;  // in the order the executor tries them (tokens rising)
  double expectedCost = 0;      // per batch, over the samples
};

// Throws std::invalid_argument for no samples or maxBuckets == 0, and std::runtime_error when no
// choice is finite (every bucket able to hold the largest sample is over the cap).
BucketProposal proposeBuckets(const std::vector<SizeSample>& samples, size_t maxBuckets, const BucketCostFn& cost);

// Per sample, the bucket that runs it (buckets are tried in order, the first that holds a sample
// runs it), or buckets.size() where none holds it.
std::vector<size_t> assignSamples(const std::vector<SizeSample>& samples, const std::vector<Bucket>& buckets);
// The expected cost per batch of `buckets`; +infinity when some sample fits none.
double expectedCost(const std::vector<SizeSample>& samples, const std::vector<Bucket>& buckets,
                    const BucketCostFn& cost);

// `count` buckets evenly spaced in tokens up to the largest sample (tokens max*i/count), each with
// the largest sequences and markers of the samples it would hold: the baseline a proposal is
// compared with.
std::vector<Bucket> evenSplit(const std::vector<SizeSample>& samples, size_t count);

}  // namespace kime

#endif  // KIME_BUCKETS_BUCKETPLANNER_H
