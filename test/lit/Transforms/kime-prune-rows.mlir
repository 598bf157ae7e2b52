// kime-prune-rows retypes what only the heads read to the output rows R = S + M (each
// sequence's first token, then each marked token): in this one-layer encoder, everything after
// the attention's keys and values. The embedding (the residual) and the attention norm (read by
// the keys and values too) are picked by output_rows; RoPE reads the picked positions; the
// attention keeps T rows of keys and values and gets qseq.
// The input is kime-fuse.mlir's (tiny.json, tokens=64, seqs=4, markers=16: R is at most 20).
// Where it cannot prove the output rows right or worth it, the pass holds back, one case each
// below: as many output rows as tokens, no attention, RoPE by token ids, no marker gather.
// RUN: kime-opt %s --split-input-file --kime-prune-rows | FileCheck %s
// RUN: kime-opt %s --split-input-file --kime-prune-rows --kime-fuse | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @tiny
// CHECK: %[[EMB:.+]] = kime.add "embed"
// CHECK-NEXT: %[[NORM:.+]] = kime.rms_norm "layers.0.attn_norm"(%[[EMB]], {{.*}}) -> !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[NORMR:.+]] = kime.output_rows "layers.0.attn_norm.out"(%[[NORM]], %arg1, %arg2, %arg3) : {{.*}} -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: %[[Q:.+]] = kime.linear "layers.0.attn.q"(%[[NORMR]], {{.*}}) -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: %[[K:.+]] = kime.linear "layers.0.attn.k"(%[[NORM]], {{.*}}) -> !kime.tensor<[T:64, 4], f32>
// CHECK-NEXT: %[[V:.+]] = kime.linear "layers.0.attn.v"(%[[NORM]], {{.*}}) -> !kime.tensor<[T:64, 4], f32>
// CHECK-NEXT: %[[POS:.+]] = kime.output_rows "positions.out"({{.*}}) : {{.*}} -> !kime.tensor<[R:20], ui32>
// CHECK-NEXT: %[[QR:.+]] = kime.rope "layers.0.attn.q.rope"(%[[Q]], %[[POS]]) {{.*}} -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: %[[KR:.+]] = kime.rope "layers.0.attn.k.rope"(%[[K]], {{.*}}) -> !kime.tensor<[T:64, 4], f32>
// CHECK-NEXT: %[[SEQ:.+]] = kime.sequence_ids "layers.0.attn.qseq"(%arg1) : {{.*}} -> !kime.tensor<[T:64], ui32>
// CHECK-NEXT: %[[QSEQ:.+]] = kime.output_rows "layers.0.attn.qseq.out"(%[[SEQ]], {{.*}}) -> !kime.tensor<[R:20], ui32>
// CHECK-NEXT: %[[A:.+]] = kime.attention "layers.0.attn"(%[[QR]], %[[KR]], %[[V]], %arg1, %[[QSEQ]]) {{.*}} -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: %[[O:.+]] = kime.linear "layers.0.attn.o"(%[[A]], {{.*}}) -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: %[[XR:.+]] = kime.output_rows "embed.out"(%[[EMB]], %arg1, %arg2, %arg3) : {{.*}} -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: kime.add "layers.0.attn.residual"(%[[XR]], %[[O]]) {{.*}} -> !kime.tensor<[R:20, 8], f32>
// CHECK: %[[F:.+]] = kime.rms_norm "final_norm"({{.*}}) -> !kime.tensor<[R:20, 8], f32>
// CHECK-NEXT: kime.gather_markers "head.marker.rows"(%[[F]], {{.*}}) : (!kime.tensor<[R:20, 8], f32>, {{.*}}) -> !kime.tensor<[M:16, 8], f32>
// CHECK: kime.first_rows "head.act.rows"(%[[F]], %arg1) : (!kime.tensor<[R:20, 8], f32>, {{.*}}) -> !kime.tensor<[S:4, 8], f32>
// CHECK-NOT: [T:64

