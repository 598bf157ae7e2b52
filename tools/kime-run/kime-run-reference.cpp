// kime-run --reference: the f64 reference evaluator on a Graph and its checkpoint.
#include <iostream>

#include "common/Args.h"
#include "kime/tooling/BatchFile.h"
#include "reference/Reference.h"

namespace kime::tools {

int runReference(const Args& args) {
  if (args.positional.size() != 3) {
    std::cerr << "usage: kime-run --reference GRAPH.json MODEL.safetensors BATCH.json\n";
    return 2;
  }
  Graph g = readGraphFile(args.positional[0]);
  auto checkpoint = Checkpoint::open(args.positional[1]);
  RefSession reference(g, *checkpoint);
  tooling::OwnedBatch batch = tooling::readBatchFile(args.positional[2]);
  RefOutputs out;
  if (auto err = reference.evaluate(batch.view(), out)) {
    std::cerr << "kime-run: " << args.positional[2] << ": " << err->text() << "\n";
    return 1;
  }
  std::cout << tooling::outputsJson(outputDescs(g), out) << "\n";
  return 0;
}

}  // namespace kime::tools
