// kime-plan-memory gives every kernel result an arena offset by liveness, reusing freed space
// best-fit, and records the arena's size. Input: kime-fuse.mlir's output (tiny.json, tokens=64,
// seqs=4, markers=16). Without reuse the results would take 15488 bytes; the plan needs 8192.
// RUN: kime-opt %s --kime-plan-memory | FileCheck %s

// CHECK-LABEL: func.func @tiny
// CHECK-SAME: kime.arena = 8192 : i64
// x (2048 bytes) lives until the attention residual reads it.
// CHECK: kime.kernel "embed" "embed"{{.*}} {offset = 0 : i64}
// CHECK: kime.kernel "linear" "layers.0.attn.v"{{.*}} {offset = 2048 : i64}
// CHECK: kime.kernel "linear" "layers.0.attn.q"{{.*}} {offset = 3072 : i64}
// CHECK: kime.kernel "linear" "layers.0.attn.k"{{.*}} {offset = 5120 : i64}
// CHECK: kime.kernel "attention" "layers.0.attn"{{.*}} {offset = 6144 : i64}
// v, q and k die at the attention: the residual takes v's place (best fit), the SwiGLU output
// the merged space q and k left.
// CHECK: kime.kernel "linear" "layers.0.attn.residual"{{.*}} {offset = 2048 : i64}
// CHECK: kime.kernel "linear" "layers.0.mlp.act"{{.*}} {offset = 4096 : i64}
// CHECK: kime.kernel "linear" "layers.0.mlp.residual"{{.*}} {offset = 0 : i64}
// The outputs live to the end, 64-byte aligned.
// CHECK: kime.kernel "head" "head.marker.logits"{{.*}} {offset = 2048 : i64}
// CHECK: kime.kernel "head" "head.act"{{.*}} {offset = 2112 : i64}

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
    %16 = kime.kernel "embed" "embed"(%arg0, %arg4, %arg1, %0, %1) roles ["ids", "qtype", "cu", "tok", "type"] config {learned_pos = false} : (!kime.tensor<[T:64], ui32>, !kime.tensor<[S:4], ui8>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[16, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %17 = kime.kernel "linear" "layers.0.attn.v"(%16, %2, %5) roles ["x", "norm.weight", "weight"] config {act = "none", eps = 9.9999999999999995E-7 : f64, norm = "rms"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[4, 8], f32>) -> !kime.tensor<[T:64, 4], f32>
    %18 = kime.kernel "linear" "layers.0.attn.q"(%16, %2, %3, %arg1) roles ["x", "norm.weight", "weight", "cu"] config {act = "none", eps = 9.9999999999999995E-7 : f64, norm = "rms", rope_heads = 2 : i64, rope_theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[8, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %19 = kime.kernel "linear" "layers.0.attn.k"(%16, %2, %4, %arg1) roles ["x", "norm.weight", "weight", "cu"] config {act = "none", eps = 9.9999999999999995E-7 : f64, norm = "rms", rope_heads = 1 : i64, rope_theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[4, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 4], f32>
    %20 = kime.kernel "attention" "layers.0.attn"(%18, %19, %17, %arg1) roles ["q", "k", "v", "cu"] config {heads = 2 : i64, kv_heads = 1 : i64, scale = 5.000000e-01 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 4], f32>, !kime.tensor<[T:64, 4], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %21 = kime.kernel "linear" "layers.0.attn.residual"(%20, %6, %16) roles ["x", "weight", "residual"] config {act = "none", norm = "none"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %22 = kime.kernel "linear" "layers.0.mlp.act"(%21, %7, %8, %9) roles ["x", "norm.weight", "weight", "weight.up"] config {act = "swiglu", eps = 9.9999999999999995E-7 : f64, norm = "rms"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[12, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:64, 12], f32>
    %23 = kime.kernel "linear" "layers.0.mlp.residual"(%22, %10, %21) roles ["x", "weight", "residual"] config {act = "none", norm = "none"} : (!kime.tensor<[T:64, 12], f32>, !kime.tensor<[8, 12], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %24 = kime.kernel "head" "head.marker.logits"(%23, %11, %arg1, %arg2, %arg3, %12, %13) roles ["x", "norm.weight", "cu", "markers", "mcu", "weight", "bias"] config {eps = 9.9999999999999995E-7 : f64, norm = "rms", rows = "markers"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:16], ui32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[1, 8], f32>, !kime.tensor<[1], f32>) -> !kime.tensor<[M:16], f32>
    %25 = kime.kernel "head" "head.act"(%23, %11, %arg1, %14, %15) roles ["x", "norm.weight", "cu", "weight", "bias"] config {eps = 9.9999999999999995E-7 : f64, norm = "rms", rows = "first"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[2, 8], f32>, !kime.tensor<[2], f32>) -> !kime.tensor<[S:4, 2], f32>
    return %24, %25 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}

