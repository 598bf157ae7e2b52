// The bucket file: named stages, each an ordered list of shape buckets (docs/model.md).
#ifndef KIME_BUCKETS_BUCKETS_H
#define KIME_BUCKETS_BUCKETS_H

#include <string>
#include <vector>

#include "kime/batch.h"

namespace kime {

struct Stage {
  std::string name;
  std::vector<Bucket> buckets;  // in the order the executor tries them
};

// Parses {"stages": {NAME: [{"tokens", "seqs", "markers"}, ...], ...}} and refuses, naming the
// stage and bucket: unknown keys, a size <= 0, a stage with no buckets, two equal buckets in a
// stage, and a bucket no larger than an earlier one in every size (it could never be chosen).
std::vector<Stage> parseBuckets(const std::string& text, const std::string& source);
std::vector<Stage> readBucketsFile(const std::string& path);

}  // namespace kime

#endif  // KIME_BUCKETS_BUCKETS_H
