//===- KimeAttrs.td - #kime.program: an elementwise kernel's program -----===//
#ifndef KIME_ATTRS_TD
#define KIME_ATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "KimeBase.td"

def Kime_ProgramAttr : AttrDef<Kime_Dialect, "Program"> {
  let mnemonic = "program";
  let summary = "A postfix program over an elementwise kernel's inputs (kime/core/Eltwise.h).";
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

// A kernel's choice: a value of one of the enums of kime/core/KernelChoices.h, the one place
// they are defined (the KernelSpec, the options and the reference read the same enums). The
// attribute is written `#kime.norm_kind<rms>` on its own, and by its name alone (`rms`) in
// a kernel op's format (the `choice` directive); `none` is never written: a kernel without the
// choice has no attribute.
class Kime_ChoiceParameter<string cppEnum> : AttrParameter<cppEnum, ""> {
  let parser = "::mlir::kime::parseChoiceKeyword<" # cppEnum # ">($_parser)";
  let printer = "$_printer << ::kime::nameOf($_self)";
}

class Kime_ChoiceAttr<string name, string attrMnemonic, string cppEnum, string text>
    : AttrDef<Kime_Dialect, name> {
  let mnemonic = attrMnemonic;
  let summary = text;
  let parameters = (ins Kime_ChoiceParameter<cppEnum>:$value);
  let assemblyFormat = "`<` $value `>`";
  let returnType = cppEnum;
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall = "::mlir::kime::" # name # "Attr::get($_builder.getContext(), $0)";
}

def Kime_NormKindAttr : Kime_ChoiceAttr<"NormKind", "norm_kind", "::kime::NormKind",
    "the norm of a norm or head kernel's input rows (rms, layer)">;
def Kime_ActivationAttr : Kime_ChoiceAttr<"Activation", "activation", "::kime::Activation",
    "a linear kernel's activation (gelu, swiglu)">;
def Kime_HeadRowsAttr : Kime_ChoiceAttr<"HeadRows", "head_rows", "::kime::HeadRows",
    "the rows a head kernel reads (markers, first)">;
def Kime_GatherKindAttr : Kime_ChoiceAttr<"GatherKind", "gather_kind", "::kime::GatherKind",
    "the rows a gather kernel takes (rows, seqs, first, markers)">;
// A linear's CPU arithmetic (f32: the attribute is absent). On an embed or gather kernel, int8 is
// its token table's storage: int8 rows, one scale a row, read back to f32 as each row is gathered.
def Kime_ArithmeticAttr : Kime_ChoiceAttr<"Arithmetic", "arithmetic", "::kime::Arithmetic",
    "a kernel's CPU arithmetic (a linear's, or an int8 token table's: f32, bf16, int8)">;

#endif // KIME_ATTRS_TD
