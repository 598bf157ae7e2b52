// What an artifact was compiled from (its source section), and a refit: an artifact's code kept,
// new weights packed into it, the result byte-identical to a full compile of the same inputs.
#ifndef KIME_PIPELINE_REFIT_H
#define KIME_PIPELINE_REFIT_H

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "Compile.h"
#include "artifact/ArtifactWriter.h"
#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "support/Process.h"

namespace kime {

// This compiler's version, as the source section records it ("kime 0.1.0").
const char* compilerVersion();

// The source section of a compile with `o`: the compiler's version, the Graph and bucket files
// (as canonical JSON) and the options that shape the artifact's bytes.
Section sourceSection(const CompileOptions& o);

// A refit's inputs, read from the artifact at `given.refit`: the options of its compile (its
// Graph and bucket file written into `dir`; the weights, output, jobs and --verify of `given`),
// and its code sections. Throws CompileError naming the file where it is no artifact, is of
// another format or compiler version, or has no source section.
struct RefitInputs {
  std::unique_ptr<TempDir> dir;
  CompileOptions options;
  std::vector<Section> code;
  std::string manifest;  // the artifact's: a refit's plans must be these, or its code is not theirs
};
RefitInputs readRefitInputs(const CompileOptions& given);

// kime-compile --update: whether the artifact at o.output was compiled from o's Graph, bucket file
// and options by this very build of the compiler, so that a refit with o's weights makes what a
// full compile would. Says on `log` why not where it exists but cannot be refit.
bool canUpdateByRefit(const CompileOptions& o, std::ostream& log);

// Refuses a checkpoint with a tensor that is no weight of `g` (a refit keeps the Graph: a tensor
// it does not use means the checkpoint is of another model), naming it.
void checkNoExtraTensors(const Checkpoint& ck, const Graph& g);

}  // namespace kime

#endif  // KIME_PIPELINE_REFIT_H
