// Graph <-> kime IR. The importer builds one func.func per Graph; the exporter reads it back, so
// that import followed by export gives the same Graph.
#ifndef KIME_IMPORT_GRAPHIMPORT_H
#define KIME_IMPORT_GRAPHIMPORT_H

#include "graph/Graph.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kime {

// Registers the dialects the kime IR uses (kime, func) in `ctx`.
void loadKimeDialects(mlir::MLIRContext& ctx);

// Builds the module of a checked Graph. Node names become each op's `node` attribute; the graph
// name becomes the function's symbol; `kime.vocab` and `kime.types` ride on the function.
mlir::OwningOpRef<mlir::ModuleOp> importGraph(mlir::MLIRContext& ctx, const Graph& g);

// Reads the Graph back out of a module made by importGraph (or written by hand in that form).
// Throws CompileError on a module that is not one Graph function.
Graph exportGraph(mlir::ModuleOp module);

}  // namespace kime

#endif  // KIME_IMPORT_GRAPHIMPORT_H
