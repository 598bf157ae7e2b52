// kime-import: an ONNX model (an encoder exported from PyTorch) as a kime Graph and its
// checkpoint, for kime-compile. docs/onnx.md says which models it takes.
#include <iostream>

#include "common/Args.h"
#include "pipeline/ExpectedOutputs.h"
#include "pipeline/OnnxInput.h"
#include "support/Diagnostic.h"

static const char* kUsage =
    "usage: kime-import MODEL.onnx -o GRAPH.json --weights-out MODEL.safetensors\n"
    "                   [--output NAME]... [--logits NAME] [--act NAME] [--expect EXPECTED.json]\n"
    "Imports an encoder exported as ONNX (inputs input_ids, attention_mask, qtype or token_type_ids:\n"
    "docs/onnx.md). Its outputs keep their names: each [B, L] or [B, L, K] per token, read at the\n"
    "markers, each [B] or [B, K] per sequence. --output NAME (repeatable) keeps only those;\n"
    "--logits and --act instead make the seed's two outputs, logits and act, of the outputs they\n"
    "name (\"\" for the one that fits). --expect checks the import against the framework's own\n"
    "outputs (kime.onnx.expected_outputs). Nothing is written when refused.\n";

int main(int argc, char** argv) {
  try {
    auto args = kime::tools::Args::parse(
        argc, argv, {"-o", "--weights-out", "--output", "--logits", "--act", "--expect"}, {"--help"});
    if (args.has("--help") || args.positional.size() != 1 || !args.has("-o") || !args.has("--weights-out")) {
      (args.has("--help") ? std::cout : std::cerr) << kUsage;
      return args.has("--help") ? 0 : 2;
    }
    kime::OnnxImportOptions options;
    options.logits = args.get("--logits", "");
    options.act = args.get("--act", "");
    options.outputs = args.all("--output");
    options.seedOutputs = args.has("--logits") || args.has("--act");
    const kime::ImportedOnnx imported(args.positional[0], options);
    const kime::OnnxImport& model = imported.model();
    if (args.has("--expect")) {
      const auto cases = kime::readExpectedOutputs(args.get("--expect"));
      const kime::ExpectedDifference d =
          kime::compareWithReference(model.graph, *kime::Checkpoint::open(imported.weights()), cases);
      if (d.overBy > 1)
        throw kime::CompileError(args.get("--expect") + ": the import misses the expected outputs: " + d.worst);
      std::cerr << "kime-import: " << cases.size() << " expected cases, kime's reference within " << d.maxAbs
                << " of them\n";
    }
    kime::writeImport(model, args.get("-o"), args.get("--weights-out"));
    std::cerr << "kime-import: " << model.graph.nodes.size() << " nodes, " << model.graph.weights.size()
              << " weights (vocab " << model.graph.vocab << ", types " << model.graph.types << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-import: error: " << e.what() << "\n";
    return 1;
  }
}
