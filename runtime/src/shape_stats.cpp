#include "shape_stats.h"

namespace kime {

size_t fillBin(size_t n, size_t bound) {
  if (n == 0 || bound == 0) return 0;
  // (i/B, (i+1)/B] -> i: ceil(n * B / bound) - 1, kept in range for n > bound.
  const size_t bin = (n * KIME_STATS_BINS + bound - 1) / bound - 1;
  return bin < KIME_STATS_BINS ? bin : KIME_STATS_BINS - 1;
}

ShapeStats::ShapeStats(const std::vector<Bucket>& buckets) : buckets_(buckets.size()) {  // zeroed
  for (size_t i = 0; i < buckets.size(); ++i)
    buckets_[i].bucket = {buckets[i].tokens, buckets[i].seqs, buckets[i].markers};
}

void ShapeStats::ran(size_t index, size_t t, size_t s, size_t k) {
  kime_bucket_stats& b = buckets_[index];
  ++b.batches;
  ++totals_.batches;
  const size_t counts[3] = {t, s, k}, bounds[3] = {b.bucket.tokens, b.bucket.seqs, b.bucket.markers};
  for (int d = 0; d < 3; ++d) {
    ++b.fill[d][fillBin(counts[d], bounds[d])];
    b.total[d] += counts[d];
  }
}

void ShapeStats::missed(size_t t, size_t s, size_t k) {
  ++totals_.no_bucket;
  auto clamp = [](size_t n) { return uint32_t(n > UINT32_MAX ? UINT32_MAX : n); };
  totals_.no_bucket_sizes[next_] = {clamp(t), clamp(s), clamp(k)};
  next_ = (next_ + 1) % KIME_STATS_MISSES;
  if (totals_.no_bucket_kept < KIME_STATS_MISSES) ++totals_.no_bucket_kept;
}

kime_stats ShapeStats::totals() const {
  kime_stats out = totals_;
  // Oldest first: once the ring is full the oldest is the next to be overwritten.
  const size_t kept = totals_.no_bucket_kept, start = kept < KIME_STATS_MISSES ? 0 : next_;
  for (size_t i = 0; i < kept; ++i) out.no_bucket_sizes[i] = totals_.no_bucket_sizes[(start + i) % KIME_STATS_MISSES];
  return out;
}

}  // namespace kime
