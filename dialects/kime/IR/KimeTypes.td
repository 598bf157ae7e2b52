//===- KimeTypes.td - !kime.tensor ---------------------------------------===//
#ifndef KIME_TYPES_TD
#define KIME_TYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "KimeBase.td"

def Kime_TensorType : TypeDef<Kime_Dialect, "KimeTensor"> {
  let mnemonic = "tensor";
  let summary = "A tensor whose sizes are static or symbolic (T, S, M, S+1).";
  let description = [{
    `!kime.tensor<[T, 256], f32>` is a matrix of one row per token;
    `!kime.tensor<[S+1], ui32>` the sequence starts; `!kime.tensor<[4096, 256], bf16>` a weight.
    Element types: f32 (activations), f16 and bf16 (weights only), ui32 and ui8 (indices).
    Once specialized to a bucket a symbol carries its bound: `[T:128, 256]` (T, at most 128).
  }];
  let parameters = (ins
    ArrayRefParameter<"::kime::shapes::Dim", "dimensions">:$dims,
    "::mlir::Type":$elementType
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The shape rules' view of this type.
    ::kime::shapes::Shape toShape() const;
    static KimeTensorType fromShape(::mlir::MLIRContext *ctx, const ::kime::shapes::Shape &s);
  }];
}

def Kime_Tensor : Type<CPred<"::llvm::isa<::mlir::kime::KimeTensorType>($_self)">, "kime tensor",
                       "::mlir::kime::KimeTensorType">;

#endif // KIME_TYPES_TD
