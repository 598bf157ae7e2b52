//===- KimeKernel.td - the kernel ops: what kime-fuse makes of Graph ops -===//
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
  let genSpecializedAttr = 0;  // the class is the op (each op's kKernelClass), no attribute
}

// A kernel's choices (norm, activation, head rows, gather, arithmetic) are KimeAttrs.td's
// attributes over the enums of kime/core/KernelChoices.h.

// The roles of a kernel's operands; each kernel op's operands are in this order (a unit test
// checks that each role reaches the operand of its name). Where a role is also an argument slot of
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

// One op per kernel class, each declaring exactly the operands (named by their roles, in
// KernelRole's order) and the choices of its class: what codegen compiles and the plan calls.
// `operands` are the class's roles; `choices` its attributes; after kime-plan-memory, `offset`
// is the result's byte offset in the bucket's arena. Each op is a KernelOpInterface: its class,
// its operands by role (`kRoles`, made from `operands`) and its offset.
class Kime_KernelOpBase<string cls, dag operands, dag choices, list<Trait> traits = [],
                        bit choicesToCheck = 1>
    : Kime_Op<cls # "_kernel", traits # [Kime_KernelOpInterface]> {
  let arguments = !con((ins StrAttr:$node), operands, choices, (ins OptionalAttr<I64Attr>:$offset));
  let results = (outs Kime_Tensor:$result);
  // A class whose choices all stand alone has nothing beyond ODS's checks to verify.
  let hasVerifier = choicesToCheck;
  let builders = [
    // `byRole` holds kKernelRoleCount values, null where the kernel has no such operand; the
    // choices are set afterwards (setKernelChoice, or the attribute setters).
    OpBuilder<(ins "::mlir::Type":$result, "::llvm::StringRef":$node,
                   "::llvm::ArrayRef<::mlir::Value>":$byRole), [{
      buildKernel<Properties, hasTrait<::mlir::OpTrait::AttrSizedOperandSegments>()>(
          $_builder, $_state, result, node, byRole, kRoles);
    }]>,
  ];
  let extraClassDeclaration = [{
    static constexpr ::mlir::kime::KernelClass kKernelClass = ::mlir::kime::KernelClass::}] # cls # [{;
    static constexpr ::mlir::kime::KernelRole kRoles[] = {}] #
      !interleave(!foreach(i, !range(!size(operands)),
                           "::mlir::kime::KernelRole::" # !getdagname(operands, i)), ", ") # [{};
  }];
}

