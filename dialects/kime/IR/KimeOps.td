//===- KimeOps.td - the ops of a kime Graph -------------------------------===//
//
// One op per op of the Graph format, same names, same operand and attribute names.
// Each verifier is one call to the shape rule of dialects/kime/Shapes/KimeShapes.h.
#ifndef KIME_OPS_TD
#define KIME_OPS_TD

include "KimeBase.td"
include "KimeTypes.td"
include "mlir/IR/EnumAttr.td"

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

def Kime_AddOp : Kime_Op<"add"> {
  let summary = "Elementwise sum of two f32 tensors of one shape.";
  let description = [{
    `result = lhs + rhs`.

    ```mlir
    %r = kime.add "embed"(%a, %b) : (!kime.tensor<[T, 256], f32>, !kime.tensor<[T, 256], f32>) -> !kime.tensor<[T, 256], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$lhs,
                       Kime_Tensor:$rhs);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_MulOp : Kime_Op<"mul"> {
  let summary = "Elementwise product of two f32 tensors of one shape.";
  let description = [{
    `result = lhs * rhs`.

    ```mlir
    %r = kime.mul "layers.0.mlp.act"(%g, %u) : (!kime.tensor<[T, 1024], f32>, !kime.tensor<[T, 1024], f32>) -> !kime.tensor<[T, 1024], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$lhs,
                       Kime_Tensor:$rhs);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_SiluOp : Kime_Op<"silu"> {
  let summary = "SiLU: x * sigmoid(x).";
  let description = [{
    `result = x / (1 + exp(-x))`.

    ```mlir
    %r = kime.silu "layers.0.mlp.gate.silu"(%g) : (!kime.tensor<[T, 1024], f32>) -> !kime.tensor<[T, 1024], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

def Kime_GeluOp : Kime_Op<"gelu"> {
  let summary = "Exact GELU (erf).";
  let description = [{
    `result = x / 2 * (1 + erf(x / sqrt(2)))`.

    ```mlir
    %r = kime.gelu "layers.0.mlp.gelu"(%h) : (!kime.tensor<[T, 1024], f32>) -> !kime.tensor<[T, 1024], f32>
    ```
  }];
  let arguments = (ins StrAttr:$node,
                       Kime_Tensor:$x);
  let results = (outs Kime_Tensor:$result);
  let assemblyFormat = "$node `(` operands `)` attr-dict `:` functional-type(operands, results)";
}

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
