// kime-compile: Graph (+ checkpoint) -> kime IR. This version imports and checks; code
// generation and the artifact are the next stages of the pipeline.
#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "import/GraphImport.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace cl = llvm::cl;

static cl::opt<std::string> graphPath(cl::Positional, cl::desc("<graph.json>"), cl::Required);
static cl::opt<std::string> weightsPath("weights", cl::desc("checkpoint (safetensors) to check against the graph"),
                                        cl::value_desc("model.safetensors"));
static cl::opt<std::string> emit("emit", cl::desc("what to print: mlir (the imported kime IR) or graph (the Graph JSON, canonical)"),
                                 cl::value_desc("mlir|graph"), cl::Required);
static cl::opt<std::string> outPath("o", cl::desc("output file (default: stdout)"), cl::value_desc("file"),
                                    cl::init("-"));

int main(int argc, char** argv) {
  cl::ParseCommandLineOptions(argc, argv, "kime ahead-of-time graph compiler\n");
  try {
    kime::Graph g = kime::readGraphFile(graphPath);
    if (!weightsPath.empty()) kime::Checkpoint::open(weightsPath)->checkAgainst(g);
    std::string text;
    if (emit == "graph") {
      text = kime::writeGraphJson(g);
    } else if (emit == "mlir") {
      mlir::MLIRContext ctx;
      auto module = kime::importGraph(ctx, g);
      llvm::raw_string_ostream os(text);
      module->print(os);
    } else {
      throw kime::CompileError("--emit must be mlir or graph, not \"" + emit + "\"");
    }
    if (outPath == "-")
      llvm::outs() << text;
    else
      kime::json::writeFileAtomic(outPath, text);
    return 0;
  } catch (const std::exception& e) {
    llvm::errs() << "kime-compile: error: " << e.what() << "\n";
    return 1;
  }
}
