// kime-run's runs of batch files, and the shape statistics it prints after them.
#ifndef KIME_TOOLS_RUNBATCHES_H
#define KIME_TOOLS_RUNBATCHES_H

#include <string>
#include <vector>

#include "kime/runtime.h"

namespace kime::tools {

// Runs `files` in order; prints each batch's outputs (kime-run's JSON), or with `stats` the
// executor's statistics after the last (with `json`: each batch's size as a JSON line on stdout,
// the table on stderr). Returns 1 when any batch was refused (each named on stderr), else 0.
int runBatches(const Model& model, Executor& exec, const std::vector<std::string>& files, bool stats, bool json);

}  // namespace kime::tools

#endif  // KIME_TOOLS_RUNBATCHES_H