// After kime-fuse: select kernels copy the picked rows; the query linear (RoPE over the picked
// positions), the attention, the MLP and the heads run on them.
// FUSED-LABEL: func.func @tiny
// FUSED: %[[NR:.+]] = kime.select_kernel "layers.0.attn_norm.out" x(%{{.+}} : {{.*}}) cu(%arg1 : {{.*}}) markers(%arg2 : {{.*}}) mcu(%arg3 : {{.*}}) : !kime.tensor<[R:20, 8], f32>
// FUSED: %[[Q:.+]] = kime.linear_kernel "layers.0.attn.q" x(%[[NR]] : {{.*}}) cu(%arg1 : {{.*}}) weight({{.*}}) rope({{.*}}) : !kime.tensor<[R:20, 8], f32>
// FUSED: kime.attention_kernel "layers.0.attn" q(%[[Q]] : {{.*}}) k({{.*}}) v({{.*}}) cu(%arg1 : {{.*}}) heads({{.*}}) : !kime.tensor<[R:20, 8], f32>
// FUSED: %[[XR:.+]] = kime.select_kernel "embed.out" x(%{{.+}} : {{.*}}) cu(%arg1 : {{.*}}) markers(%arg2 : {{.*}}) mcu(%arg3 : {{.*}}) : !kime.tensor<[R:20, 8], f32>
// FUSED: kime.linear_kernel "layers.0.attn.residual" x({{.*}}) weight({{.*}}) residual(%[[XR]] : {{.*}}) : !kime.tensor<[R:20, 8], f32>
// FUSED: kime.head_kernel "head.marker.logits"
// FUSED-NOT: kime.output_rows
// FUSED-NOT: kime.sequence_ids
// FUSED-NOT: kime.positions

