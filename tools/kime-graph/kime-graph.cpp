// kime-graph: writes the Graph of docs/model.md's encoder family for a config, and optionally
// deterministic random weights for it (the bundled example model and the tests use these).
#include <iostream>

#include "checkpoint/Safetensors.h"
#include "common/Args.h"
#include "graph/ModelConfig.h"
#include "support/JsonFields.h"

static const char* kUsage =
    "usage: kime-graph CONFIG.json [-o GRAPH.json] [--dtype f32|f16|bf16] [--name NAME]\n"
    "                  [--random-weights OUT.safetensors --seed N]\n"
    "Writes the Graph of docs/model.md's encoder family for CONFIG (to stdout without -o).\n"
    "--random-weights also writes deterministic random weights (scaled as docs/model.md says).\n";

int main(int argc, char** argv) {
  try {
    auto args =
        kime::tools::Args::parse(argc, argv, {"-o", "--dtype", "--name", "--random-weights", "--seed"}, {"--help"});
    if (args.has("--help") || args.positional.size() != 1) {
      (args.has("--help") ? std::cout : std::cerr) << kUsage;  // asked for: to stdout
      return args.has("--help") ? 0 : 2;
    }
    const std::string cfgPath = args.positional[0];
    kime::ModelConfig cfg = kime::parseModelConfig(kime::json::readFile(cfgPath), cfgPath);
    auto dtype = kime::shapes::parseDType(args.get("--dtype", "f32"));
    if (!dtype || !kime::shapes::isFloat(*dtype))
      throw kime::CompileError("--dtype must be f32, f16 or bf16, not " + args.get("--dtype"));
    kime::Graph g = kime::buildEncoderGraph(cfg, *dtype, args.get("--name", "kime_encoder"));
    std::string text = kime::writeGraphJson(g);
    if (args.has("-o"))
      kime::json::writeFileAtomic(args.get("-o"), text);
    else
      std::cout << text;

    if (args.has("--random-weights")) {
      if (!args.has("--seed")) throw kime::CompileError("--random-weights needs --seed N");
      uint64_t seed = std::stoull(args.get("--seed"));
      auto values = kime::randomWeights(g, seed);
      std::vector<kime::TensorData> tensors;
      for (const kime::WeightDecl& w : g.weights)
        tensors.push_back({w.name, w.dtype, w.shape, std::move(values.at(w.name))});
      kime::writeSafetensors(args.get("--random-weights"), tensors,
                             {{"made_by", "kime-graph"}, {"seed", std::to_string(seed)}});
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-graph: error: " << e.what() << "\n";
    return 1;
  }
}
