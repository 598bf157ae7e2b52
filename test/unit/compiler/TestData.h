// Where the tests find their data, and the golden cases of the independent implementation.
#ifndef KIME_TEST_TESTDATA_H
#define KIME_TEST_TESTDATA_H

#include <array>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/ModelConfig.h"

namespace kime::test {

std::string dataPath(const std::string& rel);  // under test/data
std::vector<std::string> goldenCases();        // the folder names under test/data/golden

// A golden case's graph: its config built with the dtype of its checkpoint.
Graph goldenGraph(const std::string& name);

// A golden case's outputs: logits, then act's pairs flattened (the seed's two outputs).
using Expected = OutputValues<double>;
Expected readExpected(const std::string& path);

}  // namespace kime::test

#endif  // KIME_TEST_TESTDATA_H
