// kime-plan-memory gives every kernel result an arena offset by liveness, reusing freed space
// best-fit, and records the arena's size. Input: kime-fuse's output for tiny.json (tokens=64,
// seqs=4, markers=16; kime-translate --import-kime-graph | kime-opt --kime-specialize-bucket
// --kime-fuse). Without reuse the results would take 19584 bytes; the plan needs 8192.
// RUN: kime-opt %s --kime-plan-memory | FileCheck %s

// CHECK-LABEL: func.func @tiny
// CHECK-SAME: kime.arena = 8192 : i64
// x (2048 bytes) lives until the attention residual reads it; the normed rows until k.
// CHECK: kime.embed_kernel "embed"{{.*}} {offset = 0 : i64}
// CHECK: kime.norm_kernel "layers.0.attn_norm"{{.*}} {offset = 2048 : i64}
// CHECK: kime.linear_kernel "layers.0.attn.v"{{.*}} {offset = 4096 : i64}
// CHECK: kime.linear_kernel "layers.0.attn.q"{{.*}} {offset = 5120 : i64}
// CHECK: kime.linear_kernel "layers.0.attn.k"{{.*}} {offset = 7168 : i64}
// The attention takes the normed rows' place (freed after k, the kernel before it), not an
// input's: a kernel's output never overlaps its inputs.
// CHECK: kime.attention_kernel "layers.0.attn"{{.*}} {offset = 2048 : i64}
// v, q and k die at the attention: the residual and the MLP's norm take their merged space.
// CHECK: kime.linear_kernel "layers.0.attn.residual"{{.*}} {offset = 4096 : i64}
// CHECK: kime.norm_kernel "layers.0.mlp_norm"{{.*}} {offset = 6144 : i64}
// CHECK: kime.linear_kernel "layers.0.mlp.act"{{.*}} {offset = 0 : i64}
// CHECK: kime.linear_kernel "layers.0.mlp.residual"{{.*}} {offset = 6144 : i64}
// The outputs live to the end, 64-byte aligned.
// CHECK: kime.head_kernel "head.marker.logits"{{.*}} {offset = 0 : i64}
// CHECK: kime.head_kernel "head.act"{{.*}} {offset = 64 : i64}

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
    %16 = kime.embed_kernel "embed" ids(%arg0 : !kime.tensor<[T:64], ui32>) qtype(%arg4 : !kime.tensor<[S:4], ui8>) cu(%arg1 : !kime.tensor<[S+1:5], ui32>) tok_table(%0 : !kime.tensor<[16, 8], f32>) type_table(%1 : !kime.tensor<[2, 8], f32>) : !kime.tensor<[T:64, 8], f32>
    %17 = kime.norm_kernel "layers.0.attn_norm" x(%16 : !kime.tensor<[T:64, 8], f32>) norm_weight(%2 : !kime.tensor<[8], f32>) norm(rms, 9.9999999999999995E-7) : !kime.tensor<[T:64, 8], f32>
    %18 = kime.linear_kernel "layers.0.attn.v" x(%17 : !kime.tensor<[T:64, 8], f32>) weight(%5 : !kime.tensor<[4, 8], f32>) : !kime.tensor<[T:64, 4], f32>
    %19 = kime.linear_kernel "layers.0.attn.q" x(%17 : !kime.tensor<[T:64, 8], f32>) cu(%arg1 : !kime.tensor<[S+1:5], ui32>) weight(%3 : !kime.tensor<[8, 8], f32>) rope(2, 1.000000e+04) : !kime.tensor<[T:64, 8], f32>
    %20 = kime.linear_kernel "layers.0.attn.k" x(%17 : !kime.tensor<[T:64, 8], f32>) cu(%arg1 : !kime.tensor<[S+1:5], ui32>) weight(%4 : !kime.tensor<[4, 8], f32>) rope(1, 1.000000e+04) : !kime.tensor<[T:64, 4], f32>
    %21 = kime.attention_kernel "layers.0.attn" q(%19 : !kime.tensor<[T:64, 8], f32>) k(%20 : !kime.tensor<[T:64, 4], f32>) v(%18 : !kime.tensor<[T:64, 4], f32>) cu(%arg1 : !kime.tensor<[S+1:5], ui32>) heads(2, 1, 5.000000e-01) : !kime.tensor<[T:64, 8], f32>
    %22 = kime.linear_kernel "layers.0.attn.residual" x(%21 : !kime.tensor<[T:64, 8], f32>) weight(%6 : !kime.tensor<[8, 8], f32>) residual(%16 : !kime.tensor<[T:64, 8], f32>) : !kime.tensor<[T:64, 8], f32>
    %23 = kime.norm_kernel "layers.0.mlp_norm" x(%22 : !kime.tensor<[T:64, 8], f32>) norm_weight(%7 : !kime.tensor<[8], f32>) norm(rms, 9.9999999999999995E-7) : !kime.tensor<[T:64, 8], f32>
    %24 = kime.linear_kernel "layers.0.mlp.act" x(%23 : !kime.tensor<[T:64, 8], f32>) weight(%8 : !kime.tensor<[12, 8], f32>) weight_up(%9 : !kime.tensor<[12, 8], f32>) act(swiglu) : !kime.tensor<[T:64, 12], f32>
    %25 = kime.linear_kernel "layers.0.mlp.residual" x(%24 : !kime.tensor<[T:64, 12], f32>) weight(%10 : !kime.tensor<[8, 12], f32>) residual(%22 : !kime.tensor<[T:64, 8], f32>) : !kime.tensor<[T:64, 8], f32>
    %26 = kime.head_kernel "head.marker.logits" x(%25 : !kime.tensor<[T:64, 8], f32>) cu(%arg1 : !kime.tensor<[S+1:5], ui32>) markers(%arg2 : !kime.tensor<[M:16], ui32>) mcu(%arg3 : !kime.tensor<[S+1:5], ui32>) norm_weight(%11 : !kime.tensor<[8], f32>) weight(%12 : !kime.tensor<[1, 8], f32>) bias(%13 : !kime.tensor<[1], f32>) norm(rms, 9.9999999999999995E-7) rows(markers) : !kime.tensor<[M:16], f32>
    %27 = kime.head_kernel "head.act" x(%25 : !kime.tensor<[T:64, 8], f32>) cu(%arg1 : !kime.tensor<[S+1:5], ui32>) norm_weight(%11 : !kime.tensor<[8], f32>) weight(%14 : !kime.tensor<[2, 8], f32>) bias(%15 : !kime.tensor<[2], f32>) norm(rms, 9.9999999999999995E-7) rows(first) : !kime.tensor<[S:4, 2], f32>
    return %26, %27 : !kime.tensor<[M:16], f32>, !kime.tensor<[S:4, 2], f32>
  }
}

