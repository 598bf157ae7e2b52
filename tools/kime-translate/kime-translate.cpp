// kime-translate: Graph JSON -> kime IR (--import-kime-graph) and back (--export-kime-graph).
#include "common/ToolOptions.h"
#include "graph/Graph.h"
#include "import/GraphImport.h"
#include "kime/IR/KimeDialect.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "support/Diagnostic.h"

using mlir::DialectRegistry;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::Operation;
using mlir::OwningOpRef;
using mlir::success;
using mlir::TranslateFromMLIRRegistration;
using mlir::TranslateToMLIRRegistration;
using mlir::UnknownLoc;

int main(int argc, char** argv) {
  TranslateToMLIRRegistration importGraph("import-kime-graph", "Graph JSON to kime IR",
                                          [](llvm::SourceMgr& sm, MLIRContext* ctx) -> OwningOpRef<Operation*> {
                                            const llvm::MemoryBuffer* buf = sm.getMemoryBuffer(sm.getMainFileID());
                                            try {
                                              kime::Graph g = kime::parseGraphJson(buf->getBuffer().str(),
                                                                                   buf->getBufferIdentifier().str());
                                              return OwningOpRef<Operation*>(kime::importGraph(*ctx, g).release());
                                            } catch (const kime::CompileError& e) {
                                              mlir::emitError(UnknownLoc::get(ctx)) << e.what();
                                              return nullptr;
                                            }
                                          });
  TranslateFromMLIRRegistration exportGraph(
      "export-kime-graph", "kime IR to Graph JSON",
      [](Operation* op, llvm::raw_ostream& os) -> LogicalResult {
        auto module = mlir::dyn_cast<ModuleOp>(op);
        if (!module) return op->emitError("expected a module");
        try {
          os << kime::writeGraphJson(kime::exportGraph(module));
          return success();
        } catch (const kime::CompileError& e) {
          return op->emitError(e.what());
        }
      },
      [](DialectRegistry& registry) { registry.insert<mlir::kime::KimeDialect, mlir::func::FuncDialect>(); });
  // LLVM's own options (registered at load) hidden from --help; mlir-translate's, registered
  // inside mlirTranslateMain, stay.
  llvm::cl::HideUnrelatedOptions(kime::tools::toolOptions());
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "kime translation driver\n"));
}