def Kime_EmbedKernelOp : Kime_KernelOpBase<"embed",
    (ins Kime_Tensor:$ids, Optional<Kime_Tensor>:$qtype, Optional<Kime_Tensor>:$cu,
         Kime_Tensor:$tok_table, Optional<Kime_Tensor>:$type_table, Optional<Kime_Tensor>:$pos),
    (ins OptionalAttr<Kime_ArithmeticAttr>:$arith), [AttrSizedOperandSegments]> {
  let summary = "Each token's row of the token table, plus its sequence's type row and position row.";
  let description = [{
    qtype and cu come with the type table (each token's sequence's type); `pos` is a learned
    position table. `arith(int8)`: the token table is stored as int8 rows, one scale a row.
  }];
  let assemblyFormat = [{
    $node `ids` `(` $ids `:` qualified(type($ids)) `)`
    (`qtype` `(` $qtype^ `:` qualified(type($qtype)) `)`)?
    (`cu` `(` $cu^ `:` qualified(type($cu)) `)`)?
    `tok_table` `(` $tok_table `:` qualified(type($tok_table)) `)`
    (`type_table` `(` $type_table^ `:` qualified(type($type_table)) `)`)?
    (`pos` `(` $pos^ `:` qualified(type($pos)) `)`)?
    (`arith` `(` custom<Choice>($arith)^ `)`)?
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_NormKernelOp : Kime_KernelOpBase<"norm",
    (ins Kime_Tensor:$x, Kime_Tensor:$norm_weight, Optional<Kime_Tensor>:$norm_bias),
    (ins Kime_NormKindAttr:$norm, F64Attr:$eps)> {
  let summary = "An RMS or layer norm of each row (norm_bias with a layer norm).";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)`
    `norm_weight` `(` $norm_weight `:` qualified(type($norm_weight)) `)`
    (`norm_bias` `(` $norm_bias^ `:` qualified(type($norm_bias)) `)`)?
    `norm` `(` custom<Choice>($norm) `,` $eps `)`
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_LinearKernelOp : Kime_KernelOpBase<"linear",
    (ins Kime_Tensor:$x, Optional<Kime_Tensor>:$cu, Kime_Tensor:$weight, Optional<Kime_Tensor>:$bias,
         Optional<Kime_Tensor>:$weight_up, Optional<Kime_Tensor>:$bias_up,
         Optional<Kime_Tensor>:$residual, Optional<Kime_Tensor>:$in1, Optional<Kime_Tensor>:$in2,
         Optional<Kime_Tensor>:$in3),
    (ins OptionalAttr<Kime_ActivationAttr>:$act, OptionalAttr<I64Attr>:$rope_heads,
         OptionalAttr<F64Attr>:$rope_theta, OptionalAttr<Kime_ArithmeticAttr>:$arith,
         OptionalAttr<Kime_ProgramAttr>:$program), [AttrSizedOperandSegments]> {
  let summary = "x times the weight (transposed), with its epilogue: bias, activation, RoPE, residual, program.";
  let description = [{
    `act(swiglu)` takes `weight_up` (and `bias_up` beside `bias`); `rope(heads, theta)` rotates
    each head by its token's position (from `cu`); `residual` is added; `program` is the
    epilogue, its `x` the value after all of these, `in1` to `in3` its other operands.
    `arith(bf16|int8)` is the linear's CPU arithmetic.

    ```mlir
    %r = kime.linear_kernel "layers.0.mlp.residual" x(%h : !kime.tensor<[T:128, 1024], f32>)
           weight(%w : !kime.tensor<[256, 1024], f32>)
           residual(%x : !kime.tensor<[T:128, 256], f32>) : !kime.tensor<[T:128, 256], f32>
    ```
  }];
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)`
    (`cu` `(` $cu^ `:` qualified(type($cu)) `)`)?
    `weight` `(` $weight `:` qualified(type($weight)) `)`
    (`bias` `(` $bias^ `:` qualified(type($bias)) `)`)?
    (`weight_up` `(` $weight_up^ `:` qualified(type($weight_up)) `)`)?
    (`bias_up` `(` $bias_up^ `:` qualified(type($bias_up)) `)`)?
    (`residual` `(` $residual^ `:` qualified(type($residual)) `)`)?
    (`in1` `(` $in1^ `:` qualified(type($in1)) `)`)?
    (`in2` `(` $in2^ `:` qualified(type($in2)) `)`)?
    (`in3` `(` $in3^ `:` qualified(type($in3)) `)`)?
    (`act` `(` custom<Choice>($act)^ `)`)?
    (`rope` `(` $rope_heads^ `,` $rope_theta `)`)?
    (`arith` `(` custom<Choice>($arith)^ `)`)?
    (`program` $program^)?
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_AttentionKernelOp : Kime_KernelOpBase<"attention",
    (ins Kime_Tensor:$q, Kime_Tensor:$k, Kime_Tensor:$v, Kime_Tensor:$cu),
    (ins I64Attr:$heads, I64Attr:$kv_heads, F64Attr:$scale), [], 0> {
  let summary = "Each token's attention over its own sequence's keys (kv_heads shared by heads / kv_heads).";
  let assemblyFormat = [{
    $node `q` `(` $q `:` qualified(type($q)) `)` `k` `(` $k `:` qualified(type($k)) `)` `v` `(` $v `:` qualified(type($v)) `)`
    `cu` `(` $cu `:` qualified(type($cu)) `)`
    `heads` `(` $heads `,` $kv_heads `,` $scale `)`
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_HeadKernelOp : Kime_KernelOpBase<"head",
    (ins Kime_Tensor:$x, Kime_Tensor:$cu, Optional<Kime_Tensor>:$markers, Optional<Kime_Tensor>:$mcu,
         Optional<Kime_Tensor>:$norm_weight, Optional<Kime_Tensor>:$norm_bias, Kime_Tensor:$weight,
         Optional<Kime_Tensor>:$bias),
    (ins OptionalAttr<Kime_NormKindAttr>:$norm, OptionalAttr<F64Attr>:$eps, Kime_HeadRowsAttr:$rows),
    [AttrSizedOperandSegments]> {
  let summary = "A head: the rows it reads (each marked token, or each sequence's first), normed, times the weight.";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)` `cu` `(` $cu `:` qualified(type($cu)) `)`
    (`markers` `(` $markers^ `:` qualified(type($markers)) `)`)?
    (`mcu` `(` $mcu^ `:` qualified(type($mcu)) `)`)?
    (`norm_weight` `(` $norm_weight^ `:` qualified(type($norm_weight)) `)`)?
    (`norm_bias` `(` $norm_bias^ `:` qualified(type($norm_bias)) `)`)?
    `weight` `(` $weight `:` qualified(type($weight)) `)`
    (`bias` `(` $bias^ `:` qualified(type($bias)) `)`)?
    (`norm` `(` custom<Choice>($norm)^ `,` $eps `)`)?
    `rows` `(` custom<Choice>($rows) `)`
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_SelectKernelOp : Kime_KernelOpBase<"select",
    (ins Kime_Tensor:$x, Kime_Tensor:$cu, Kime_Tensor:$markers, Kime_Tensor:$mcu), (ins), [], 0> {
  let summary = "kime-prune-rows' output rows: each sequence's first token, then each marked token.";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)` `cu` `(` $cu `:` qualified(type($cu)) `)`
    `markers` `(` $markers `:` qualified(type($markers)) `)` `mcu` `(` $mcu `:` qualified(type($mcu)) `)`
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_GatherKernelOp : Kime_KernelOpBase<"gather",
    (ins Kime_Tensor:$x, Optional<Kime_Tensor>:$cu, Optional<Kime_Tensor>:$markers,
         Optional<Kime_Tensor>:$mcu, Optional<Kime_Tensor>:$index),
    (ins Kime_GatherKindAttr:$gather, OptionalAttr<Kime_ArithmeticAttr>:$arith),
    [AttrSizedOperandSegments]> {
  let summary = "Rows of x: by an index (gather(rows)), each token's sequence (seqs), each sequence's first token, each marked token.";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)`
    (`cu` `(` $cu^ `:` qualified(type($cu)) `)`)?
    (`markers` `(` $markers^ `:` qualified(type($markers)) `)`)?
    (`mcu` `(` $mcu^ `:` qualified(type($mcu)) `)`)?
    (`index` `(` $index^ `:` qualified(type($index)) `)`)?
    (`arith` `(` custom<Choice>($arith)^ `)`)?
    `gather` `(` custom<Choice>($gather) `)`
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_EltwiseKernelOp : Kime_KernelOpBase<"eltwise",
    (ins Kime_Tensor:$x, Optional<Kime_Tensor>:$in1, Optional<Kime_Tensor>:$in2,
         Optional<Kime_Tensor>:$in3),
    (ins Kime_ProgramAttr:$program), [AttrSizedOperandSegments]> {
  let summary = "An elementwise program over x and in1 to in3 (`program<x silu in1 mul>` is silu(x) * in1).";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)`
    (`in1` `(` $in1^ `:` qualified(type($in1)) `)`)?
    (`in2` `(` $in2^ `:` qualified(type($in2)) `)`)?
    (`in3` `(` $in3^ `:` qualified(type($in3)) `)`)?
    `program` $program
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_RopeKernelOp : Kime_KernelOpBase<"rope",
    (ins Kime_Tensor:$x, Kime_Tensor:$index), (ins I64Attr:$rope_heads, F64Attr:$rope_theta), [], 0> {
  let summary = "Rotates each head of each row by its position (index).";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)` `index` `(` $index `:` qualified(type($index)) `)`
    `rope` `(` $rope_heads `,` $rope_theta `)`
    attr-dict `:` qualified(type($result))
  }];
}

def Kime_PoolKernelOp : Kime_KernelOpBase<"pool", (ins Kime_Tensor:$x, Kime_Tensor:$cu), (ins), [], 0> {
  let summary = "The mean of each sequence's rows (zeros for an empty one).";
  let assemblyFormat = [{
    $node `x` `(` $x `:` qualified(type($x)) `)` `cu` `(` $cu `:` qualified(type($cu)) `)`
    attr-dict `:` qualified(type($result))
  }];
}

#endif // KIME_KERNEL_TD
