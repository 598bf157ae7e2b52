// kime-compile --verify: the written artifact run against the reference evaluator.
#ifndef KIME_PIPELINE_VERIFY_H
#define KIME_PIPELINE_VERIFY_H

#include <ostream>
#include <string>
#include <vector>

#include "buckets/Buckets.h"
#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "reference/Reference.h"

namespace kime {

// Runs every bucket of the artifact at `path` on generated batches (each bucket on all its edge
// cases, even where a smaller one would hold them) and compares each output with the reference
// evaluator; throws CompileError naming the first one past `tolerance`. Progress to `log`.
void verifyArtifact(const std::string& path, const Graph& g, const Checkpoint& ck, const std::vector<Stage>& stages,
                    Tolerance tolerance, std::ostream& log);

}  // namespace kime

#endif  // KIME_PIPELINE_VERIFY_H