module {
  func.func @tiny(%arg0: !kime.tensor<[T:64], ui32>, %arg1: !kime.tensor<[S+1:5], ui32>, %arg2: !kime.tensor<[M:16], ui32>, %arg3: !kime.tensor<[S+1:5], ui32>, %arg4: !kime.tensor<[S:4], ui8>) -> (!kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>) attributes {kime.bucket = array<i64: 64, 4, 16>, kime.types = 2 : i64, kime.vocab = 16 : i64} {
    %0 = kime.weight "embed.tok" : () -> !kime.tensor<[16, 8], f32>
    %1 = kime.weight "embed.type" : () -> !kime.tensor<[2, 8], f32>
    %2 = kime.weight "layers.0.attn_norm.weight" : () -> !kime.tensor<[8], f32>
    %3 = kime.weight "layers.0.attn.q.weight" : () -> !kime.tensor<[8, 8], f32>
    %4 = kime.weight "layers.0.attn.k.weight" : () -> !kime.tensor<[4, 8], f32>
    %5 = kime.weight "layers.0.attn.v.weight" : () -> !kime.tensor<[4, 8], f32>
    %6 = kime.weight "layers.0.attn.o.weight" : () -> !kime.tensor<[8, 8], f32>
    %7 = kime.weight "layers.0.mlp_norm.weight" : () -> !kime.tensor<[8], f32>
    %8 = kime.weight "layers.0.mlp.gate.weight" : () -> !kime.tensor<[12, 8], f32>
    %9 = kime.weight "layers.0.mlp.up.weight" : () -> !kime.tensor<[12, 8], f32>
    %10 = kime.weight "layers.0.mlp.down.weight" : () -> !kime.tensor<[8, 12], f32>
    %11 = kime.weight "final_norm.weight" : () -> !kime.tensor<[8], f32>
    %12 = kime.weight "head.marker.weight" : () -> !kime.tensor<[1, 8], f32>
    %13 = kime.weight "head.marker.bias" : () -> !kime.tensor<[1], f32>
    %14 = kime.weight "head.act.weight" : () -> !kime.tensor<[2, 8], f32>
    %15 = kime.weight "head.act.bias" : () -> !kime.tensor<[2], f32>
    %16 = kime.gather_rows "embed.tok.rows"(%0, %arg0) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %17 = kime.gather_rows "embed.type.seqs"(%1, %arg4) : (!kime.tensor<[2, 8], f32>, !kime.tensor<[S:4], ui8>) -> !kime.tensor<[S:4, 8], f32>
    %18 = kime.expand_seqs "embed.type.rows"(%17, %arg1) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %19 = kime.positions "positions"(%arg1) : (!kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64], ui32>
    %20 = kime.add "embed"(%16, %18) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %21 = kime.rms_norm "layers.0.attn_norm"(%20, %2) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %22 = kime.linear "layers.0.attn.q"(%21, %3) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %23 = kime.linear "layers.0.attn.k"(%21, %4) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[4, 8], f32>) -> !kime.tensor<[T:64, 4], f32>
    %24 = kime.linear "layers.0.attn.v"(%21, %5) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[4, 8], f32>) -> !kime.tensor<[T:64, 4], f32>
    %25 = kime.rope "layers.0.attn.q.rope"(%22, %19) {heads = 2 : i64, theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %26 = kime.rope "layers.0.attn.k.rope"(%23, %19) {heads = 1 : i64, theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 4], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 4], f32>
    %27 = kime.attention "layers.0.attn"(%25, %26, %24, %arg1) {heads = 2 : i64, kv_heads = 1 : i64, scale = 5.000000e-01 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 4], f32>, !kime.tensor<[T:64, 4], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %28 = kime.linear "layers.0.attn.o"(%27, %6) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %29 = kime.add "layers.0.attn.residual"(%20, %28) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %30 = kime.rms_norm "layers.0.mlp_norm"(%29, %7) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %31 = kime.linear "layers.0.mlp.gate"(%30, %8) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:64, 12], f32>
    %32 = kime.silu "layers.0.mlp.gate.silu"(%31) : (!kime.tensor<[T:64, 12], f32>) -> !kime.tensor<[T:64, 12], f32>
    %33 = kime.linear "layers.0.mlp.up"(%30, %9) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:64, 12], f32>
    %34 = kime.mul "layers.0.mlp.act"(%32, %33) : (!kime.tensor<[T:64, 12], f32>, !kime.tensor<[T:64, 12], f32>) -> !kime.tensor<[T:64, 12], f32>
    %35 = kime.linear "layers.0.mlp.down"(%34, %10) : (!kime.tensor<[T:64, 12], f32>, !kime.tensor<[8, 12], f32>) -> !kime.tensor<[T:64, 8], f32>
    %36 = kime.add "layers.0.mlp.residual"(%29, %35) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %37 = kime.rms_norm "final_norm"(%36, %11) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %38 = kime.gather_markers "head.marker.rows"(%37, %arg1, %arg2, %arg3) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:16], ui32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[M:16, 8], f32>
    %39 = kime.linear "head.marker"(%38, %12, %13) : (!kime.tensor<[M:16, 8], f32>, !kime.tensor<[1, 8], f32>, !kime.tensor<[1], f32>) -> !kime.tensor<[M:16, 1], f32>
    %40 = kime.squeeze "head.marker.logits"(%39) : (!kime.tensor<[M:16, 1], f32>) -> !kime.tensor<[M:16], f32>
    %41 = kime.first_rows "head.act.rows"(%37, %arg1) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
    %42 = kime.linear "head.act"(%41, %14, %15) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[2, 8], f32>, !kime.tensor<[2], f32>) -> !kime.tensor<[S:4, 2], f32>
    return %40, %42 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}


// -----

