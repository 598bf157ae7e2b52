//===- KimeOps.td - the ops of a kime Graph -------------------------------===//
//
// One op per op of the Graph format, same names, same operand and attribute names.
// Each verifier is one call to the shape rule of core/include/kime/core/Shapes.h.
#ifndef KIME_OPS_TD
#define KIME_OPS_TD

include "KimeBase.td"
include "KimeTypes.td"
include "mlir/IR/EnumAttr.td"
include "KimeInterfaces.td"

def Kime_WeightOp : Kime_Op<"weight"> {
  let summary = "A weight of the checkpoint, by name.";
  let description = [{
    The value of the checkpoint tensor named `node`, f32, f16 or bf16, static sizes.

    ```mlir
    %r = kime.weight "embed.tok" : () -> !kime.tensor<[4096, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node attr-dict `:` functional-type(operands, results)";
}

def Kime_GatherRowsOp : Kime_Op<"gather_rows"> {
  let summary = "Rows of a table picked by an index vector (an embedding).";
  let description = [{
    `result[i] = table[index[i]]`. The result is f32 whatever the table's dtype.

    ```mlir
    %r = kime.gather_rows "embed.tok.rows"(%tok, %ids) : (!kime.tensor<[4096, 256], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$table,
                       Kime_Tensor:$index);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_ExpandSeqsOp : Kime_Op<"expand_seqs"> {
  let summary = "One row per sequence broadcast to each of its tokens.";
  let description = [{
    Token `t` of sequence `s` (`cu[s] <= t < cu[s+1]`) gets row `s` of `x`.

    ```mlir
    %r = kime.expand_seqs "embed.type.rows"(%t, %cu) : (!kime.tensor<[S, 256], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$cu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_TokenTypesOp : Kime_Op<"token_types"> {
  let summary = "The type of each token: the batch's per-token types, or its sequence's qtype.";
  let description = [{
    `result[t] = ttype[t]` where the batch gives a type per token (sentence pairs), else
    `qtype[s]` for the sequence `s` that holds token `t`. The runtime stages it.

    ```mlir
    %r = kime.token_types "types"(%cu) : (!kime.tensor<[S+1], ui32>) -> !kime.tensor<[T], ui8>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$cu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_PositionsOp : Kime_Op<"positions"> {
  let summary = "The position of each token within its own sequence.";
  let description = [{
    `result[t] = t - cu[s]` for the sequence `s` that holds token `t`.

    ```mlir
    %r = kime.positions "positions"(%cu) : (!kime.tensor<[S+1], ui32>) -> !kime.tensor<[T], ui32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$cu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

// The elementwise ops: each one function of kime/core/Eltwise.h (`getFn()`, through
// EltwiseOpInterface, which also verifies them), on f32 tensors of one shape.
class Kime_EltwiseOp<string mnemonic, string fn, list<Trait> traits = []>
    : Kime_Op<mnemonic, !listconcat(traits, [Kime_EltwiseOpInterface])> {
  let hasVerifier = 0;
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    static constexpr ::kime::eltwise::Fn kFn = ::kime::eltwise::Fn::}] # fn # [{;
    ::kime::eltwise::Fn getFn() { return kFn; }
  }];
}

class Kime_BinaryOp<string mnemonic, string formula> : Kime_EltwiseOp<mnemonic, mnemonic> {
  let summary = "Elementwise `" # formula # "` of two f32 tensors of one shape.";
  let description = [{
    `result = }] # formula # [{`.

    ```mlir
    %r = kime.}] # mnemonic # [{ "n"(%a, %b) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[T, 256], f32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node, Kime_Tensor:$lhs, Kime_Tensor:$rhs);
}

class Kime_UnaryOp<string mnemonic, string what, string formula> : Kime_EltwiseOp<mnemonic, mnemonic> {
  let summary = what # " of each element.";
  let description = [{
    `result = }] # formula # [{`.

    ```mlir
    %r = kime.}] # mnemonic # [{ "n"(%x) : (!kime.tensor<[T, 1024], f32>) -> !kime.tensor<[T, 1024], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node, Kime_Tensor:$x);
}

def Kime_AddOp : Kime_BinaryOp<"add", "lhs + rhs">;
def Kime_SubOp : Kime_BinaryOp<"sub", "lhs - rhs">;
def Kime_MulOp : Kime_BinaryOp<"mul", "lhs * rhs">;
def Kime_SiluOp : Kime_UnaryOp<"silu", "SiLU", "x / (1 + exp(-x))">;
def Kime_GeluOp : Kime_UnaryOp<"gelu", "Exact GELU (erf)", "x / 2 * (1 + erf(x / sqrt(2)))">;
def Kime_GeluTanhOp : Kime_UnaryOp<"gelu_tanh", "GELU, tanh approximation",
                                   "x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))">;
def Kime_ReluOp : Kime_UnaryOp<"relu", "ReLU", "max(x, 0)">;
def Kime_TanhOp : Kime_UnaryOp<"tanh", "tanh", "tanh(x)">;
def Kime_SigmoidOp : Kime_UnaryOp<"sigmoid", "The logistic sigmoid", "1 / (1 + exp(-x))">;

def Kime_RmsNormOp : Kime_Op<"rms_norm"> {
  let summary = "RMS norm of each row, times a gain.";
  let description = [{
    `result = x / sqrt(mean(x^2) + eps) * weight`, row by row.

    ```mlir
    %r = kime.rms_norm "layers.0.attn_norm"(%x, %g) {eps = 1.0e-06 : f64} : (!kime.tensor<[T, 256], f32>, !kime.tensor<[256], f32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$weight,
                       F64Attr:$eps);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_LayerNormOp : Kime_Op<"layer_norm"> {
  let summary = "Layer norm of each row, with gain and bias.";
  let description = [{
    `result = (x - mean) / sqrt(var + eps) * weight + bias`, row by row (population variance).

    ```mlir
    %r = kime.layer_norm "final_norm"(%x, %g, %b) {eps = 1.0e-12 : f64} : (!kime.tensor<[T, 768], f32>, !kime.tensor<[768], f32>, !kime.tensor<[768], f32>) -> !kime.tensor<[T, 768], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$weight,
                       Kime_Tensor:$bias,
                       F64Attr:$eps);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_LinearOp : Kime_Op<"linear"> {
  let summary = "x W^T, plus a bias when given.";
  let description = [{
    `weight` is `[out, in]` as stored in the checkpoint; `result = x weight^T (+ bias)`.

    ```mlir
    %r = kime.linear "layers.0.attn.q"(%a, %w) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[256, 256], f32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$weight,
                       Optional<Kime_Tensor>:$bias);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_RopeOp : Kime_Op<"rope"> {
  let summary = "Rotary position embedding, rotate-half pairing, per head.";
  let description = [{
    Element `i < hd/2` of a head pairs with `i + hd/2`; angle `pos * theta^(-2i/hd)`.

    ```mlir
    %r = kime.rope "layers.0.attn.q.rope"(%q, %pos) {heads = 4 : i64, theta = 1.0e+04 : f64} : (!kime.tensor<[T, 256], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$pos,
                       I64Attr:$heads,
                       F64Attr:$theta);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_AttentionOp : Kime_Op<"attention"> {
  let summary = "Bidirectional attention inside each sequence, with grouped kv heads.";
  let description = [{
    A token attends to every token of its own sequence and no other; query head `h` reads kv head `h / (heads / kv_heads)`; scores are scaled by `scale`.
    Without `qseq` the query rows are the tokens; with it (kime-prune-rows' output rows) query
    row `i` attends to the tokens of sequence `qseq[i]`.

    ```mlir
    %r = kime.attention "layers.0.attn"(%q, %k, %v, %cu) {heads = 4 : i64, kv_heads = 2 : i64, scale = 1.250000e-01 : f64} : (!kime.tensor<[T, 256], f32>, !kime.tensor<[T, 128], f32>, !kime.tensor<[T, 128], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$q,
                       Kime_Tensor:$k,
                       Kime_Tensor:$v,
                       Kime_Tensor:$cu,
                       I64Attr:$heads,
                       I64Attr:$kv_heads,
                       F64Attr:$scale,
                       Optional<Kime_Tensor>:$qseq);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_GatherMarkersOp : Kime_Op<"gather_markers"> {
  let summary = "The rows of the marked tokens, markers counted within their sequence.";
  let description = [{
    Marker `j` of sequence `s` gives row `cu[s] + markers[j]` of `x`; when `x` has the output
    rows `R` (see `output_rows`), row `S + j`.

    ```mlir
    %r = kime.gather_markers "head.marker.rows"(%f, %cu, %m, %mcu) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[M], ui32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[M, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$cu,
                       Kime_Tensor:$markers,
                       Kime_Tensor:$mcu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_FirstRowsOp : Kime_Op<"first_rows"> {
  let summary = "The first row of each sequence (zeros for an empty one).";
  let description = [{
    Row `s` is `x[cu[s]]`, or zeros when sequence `s` is empty; when `x` has the output rows `R`
    (see `output_rows`), row `s` (zeros when empty).

    ```mlir
    %r = kime.first_rows "head.act.rows"(%f, %cu) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$cu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_MeanSeqsOp : Kime_Op<"mean_seqs"> {
  let summary = "The mean of each sequence's token rows (zeros for an empty one).";
  let description = [{
    Row `s` is the mean of `x[t]` over the tokens `cu[s] <= t < cu[s+1]`, or zeros when
    sequence `s` is empty: masked mean pooling.

    ```mlir
    %r = kime.mean_seqs "pool"(%f, %cu) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$cu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_SqueezeOp : Kime_Op<"squeeze"> {
  let summary = "Drops a trailing dimension of size 1.";
  let description = [{
    `[N, 1]` becomes `[N]`.

    ```mlir
    %r = kime.squeeze "head.marker.logits"(%l) : (!kime.tensor<[M, 1], f32>) -> !kime.tensor<[M], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}


//===----------------------------------------------------------------------===//
// Made by kime-prune-rows: the last layer computed only for the rows the heads read
//===----------------------------------------------------------------------===//

def Kime_SequenceIdsOp : Kime_Op<"sequence_ids"> {
  let summary = "The sequence of each token.";
  let description = [{
    `result[t] = s` for the sequence `s` that holds token `t`.

    ```mlir
    %r = kime.sequence_ids "layers.3.attn.qseq.tokens"(%cu) : (!kime.tensor<[S+1], ui32>) -> !kime.tensor<[T], ui32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$cu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_OutputRowsOp : Kime_Op<"output_rows"> {
  let summary = "The rows the heads read: each sequence's first token, then each marked token.";
  let description = [{
    `R = S + M` rows: row `s` is `x[cu[s]]` (zeros for an empty sequence), row `S + j` is
    `x[cu[s] + markers[j]]` for marker `j` of sequence `s`. `x` is `[T, D]` f32 or `[T]` u32.
    `first_rows` then reads rows `[0, S)` and `gather_markers` rows `[S, S + M)`.

    ```mlir
    %r = kime.output_rows "layers.3.x.out"(%x, %cu, %m, %mcu) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[M], ui32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[R, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x,
                       Kime_Tensor:$cu,
                       Kime_Tensor:$markers,
                       Kime_Tensor:$mcu);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

include "KimeKernel.td"

#endif // KIME_OPS_TD
