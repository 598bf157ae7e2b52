// kime-run: runs a batch. `--reference` evaluates a Graph with its checkpoint in f64 (the
// oracle) and prints the seed's Outputs as JSON.
#include <iostream>

#include "common/Args.h"
#include "common/BatchFile.h"
#include "reference/Reference.h"

static const char* kUsage =
    "usage: kime-run --reference GRAPH.json MODEL.safetensors BATCH.json\n"
    "Evaluates GRAPH with the weights of MODEL on BATCH in f64 and prints\n"
    "{\"logits\": [...], \"act\": [[a, b], ...]}.\n";

int main(int argc, char** argv) {
  try {
    auto args = kime::tools::Args::parse(argc, argv, {}, {"--reference", "--help"});
    if (args.has("--help")) {
      std::cout << kUsage;
      return 0;
    }
    if (!args.has("--reference") || args.positional.size() != 3) {
      std::cerr << kUsage;
      return 2;
    }
    kime::Graph g = kime::readGraphFile(args.positional[0]);
    auto checkpoint = kime::Checkpoint::open(args.positional[1]);
    kime::RefWeights weights = kime::loadRefWeights(g, *checkpoint);
    kime::tools::OwnedBatch batch = kime::tools::readBatchFile(args.positional[2]);
    kime::RefOutputs out;
    if (auto err = kime::evaluateReference(g, weights, batch.view(), out)) {
      std::cerr << "kime-run: " << args.positional[2] << ": " << err->text() << "\n";
      return 1;
    }
    std::cout << kime::tools::outputsJson(out.logits, out.act) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-run: error: " << e.what() << "\n";
    return 1;
  }
}
