// Graph -> kime IR -> Graph gives the same Graph, and the IR verifies and prints back the same.
#include <gtest/gtest.h>

#include "TestData.h"
#include "import/GraphImport.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

TEST(ImportExport, RoundTripsEveryGoldenGraph) {
  for (const std::string& name : test::goldenCases()) {
    Graph g = test::goldenGraph(name);
    mlir::MLIRContext ctx;
    auto module = importGraph(ctx, g);
    ASSERT_TRUE(module) << name;
    EXPECT_TRUE(exportGraph(*module) == g) << name;

    // Printing and parsing the IR loses nothing either.
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    auto reparsed = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
    ASSERT_TRUE(reparsed) << name;
    EXPECT_TRUE(exportGraph(*reparsed) == g) << name;
  }
}

TEST(ImportExport, RefusesAModuleWithoutAGraph) {
  mlir::MLIRContext ctx;
  loadKimeDialects(ctx);
  auto module = mlir::parseSourceString<mlir::ModuleOp>("module {}", &ctx);
  ASSERT_TRUE(module);
  EXPECT_THROW(exportGraph(*module), CompileError);
}

}  // namespace
}  // namespace kime
