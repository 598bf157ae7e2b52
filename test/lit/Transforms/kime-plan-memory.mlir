// kime-plan-memory gives every kernel result an arena offset by liveness, reusing freed space
// best-fit, and records the arena's size. Input: kime-fuse's output for tiny.json (tokens=64,
// seqs=4, markers=16; kime-translate --import-kime-graph | kime-opt --kime-specialize-bucket
// --kime-fuse). Without reuse the results would take 19584 bytes; the plan needs 8192.
// RUN: kime-opt %s --kime-plan-memory | FileCheck %s

// CHECK-LABEL: func.func @tiny
// CHECK-SAME: kime.arena = 8192 : i64
// x (2048 bytes) lives until the attention residual reads it; the normed rows until k.
// CHECK: kime.kernel embed "embed"{{.*}} {offset = 0 : i64}
// CHECK: kime.kernel norm "layers.0.attn_norm"{{.*}} {offset = 2048 : i64}
// CHECK: kime.kernel linear "layers.0.attn.v"{{.*}} {offset = 4096 : i64}
// CHECK: kime.kernel linear "layers.0.attn.q"{{.*}} {offset = 5120 : i64}
// CHECK: kime.kernel linear "layers.0.attn.k"{{.*}} {offset = 7168 : i64}
// The attention takes the normed rows' place (freed after k, the kernel before it), not an
// input's: a kernel's output never overlaps its inputs.
// CHECK: kime.kernel attention "layers.0.attn"{{.*}} {offset = 2048 : i64}
// v, q and k die at the attention: the residual and the MLP's norm take their merged space.
// CHECK: kime.kernel linear "layers.0.attn.residual"{{.*}} {offset = 4096 : i64}
// CHECK: kime.kernel norm "layers.0.mlp_norm"{{.*}} {offset = 6144 : i64}
// CHECK: kime.kernel linear "layers.0.mlp.act"{{.*}} {offset = 0 : i64}
// CHECK: kime.kernel linear "layers.0.mlp.residual"{{.*}} {offset = 6144 : i64}
// The outputs live to the end, 64-byte aligned.
// CHECK: kime.kernel head "head.marker.logits"{{.*}} {offset = 0 : i64}
// CHECK: kime.kernel head "head.act"{{.*}} {offset = 64 : i64}

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
    %16 = kime.kernel embed "embed"(%arg0, %arg4, %arg1, %0, %1) roles ["ids", "qtype", "cu", "tok", "type"] config {learned_pos = false} : (!kime.tensor<[T:64], ui32>, !kime.tensor<[S:4], ui8>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[16, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %17 = kime.kernel norm "layers.0.attn_norm"(%16, %2) roles ["x", "norm.weight"] config {eps = 9.9999999999999995E-7 : f64, norm = "rms"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %18 = kime.kernel linear "layers.0.attn.v"(%17, %5) roles ["x", "weight"] config {act = "none"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[4, 8], f32>) -> !kime.tensor<[T:64, 4], f32>
    %19 = kime.kernel linear "layers.0.attn.q"(%17, %3, %arg1) roles ["x", "weight", "cu"] config {act = "none", rope_heads = 2 : i64, rope_theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %20 = kime.kernel linear "layers.0.attn.k"(%17, %4, %arg1) roles ["x", "weight", "cu"] config {act = "none", rope_heads = 1 : i64, rope_theta = 1.000000e+04 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[4, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 4], f32>
    %21 = kime.kernel attention "layers.0.attn"(%19, %20, %18, %arg1) roles ["q", "k", "v", "cu"] config {heads = 2 : i64, kv_heads = 1 : i64, scale = 5.000000e-01 : f64} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[T:64, 4], f32>, !kime.tensor<[T:64, 4], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:64, 8], f32>
    %22 = kime.kernel linear "layers.0.attn.residual"(%21, %6, %16) roles ["x", "weight", "residual"] config {act = "none"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8, 8], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %23 = kime.kernel norm "layers.0.mlp_norm"(%22, %7) roles ["x", "norm.weight"] config {eps = 9.9999999999999995E-7 : f64, norm = "rms"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %24 = kime.kernel linear "layers.0.mlp.act"(%23, %8, %9) roles ["x", "weight", "weight.up"] config {act = "swiglu"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[12, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:64, 12], f32>
    %25 = kime.kernel linear "layers.0.mlp.residual"(%24, %10, %22) roles ["x", "weight", "residual"] config {act = "none"} : (!kime.tensor<[T:64, 12], f32>, !kime.tensor<[8, 12], f32>, !kime.tensor<[T:64, 8], f32>) -> !kime.tensor<[T:64, 8], f32>
    %26 = kime.kernel head "head.marker.logits"(%25, %11, %arg1, %arg2, %arg3, %12, %13) roles ["x", "norm.weight", "cu", "markers", "mcu", "weight", "bias"] config {eps = 9.9999999999999995E-7 : f64, norm = "rms", rows = "markers"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:16], ui32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[1, 8], f32>, !kime.tensor<[1], f32>) -> !kime.tensor<[M:16], f32>
    %27 = kime.kernel head "head.act"(%25, %11, %arg1, %14, %15) roles ["x", "norm.weight", "cu", "weight", "bias"] config {eps = 9.9999999999999995E-7 : f64, norm = "rms", rows = "first"} : (!kime.tensor<[T:64, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[2, 8], f32>, !kime.tensor<[2], f32>) -> !kime.tensor<[S:4, 2], f32>
    return %26, %27 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}