// A bucket whose output rows are as many as its tokens (4 + 16 >= 16): nothing changes.
// CHECK-LABEL: func.func @tiny
// CHECK-NOT: kime.output_rows
// CHECK-NOT: [R:
// CHECK: return
module {
  func.func @tiny(%arg0: !kime.tensor<[T:16], ui32>, %arg1: !kime.tensor<[S+1:5], ui32>, %arg2: !kime.tensor<[M:16], ui32>, %arg3: !kime.tensor<[S+1:5], ui32>, %arg4: !kime.tensor<[S:4], ui8>) -> (!kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>) attributes {kime.bucket = array<i64: 16, 4, 16>, kime.types = 2 : i64, kime.vocab = 16 : i64} {
    %0 = kime.weight "embed.tok" : () -> !kime.tensor<[16, 8], f32>
    %1 = kime.weight "embed.type" : () -> !kime.tensor<[2, 8], f32>
    %2 = kime.weight "layers.0.attn_norm.weight" : () -> !kime.tensor<[8], f32>
    %3 = kime.weight "layers.0.attn.q.weight" : () -> !kime.tensor<[8, 8], f32>
    %4 = kime.weight "layers.0.attn.k.weight" : () -> !kime.tensor<[4, 8], f32>
    %5 = kime.weight "layers.0.attn.v.weight" : () -> !kime.tensor<[4, 8], f32>
    %6 = kime.weight "layers.0.attn.o.weight" : () -> !kime.tensor<[8, 8], f32>
    %7 = kime.weight "layers.0.mlp_norm.weight" : () -> !kime.tensor<[8], f32>
    %8 = kime.weight "layers.0.mlp.gate.weight" : () -> !kime.tensor<[12, 8], f32>
    %9 = kime.weight "layers.0.mlp.up.weight" : () -> !kime.tensor<[12, 8], f32>
    %10 = kime.weight "layers.0.mlp.down.weight" : () -> !kime.tensor<[8, 12], f32>
    %11 = kime.weight "final_norm.weight" : () -> !kime.tensor<[8], f32>
    %12 = kime.weight "head.marker.weight" : () -> !kime.tensor<[1, 8], f32>
    %13 = kime.weight "head.marker.bias" : () -> !kime.tensor<[1], f32>
    %14 = kime.weight "head.act.weight" : () -> !kime.tensor<[2, 8], f32>
    %15 = kime.weight "head.act.bias" : () -> !kime.tensor<[2], f32>
    %16 = kime.gather_rows "embed.tok.rows"(%0, %arg0) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:16], ui32>) -> !kime.tensor<[T:16, 8], f32>
    %17 = kime.gather_rows "embed.type.seqs"(%1, %arg4) : (!kime.tensor<[2, 8], f32>, !kime.tensor<[S:4], ui8>) -> !kime.tensor<[S:4, 8], f32>
    %18 = kime.expand_seqs "embed.type.rows"(%17, %arg1) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:16, 8], f32>
    %19 = kime.positions "positions"(%arg1) : (!kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:16], ui32>
    %20 = kime.add "embed"(%16, %18) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[T:16, 8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %21 = kime.rms_norm "layers.0.attn_norm"(%20, %2) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %22 = kime.linear "layers.0.attn.q"(%21, %3) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %23 = kime.linear "layers.0.attn.k"(%21, %4) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[4, 8], f32>) -> !kime.tensor<[T:16, 4], f32>
    %24 = kime.linear "layers.0.attn.v"(%21, %5) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[4, 8], f32>) -> !kime.tensor<[T:16, 4], f32>
    %25 = kime.rope "layers.0.attn.q.rope"(%22, %19) {heads = 2 : i64, theta = 1.000000e+04 : f64} : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[T:16], ui32>) -> !kime.tensor<[T:16, 8], f32>
    %26 = kime.rope "layers.0.attn.k.rope"(%23, %19) {heads = 1 : i64, theta = 1.000000e+04 : f64} : (!kime.tensor<[T:16, 4], f32>, !kime.tensor<[T:16], ui32>) -> !kime.tensor<[T:16, 4], f32>
    %27 = kime.attention "layers.0.attn"(%25, %26, %24, %arg1) {heads = 2 : i64, kv_heads = 1 : i64, scale = 5.000000e-01 : f64} : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[T:16, 4], f32>, !kime.tensor<[T:16, 4], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:16, 8], f32>
    %28 = kime.linear "layers.0.attn.o"(%27, %6) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %29 = kime.add "layers.0.attn.residual"(%20, %28) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[T:16, 8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %30 = kime.rms_norm "layers.0.mlp_norm"(%29, %7) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %31 = kime.linear "layers.0.mlp.gate"(%30, %8) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:16, 12], f32>
    %32 = kime.silu "layers.0.mlp.gate.silu"(%31) : (!kime.tensor<[T:16, 12], f32>) -> !kime.tensor<[T:16, 12], f32>
    %33 = kime.linear "layers.0.mlp.up"(%30, %9) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:16, 12], f32>
    %34 = kime.mul "layers.0.mlp.act"(%32, %33) : (!kime.tensor<[T:16, 12], f32>, !kime.tensor<[T:16, 12], f32>) -> !kime.tensor<[T:16, 12], f32>
    %35 = kime.linear "layers.0.mlp.down"(%34, %10) : (!kime.tensor<[T:16, 12], f32>, !kime.tensor<[8, 12], f32>) -> !kime.tensor<[T:16, 8], f32>
    %36 = kime.add "layers.0.mlp.residual"(%29, %35) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[T:16, 8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %37 = kime.rms_norm "final_norm"(%36, %11) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:16, 8], f32>
    %38 = kime.gather_markers "head.marker.rows"(%37, %arg1, %arg2, %arg3) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:16], ui32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[M:16, 8], f32>
    %39 = kime.linear "head.marker"(%38, %12, %13) : (!kime.tensor<[M:16, 8], f32>, !kime.tensor<[1, 8], f32>, !kime.tensor<[1], f32>) -> !kime.tensor<[M:16, 1], f32>
    %40 = kime.squeeze "head.marker.logits"(%39) : (!kime.tensor<[M:16, 1], f32>) -> !kime.tensor<[M:16], f32>
    %41 = kime.first_rows "head.act.rows"(%37, %arg1) : (!kime.tensor<[T:16, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
    %42 = kime.linear "head.act"(%41, %14, %15) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[2, 8], f32>, !kime.tensor<[2], f32>) -> !kime.tensor<[S:4, 2], f32>
    return %40, %42 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}


