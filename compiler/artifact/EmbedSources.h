// C sources that link a compiled artifact into a program (kime-compile --embed, kime_add_model's
// EMBED): a header declaring kime_model_open_NAME and constants for the model's stages and
// buckets, and a C file whose top-level assembly includes the artifact's bytes (.incbin) as
// page-aligned read-only data. Any C compiler for the program's target builds it.
#ifndef KIME_ARTIFACT_EMBEDSOURCES_H
#define KIME_ARTIFACT_EMBEDSOURCES_H

#include <string>
#include <vector>

#include "buckets/Buckets.h"

namespace kime {

struct EmbedSources {
  std::string header;  // NAME.h
  std::string source;  // NAME.c
};

// Throws CompileError unless `name` is a C identifier (it names symbols and the header).
void checkEmbedName(const std::string& name);
// `artifact`: the absolute path of the .kime file the C file includes. Throws CompileError for a
// path an assembler string cannot hold.
EmbedSources embedSources(const std::string& name, const std::string& artifact, const std::vector<Stage>& stages);
// Writes DIR/NAME.h and DIR/NAME.c, each whole or not at all.
void writeEmbedSources(const std::string& dir, const std::string& name, const EmbedSources& sources);

}  // namespace kime

#endif  // KIME_ARTIFACT_EMBEDSOURCES_H
