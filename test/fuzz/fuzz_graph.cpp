// Graph JSON: parse, check, import into the kime dialect and verify. A bad graph must end in a
// CompileError (or a failed verification), never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/Graph.h"
#include "import/GraphImport.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "support/Diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mlir::MLIRContext* ctx = [] {
    auto* c = new mlir::MLIRContext();
    c->printOpOnDiagnostic(false);
    c->getDiagEngine().registerHandler([](mlir::Diagnostic&) { return mlir::success(); });
    return c;
  }();
  try {
    kime::Graph g = kime::parseGraphJson(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    kime::checkGraph(g);
    auto module = kime::importGraph(*ctx, g);
    if (module) (void)mlir::verify(*module);
  } catch (const kime::CompileError&) {
  }
  return 0;
}
