// The artifact's manifest section (runtime/schema/manifest.fbs), made from a lowered model.
#ifndef KIME_PIPELINE_MANIFEST_H
#define KIME_PIPELINE_MANIFEST_H

#include <string>

#include "Compile.h"
#include "LoweredModel.h"
#include "WeightPacker.h"
#include "artifact/ArtifactWriter.h"
#include "graph/Graph.h"

namespace kime {

// The manifest of `m` compiled with `o`: the model's facts, its weights as packed, its kernels
// (their classes and argument slots by plan.h), per bucket its plan and each step's CUDA launch
// per math of o.cudaMath, and the stages. The same inputs give the same bytes (a refit checks
// its plans by them).
Section manifestSection(const CompileOptions& o, const Graph& g, const LoweredModel& m, const WeightPacker& weights);

// A manifest section's bytes as JSON (kime-compile --emit=manifest): FlatBuffers' text form of
// it by manifest.fbs. Throws CompileError where the bytes are no manifest of this format.
std::string manifestJson(const std::string& bytes);

}  // namespace kime

#endif  // KIME_PIPELINE_MANIFEST_H
