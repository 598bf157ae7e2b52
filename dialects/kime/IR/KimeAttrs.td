//===- KimeAttrs.td - #kime.program: an elementwise kernel's program -----===//
#ifndef KIME_ATTRS_TD
#define KIME_ATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "KimeBase.td"

def Kime_ProgramAttr : AttrDef<Kime_Dialect, "Program"> {
  let mnemonic = "program";
  let summary = "A postfix program over an elementwise kernel's inputs (Shapes/Eltwise.h).";
  let description = [{
    Each step pushes one of the kernel's inputs (`x`, `in1`, `in2`, `in3`) or applies an
    elementwise function of the Graph (`add`, `sub`, `mul`, `silu`, `gelu`, `gelu_tanh`, `relu`,
    `tanh`, `sigmoid`) to the values on top; one value is left. An eltwise kernel computes it
    per element; a linear's epilogue computes it over the output tile, `x` being the linear's
    value after bias, activation, RoPE and residual.

    ```mlir
    #kime.program<x in1 mul silu>   // silu(x * in1)
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::kime::eltwise::Step", "the steps">:$steps);
  let builders = [
    AttrBuilder<(ins "const ::kime::eltwise::Program&":$program), [{
      return $_get($_ctxt, ::llvm::ArrayRef<::kime::eltwise::Step>(program.steps()));
    }]>,
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The steps as the plain C++ program that the back ends evaluate.
    ::kime::eltwise::Program getProgram() const;
  }];
}

#endif // KIME_ATTRS_TD
