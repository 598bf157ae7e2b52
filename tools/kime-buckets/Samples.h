// kime-buckets' input: the sizes of sample batches, from batch files (kime-run's format) or from
// JSON lines of {"tokens", "seqs", "markers"} (kime-run --stats --json writes them).
#ifndef KIME_TOOLS_SAMPLES_H
#define KIME_TOOLS_SAMPLES_H

#include <string>
#include <vector>

#include "buckets/BucketPlanner.h"

namespace kime::tools {

// A file that holds one JSON object with "ids" is a batch; anything else is read as JSON lines.
// Throws std::runtime_error naming the file and line of anything else.
std::vector<SizeSample> readSamples(const std::string& path);

}  // namespace kime::tools

#endif  // KIME_TOOLS_SAMPLES_H
