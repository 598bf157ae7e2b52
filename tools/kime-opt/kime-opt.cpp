// kime-opt: parses, verifies, transforms and prints kime IR; what the lit tests drive.
#include "common/ToolOptions.h"
#include "kime/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char** argv) {
  // LLVM's own options (registered at load) hidden from --help; MlirOptMain's and the passes'
  // options, registered inside it, stay, as in mlir-opt.
  llvm::cl::HideUnrelatedOptions(kime::tools::toolOptions());
  mlir::kime::registerKimePasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::kime::KimeDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "kime optimizer driver\n", registry));
}