// -----

// No attention: the rows the heads read are the tokens' own all the way, nothing to save, and
// the embedding sum stays whole for kime-fuse's embed kernel.
// CHECK-LABEL: func.func @no_attention
// CHECK-NOT: kime.output_rows
// CHECK-NOT: [R:
// CHECK: return
module {
  func.func @no_attention(%arg0: !kime.tensor<[T:64], ui32>, %arg1: !kime.tensor<[S+1:5], ui32>, %arg2: !kime.tensor<[M:16], ui32>, %arg3: !kime.tensor<[S+1:5], ui32>, %arg4: !kime.tensor<[S:4], ui8>) -> (!kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>) attributes {kime.bucket = array<i64: 64, 4, 16>, kime.types = 2 : i64, kime.vocab = 16 : i64} {
    %0 = kime.weight "embed.tok" : () -> !kime.tensor<[16, 8], f32>
    %1 = kime.weight "embed.type" : () -> !kime.tensor<[2, 8], f32>
    %2 = kime.weight "mlp.weight" : () -> !kime.tensor<[8, 8], f32>
    %3 = kime.weight "final_norm.weight" : () -> !kime.tensor<[8], f32>
    %4 = kime.weight "head.marker.weight" : () -> !kime.tensor<[1, 8], f32>
    %5 = kime.weight "head.act.weight" : () -> !kime.tensor<[2, 8], f32>
    %6 = kime.gather_rows "embed.tok.rows"(%0, %arg0) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %7 = kime.gather_rows "embed.type.seqs"(%1, %arg4) : (!kime.tensor<[2, 8], f32>, !kime.tensor<[S:4], ui8>) -> !kime.tensor<[S:4, 8], f32>
    %8 = kime.expand_seqs "embed.type.rows"(%7, %arg1) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %9 = kime.add "embed"(%6, %8) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %10 = kime.linear "mlp"(%9, %2) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %11 = kime.rms_norm "final_norm"(%10, %3) {eps = 9.9999999999999995E-7 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %12 = kime.gather_markers "head.marker.rows"(%11, %arg1, %arg2, %arg3) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:16], ui32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[M:16, 8], f32>
    %13 = kime.linear "head.marker"(%12, %4) : (!kime.tensor<[M:16, 8], f32>, !kime.tensor<[1, 8], f32>) -> !kime.tensor<[M:16, 1], f32>
    %14 = kime.squeeze "head.marker.logits"(%13) : (!kime.tensor<[M:16, 1], f32>) -> !kime.tensor<[M:16], f32>
    %15 = kime.first_rows "head.act.rows"(%11, %arg1) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
    %16 = kime.linear "head.act"(%15, %5) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[S:4, 2], f32>
    return %14, %16 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}

// -----

// RoPE by token ids in the last layer: the runtime stages the output rows' positions, not their
// ids, so the pass cannot prove the picked rows right and holds back.
// CHECK-LABEL: func.func @rope_by_ids
// CHECK-NOT: kime.output_rows
// CHECK-NOT: [R:
// CHECK: return
module {
  func.func @rope_by_ids(%arg0: !kime.tensor<[T:64], ui32>, %arg1: !kime.tensor<[S+1:5], ui32>, %arg2: !kime.tensor<[M:16], ui32>, %arg3: !kime.tensor<[S+1:5], ui32>, %arg4: !kime.tensor<[S:4], ui8>) -> (!kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>) attributes {kime.bucket = array<i64: 64, 4, 16>, kime.types = 2 : i64, kime.vocab = 16 : i64} {
    %0 = kime.weight "embed.tok" : () -> !kime.tensor<[16, 8], f32>
    %1 = kime.weight "q.weight" : () -> !kime.tensor<[8, 8], f32>
    %2 = kime.weight "head.marker.weight" : () -> !kime.tensor<[1, 8], f32>
    %3 = kime.weight "head.act.weight" : () -> !kime.tensor<[2, 8], f32>
    %4 = kime.gather_rows "embed.tok.rows"(%0, %arg0) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %5 = kime.linear "q"(%4, %1) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %6 = kime.rope "q.rope"(%5, %arg0) {heads = 2 : i64, theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %7 = kime.attention "attn"(%6, %4, %4, %arg1) {heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %8 = kime.rope "attn.rope"(%7, %arg0) {heads = 2 : i64, theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %9 = kime.gather_markers "head.marker.rows"(%8, %arg1, %arg2, %arg3) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:16], ui32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[M:16, 8], f32>
    %10 = kime.linear "head.marker"(%9, %2) : (!kime.tensor<[M:16, 8], f32>, !kime.tensor<[1, 8], f32>) -> !kime.tensor<[M:16, 1], f32>
    %11 = kime.squeeze "head.marker.logits"(%10) : (!kime.tensor<[M:16, 1], f32>) -> !kime.tensor<[M:16], f32>
    %12 = kime.first_rows "head.act.rows"(%8, %arg1) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
    %13 = kime.linear "head.act"(%12, %3) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[S:4, 2], f32>
    return %11, %13 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}

// -----

// No gather_markers (the logits from a table by marker position): the output rows need the
// marker rows, which only a marker gather gives the pass, so it holds back.
// CHECK-LABEL: func.func @no_marker_rows
// CHECK-NOT: kime.output_rows
// CHECK-NOT: [R:
// CHECK: return
module {
  func.func @no_marker_rows(%arg0: !kime.tensor<[T:64], ui32>, %arg1: !kime.tensor<[S+1:5], ui32>, %arg2: !kime.tensor<[M:16], ui32>, %arg3: !kime.tensor<[S+1:5], ui32>, %arg4: !kime.tensor<[S:4], ui8>) -> (!kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>) attributes {kime.bucket = array<i64: 64, 4, 16>, kime.types = 2 : i64, kime.vocab = 16 : i64} {
    %0 = kime.weight "embed.tok" : () -> !kime.tensor<[16, 8], f32>
    %1 = kime.weight "embed.marker" : () -> !kime.tensor<[64, 1], f32>
    %2 = kime.weight "head.act.weight" : () -> !kime.tensor<[2, 8], f32>
    %3 = kime.gather_rows "embed.tok.rows"(%0, %arg0) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:64], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %4 = kime.attention "attn"(%3, %3, %3, %arg1) {heads = 2 : i64, kv_heads = 2 : i64, scale = 5.000000e-01 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %5 = kime.first_rows "head.act.rows"(%4, %arg1) : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
    %6 = kime.linear "head.act"(%5, %2) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[S:4, 2], f32>
    %7 = kime.gather_rows "marker.rows"(%1, %arg2) : (!kime.tensor<[64, 1], f32>, !kime.tensor<[M:16], ui32>) -> !kime.tensor<[M:16, 1], f32>
    %8 = kime.squeeze "logits"(%7) : (!kime.tensor<[M:16, 1], f32>) -> !kime.tensor<[M:16], f32>
    return %8, %6 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}
