// The example model (docs/model.md's small config, weights from seed 1) compiled for the example
// buckets once and shared by the end-to-end tests; rebuilt when the test binary is newer.
#ifndef KIME_TEST_COMPILEDMODEL_H
#define KIME_TEST_COMPILEDMODEL_H

#include <memory>
#include <string>

#include "graph/Graph.h"
#include "kime/runtime.h"
#include "reference/Reference.h"

namespace kime::test {

struct CompiledModel {
  std::string artifact;
  Graph graph;
  RefWeights weights;
  std::shared_ptr<Model> model;
};

// Compiles (or reuses) the artifact; fails the calling test on any error.
const CompiledModel& smallModel();

}  // namespace kime::test

#endif  // KIME_TEST_COMPILEDMODEL_H
