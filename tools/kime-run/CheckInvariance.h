// kime-run --invariance: whether an artifact's outputs for a sequence are the same bytes in any
// batch (docs/batch.md), on the CPU code this run loads (--cpu-target picks another).
#ifndef KIME_TOOLS_CHECKINVARIANCE_H
#define KIME_TOOLS_CHECKINVARIANCE_H

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kime/runtime.h"

namespace kime::tools {

// For each stage, executors on `device` (the CPU: 1 and 2 threads; CUDA: one, of its arithmetic);
// `trials` random sequences a bucket, each run alone and among random neighbours
// (kime/tooling/Invariance.h). Prints a line a stage; returns 1 when a sequence's bytes differed
// anywhere (the first difference on stderr), else 0.
int checkInvariance(const std::shared_ptr<Model>& model, const ExecutorOptions& device, size_t trials, uint64_t seed);

}  // namespace kime::tools

#endif  // KIME_TOOLS_CHECKINVARIANCE_H
