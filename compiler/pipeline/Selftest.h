// kime-compile --selftest N: the artifact's self-test section (KIME_SECTION_SELFTEST, JSON):
// N batches drawn across every bucket of every stage (each bucket's edge cases first: its exact
// bounds, ragged with an empty sequence, one long sequence, the empty batch), each with the f64
// reference's outputs, and the tolerance per arithmetic that the runtime's selftest holds the
// outputs to (runtime/src/selftest.cpp reads it).
#ifndef KIME_PIPELINE_SELFTEST_H
#define KIME_PIPELINE_SELFTEST_H

#include <string>
#include <vector>

#include "artifact/ArtifactWriter.h"
#include "buckets/Buckets.h"
#include "cache/KernelCache.h"
#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "pipeline/ExpectedOutputs.h"
#include "reference/Reference.h"

namespace kime {

// Throws CompileError when `count` is smaller than the number of buckets (each must be checked).
void checkSelftestCount(const std::vector<Stage>& stages, size_t count);
// Where the reference's outputs for the self-test are kept between compiles: the kernel cache,
// under keys made of `model` (a hash of what decides the outputs: the compiler, the Graph and the
// weights) and each batch. No cache: every batch evaluated.
struct ReferenceCache {
  KernelCache* cache = nullptr;
  std::string model;
};
// `cpu`: the tolerance of the artifact's CPU code (f32, or bf16 linears). The batches are
// evaluated in a child process, one after another, each on every core. A bucket's batches depend
// on its bounds alone, so adding a bucket leaves the other buckets' batches (and their cached
// outputs) as they were.
Section selftestSection(const Graph& g, const Checkpoint& ck, const std::vector<Stage>& stages, size_t count,
                        Tolerance cpu, const ReferenceCache& cache);

// kime-compile --selftest-from: the self-test of a framework's outputs (ExpectedOutputs.h), each
// case in the first bucket that holds it of every stage, its outputs in the order of `outputs`
// (the model's). Throws CompileError naming a case that no bucket holds or that lacks an output.
Section expectedSelftestSection(const std::vector<ExpectedCase>& cases, const std::vector<OutputDesc>& outputs,
                                const std::vector<Stage>& stages, Tolerance cpu);

}  // namespace kime

#endif  // KIME_PIPELINE_SELFTEST_H
