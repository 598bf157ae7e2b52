//===- KimeBase.td - the kime dialect and its op base class -------------===//
#ifndef KIME_BASE_TD
#define KIME_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kime_Dialect : Dialect {
  let name = "kime";
  let cppNamespace = "::mlir::kime";
  let summary = "The kime graph: a packed variable-length transformer encoder, op by op.";
  let description = [{
    One op for each op of kime's Graph format (docs/graph-format.md). Values are
    `!kime.tensor` values whose sizes are static or one of the Graph's symbolic sizes:
    `T` tokens, `S` sequences, `M` markers (and `S+1` for the sequence starts). A Graph is a
    `func.func` whose arguments are the batch's arrays (`ids`, `cu`, `markers`, `mcu`, `qtype`)
    and whose results are `logits [M]` and `act [S, 2]`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

// Every kime op is side-effect free and carries the name of the Graph node it stands for.
class Kime_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kime_Dialect, mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

#endif // KIME_BASE_TD
