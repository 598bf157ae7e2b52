// An executor's shape statistics (kime.h's kime_stats and kime_bucket_stats): per bucket the
// batches run and their fill, and the sizes of the latest batches no bucket held. Every array is
// sized when the executor is made; counting allocates nothing.
#ifndef KIME_RUNTIME_SHAPE_STATS_H
#define KIME_RUNTIME_SHAPE_STATS_H

#include <cstddef>
#include <vector>

#include "kime/kime.h"
#include "kime/runtime.h"

namespace kime {

class ShapeStats {
 public:
  explicit ShapeStats(const std::vector<Bucket>& buckets);

  // A batch of t tokens, s sequences and k markers ran in bucket `index`.
  void ran(size_t index, size_t t, size_t s, size_t k);
  void refusedBatch() { ++totals_.bad_batches; }
  void missed(size_t t, size_t s, size_t k);

  // The totals, with the refused sizes oldest first.
  kime_stats totals() const;
  const kime_bucket_stats& bucket(size_t index) const { return buckets_[index]; }
  size_t bucketCount() const { return buckets_.size(); }

 private:
  std::vector<kime_bucket_stats> buckets_;
  kime_stats totals_{};  // no_bucket_sizes as a ring: the next write goes to next_
  size_t next_ = 0;
};

// The bin of KIME_STATS_BINS a count of `n` within a bound of `bound` falls in.
size_t fillBin(size_t n, size_t bound);

}  // namespace kime

#endif  // KIME_RUNTIME_SHAPE_STATS_H
