#include "buckets/BucketPlanner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace kime {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The samples grouped by token count (rising): per distinct count, how many and their largest
// sequences and markers.
struct Point {
  uint32_t tokens, seqs, markers;
  size_t count;
};

std::vector<Point> points(const std::vector<SizeSample>& samples) {
  std::map<uint32_t, Point> byTokens;
  for (const SizeSample& s : samples) {
    auto [it, fresh] = byTokens.try_emplace(s.tokens, Point{s.tokens, s.seqs, s.markers, 0});
    it->second.seqs = std::max(it->second.seqs, s.seqs);
    it->second.markers = std::max(it->second.markers, s.markers);
    ++it->second.count;
  }
  std::vector<Point> out;
  for (auto& [t, p] : byTokens) out.push_back(p);
  return out;
}

}  // namespace

BucketProposal proposeBuckets(const std::vector<SizeSample>& samples, size_t maxBuckets, const BucketCostFn& cost) {
  if (samples.empty()) throw std::invalid_argument("no samples");
  if (maxBuckets == 0) throw std::invalid_argument("at most 0 buckets");
  const std::vector<Point> p = points(samples);
  const size_t n = p.size(), k = std::min(maxBuckets, n);
  // group[i][j]: the bucket of points i..j and the cost of its samples.
  std::vector<std::vector<Bucket>> bucket(n, std::vector<Bucket>(n));
  std::vector<std::vector<double>> groupCost(n, std::vector<double>(n, kInf));
  for (size_t i = 0; i < n; ++i) {
    Bucket b{p[i].tokens, 0, 0};
    size_t count = 0;
    for (size_t j = i; j < n; ++j) {
      b = {p[j].tokens, std::max(b.seqs, p[j].seqs), std::max(b.markers, p[j].markers)};
      count += p[j].count;
      bucket[i][j] = b;
      const double c = cost(b);
      groupCost[i][j] = c == kInf ? kInf : c * double(count);
    }
  }
  // best[g][j]: the cheapest cover of points 0..j by g + 1 groups; from[g][j]: its last group's start.
  std::vector<std::vector<double>> best(k, std::vector<double>(n, kInf));
  std::vector<std::vector<size_t>> from(k, std::vector<size_t>(n, 0));
  for (size_t j = 0; j < n; ++j) best[0][j] = groupCost[0][j];
  for (size_t g = 1; g < k; ++g)
    for (size_t j = g; j < n; ++j)
      for (size_t i = g; i <= j; ++i) {
        const double c = best[g - 1][i - 1] + groupCost[i][j];
        if (c < best[g][j]) best[g][j] = c, from[g][j] = i;
      }
  size_t groups = 0;
  for (size_t g = 0; g < k; ++g)
    if (best[g][n - 1] < best[groups][n - 1]) groups = g;
  if (best[groups][n - 1] == kInf)
    throw std::runtime_error("no bucket that holds the largest sample is allowed (memory cap)");
  BucketProposal out;
  out.expectedCost = best[groups][n - 1] / double(samples.size());
  for (size_t g = groups + 1, j = n - 1; g-- > 0;) {
    const size_t i = g ? from[g][j] : 0;
    out.buckets.insert(out.buckets.begin(), bucket[i][j]);
    if (i) j = i - 1;
  }
  return out;
}

std::vector<size_t> assignSamples(const std::vector<SizeSample>& samples, const std::vector<Bucket>& buckets) {
  std::vector<size_t> out;
  for (const SizeSample& s : samples) {
    size_t i = 0;
    while (i < buckets.size() && !buckets[i].holds(s.tokens, s.seqs, s.markers)) ++i;
    out.push_back(i);
  }
  return out;
}

double expectedCost(const std::vector<SizeSample>& samples, const std::vector<Bucket>& buckets,
                    const BucketCostFn& cost) {
  std::vector<double> costs;
  for (const Bucket& b : buckets) costs.push_back(cost(b));
  costs.push_back(kInf);  // no bucket holds it
  double total = 0;
  for (size_t i : assignSamples(samples, buckets)) total += costs[i];
  return samples.empty() ? 0 : total / double(samples.size());
}

std::vector<Bucket> evenSplit(const std::vector<SizeSample>& samples, size_t count) {
  uint32_t maxTokens = 0;
  for (const SizeSample& s : samples) maxTokens = std::max(maxTokens, s.tokens);
  std::vector<Bucket> out;
  for (size_t i = 1; i <= count; ++i) {
    const uint32_t lo = out.empty() ? 0 : out.back().tokens;
    Bucket b{uint32_t((uint64_t(maxTokens) * i + count - 1) / count), 1, 0};
    for (const SizeSample& s : samples)
      if (s.tokens > lo && s.tokens <= b.tokens)
        b.seqs = std::max(b.seqs, s.seqs), b.markers = std::max(b.markers, s.markers);
    if (b.tokens > lo) out.push_back(b);
  }
  return out;
}

}  // namespace kime
