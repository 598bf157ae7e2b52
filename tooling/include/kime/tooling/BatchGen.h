// Batches made from a seed, for checks and benchmarks: full buckets, ragged ones, edge cases.
#ifndef KIME_TOOLING_BATCHGEN_H
#define KIME_TOOLING_BATCHGEN_H

#include <cstdint>
#include <string>
#include <vector>

#include "kime/batch.h"
#include "kime/tooling/BatchFile.h"

namespace kime::tooling {

struct NamedBatch {
  std::string name;
  OwnedBatch batch;
};

// Batches that `bucket` holds: exactly at its bounds; ragged lengths with an empty sequence, a
// length-1 sequence and one without markers; one long sequence; the empty batch.
// `maxLen` caps a sequence's length (a learned position table), 0 for no cap. No token is
// `avoidId` (a model's padding id, which batches may not hold; -1: any id below vocab).
std::vector<NamedBatch> bucketBatches(const Bucket& bucket, size_t vocab, size_t types, size_t maxLen, uint64_t seed,
                                      int64_t avoidId = -1);

// S sequences of L tokens each, `markersPerSeq` markers each (a benchmark shape).
OwnedBatch uniformBatch(size_t seqs, size_t len, size_t markersPerSeq, size_t vocab, size_t types, uint64_t seed,
                        int64_t avoidId = -1);

}  // namespace kime::tooling

#endif  // KIME_TOOLING_BATCHGEN_H
