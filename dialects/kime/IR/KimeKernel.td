//===- KimeKernel.td - kime.kernel: what kime-fuse makes of the Graph ops -===//
//
// A kernel's class, its choices (norm, activation, RoPE, attention heads, rows, arithmetic) as
// typed attributes and its operands by role, each a named optional operand: what codegen
// compiles and the plan calls. The verifier checks each class's roles and choices.
#ifndef KIME_KERNEL_TD
#define KIME_KERNEL_TD

include "KimeBase.td"
include "KimeTypes.td"
include "mlir/IR/EnumAttr.td"
include "KimeInterfaces.td"
include "KimeAttrs.td"

// The kernel classes, numbered as plan.h's kime_kernel_class (KimeDialect.cpp checks).
def Kime_KernelClass : I32EnumAttr<"KernelClass", "a kernel class (plan.h's kime_kernel_class)", [
    I32EnumAttrCase<"embed", 0>, I32EnumAttrCase<"norm", 1>, I32EnumAttrCase<"linear", 2>,
    I32EnumAttrCase<"attention", 3>, I32EnumAttrCase<"head", 4>, I32EnumAttrCase<"select", 5>,
    I32EnumAttrCase<"gather", 6>, I32EnumAttrCase<"eltwise", 7>, I32EnumAttrCase<"rope", 8>,
    I32EnumAttrCase<"pool", 9>]> {
  let cppNamespace = "::mlir::kime";
}

// A kernel's choices (norm, activation, head rows, gather, arithmetic) are KimeAttrs.td's
// attributes over the enums of kime/core/KernelChoices.h.

// The roles of a kernel's operands, in the order of kime.kernel's operands (a unit test checks
// that each role reaches the operand of its name). Where a role is also an argument slot of
// plan.h, it has the slot's name.
def Kime_KernelRole : I32EnumAttr<"KernelRole", "the role of a kernel's operand", [
    I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"q", 1>, I32EnumAttrCase<"k", 2>,
    I32EnumAttrCase<"v", 3>, I32EnumAttrCase<"ids", 4>, I32EnumAttrCase<"qtype", 5>,
    I32EnumAttrCase<"cu", 6>, I32EnumAttrCase<"markers", 7>, I32EnumAttrCase<"mcu", 8>,
    I32EnumAttrCase<"tok_table", 9>, I32EnumAttrCase<"type_table", 10>,
    I32EnumAttrCase<"pos", 11>, I32EnumAttrCase<"norm_weight", 12>,
    I32EnumAttrCase<"norm_bias", 13>, I32EnumAttrCase<"weight", 14>, I32EnumAttrCase<"bias", 15>,
    I32EnumAttrCase<"weight_up", 16>, I32EnumAttrCase<"bias_up", 17>,
    I32EnumAttrCase<"residual", 18>, I32EnumAttrCase<"index", 19>, I32EnumAttrCase<"in1", 20>,
    I32EnumAttrCase<"in2", 21>, I32EnumAttrCase<"in3", 22>]> {
  let cppNamespace = "::mlir::kime";
  let genSpecializedAttr = 0;
}

def Kime_KernelOp : Kime_Op<"kernel", [AttrSizedOperandSegments,
                                      DeclareOpInterfaceMethods<Kime_KernelOpInterface>]> {
  let summary = "A fused kernel of one class: what codegen compiles and the plan calls.";
  let description = [{
    `kind` is the kernel class (`embed`, `norm`, `linear`, `attention`, `head`, `select`: the
    output rows of kime-prune-rows; the generic `gather`, `eltwise`, `rope` and `pool`). Each operand is
    named by its role; a class takes some roles and may take others (the verifier says which).
    The class's choices are typed: `norm(rms|layer, eps)` for the input rows of a norm or head
    kernel, `act(gelu|swiglu)` and `arith(bf16)` for a linear, `rope(heads, theta)` for a linear
    or a rope kernel, `heads(heads, kv_heads, scale)` for attention, `rows(markers|first)` for a
    head, `gather(rows|seqs|first|markers)` for a gather, and for an eltwise kernel its
    `program`: a `#kime.program` (KimeAttrs.td), postfix over its inputs `x`, `in1` to `in3`
    (`program<x silu in1 mul>` is silu(x) * in1). A linear's `program` is its epilogue: its `x` is
    its value after bias, activation, RoPE and residual, `in1` to `in3` its other operands.
    After kime-plan-memory, `offset` is the result's byte offset in the bucket's arena.

    ```mlir
    %r = kime.kernel linear "layers.0.mlp.residual" x(%h : !kime.tensor<[T:128, 1024], f32>)
           weight(%w : !kime.tensor<[256, 1024], f32>)
           residual(%x : !kime.tensor<[T:128, 256], f32>) : !kime.tensor<[T:128, 256], f32>
    ```
  }];
  let arguments = (ins Kime_KernelClass:$kind, StrAttr:$node,
                       Optional<Kime_Tensor>:$x, Optional<Kime_Tensor>:$q,
                       Optional<Kime_Tensor>:$k, Optional<Kime_Tensor>:$v,
                       Optional<Kime_Tensor>:$ids, Optional<Kime_Tensor>:$qtype,
                       Optional<Kime_Tensor>:$cu, Optional<Kime_Tensor>:$markers,
                       Optional<Kime_Tensor>:$mcu, Optional<Kime_Tensor>:$tok_table,
                       Optional<Kime_Tensor>:$type_table, Optional<Kime_Tensor>:$pos,
                       Optional<Kime_Tensor>:$norm_weight, Optional<Kime_Tensor>:$norm_bias,
                       Optional<Kime_Tensor>:$weight, Optional<Kime_Tensor>:$bias,
                       Optional<Kime_Tensor>:$weight_up, Optional<Kime_Tensor>:$bias_up,
                       Optional<Kime_Tensor>:$residual, Optional<Kime_Tensor>:$index,
                       Optional<Kime_Tensor>:$in1, Optional<Kime_Tensor>:$in2,
                       Optional<Kime_Tensor>:$in3,
                       OptionalAttr<Kime_NormKindAttr>:$norm, OptionalAttr<F64Attr>:$eps,
                       OptionalAttr<Kime_ActivationAttr>:$act,
                       OptionalAttr<I64Attr>:$rope_heads, OptionalAttr<F64Attr>:$rope_theta,
                       OptionalAttr<I64Attr>:$heads, OptionalAttr<I64Attr>:$kv_heads,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<Kime_HeadRowsAttr>:$rows,
                       OptionalAttr<Kime_ArithmeticAttr>:$arith,
                       OptionalAttr<Kime_GatherKindAttr>:$gather,
                       OptionalAttr<Kime_ProgramAttr>:$program,
                       OptionalAttr<I64Attr>:$offset);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = [{
    $kind $node
    (`x` `(` $x^ `:` type($x) `)`)?
    (`q` `(` $q^ `:` type($q) `)`)?
    (`k` `(` $k^ `:` type($k) `)`)?
    (`v` `(` $v^ `:` type($v) `)`)?
    (`ids` `(` $ids^ `:` type($ids) `)`)?
    (`qtype` `(` $qtype^ `:` type($qtype) `)`)?
    (`cu` `(` $cu^ `:` type($cu) `)`)?
    (`markers` `(` $markers^ `:` type($markers) `)`)?
    (`mcu` `(` $mcu^ `:` type($mcu) `)`)?
    (`tok_table` `(` $tok_table^ `:` type($tok_table) `)`)?
    (`type_table` `(` $type_table^ `:` type($type_table) `)`)?
    (`pos` `(` $pos^ `:` type($pos) `)`)?
    (`norm_weight` `(` $norm_weight^ `:` type($norm_weight) `)`)?
    (`norm_bias` `(` $norm_bias^ `:` type($norm_bias) `)`)?
    (`weight` `(` $weight^ `:` type($weight) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`weight_up` `(` $weight_up^ `:` type($weight_up) `)`)?
    (`bias_up` `(` $bias_up^ `:` type($bias_up) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`index` `(` $index^ `:` type($index) `)`)?
    (`in1` `(` $in1^ `:` type($in1) `)`)?
    (`in2` `(` $in2^ `:` type($in2) `)`)?
    (`in3` `(` $in3^ `:` type($in3) `)`)?
    (`norm` `(` custom<Choice>($norm)^ `,` $eps `)`)?
    (`act` `(` custom<Choice>($act)^ `)`)?
    (`rope` `(` $rope_heads^ `,` $rope_theta `)`)?
    (`heads` `(` $heads^ `,` $kv_heads `,` $scale `)`)?
    (`rows` `(` custom<Choice>($rows)^ `)`)?
    (`arith` `(` custom<Choice>($arith)^ `)`)?
    (`gather` `(` custom<Choice>($gather)^ `)`)?
    (`program` $program^)?
    attr-dict `:` qualified(type($result))
  }];
  let builders = [
    // `byRole` holds kKernelRoleCount values, null where the kernel has no such operand; the
    // choices are set afterwards with the attribute setters.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::kime::KernelClass":$kind,
                   "::llvm::StringRef":$node, "::llvm::ArrayRef<::mlir::Value>":$byRole)>,
  ];
}

#endif // KIME_KERNEL_TD
