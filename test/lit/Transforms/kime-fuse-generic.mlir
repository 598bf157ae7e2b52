// kime-fuse's fallback: what no fused pattern takes becomes a generic kernel. Elementwise ops
// that only one another read are one eltwise kernel (a postfix program over its inputs); the
// gathers become gather kernels of their kind; RoPE that no linear computes, a rope kernel; a
// norm of marker or sequence rows, a norm kernel; a SwiGLU with a bias on one linear only is
// still one kernel; a squeeze stays a view. No Graph op is left for the backend contract.
// RUN: kime-opt %s --kime-fuse | FileCheck %s
// The Graph-shaped function plans and passes the backend contract once fused:
// RUN: kime-opt %s --kime-fuse --kime-plan-memory --kime-verify-backend-contract | FileCheck %s --check-prefix=PLANNED
// PLANNED-LABEL: func.func @heads
// PLANNED: kime.arena

// CHECK-LABEL: func.func @chain
// CHECK: %[[L:.+]] = kime.linear_kernel "a"
// CHECK-NEXT: kime.eltwise_kernel "sum" x(%[[L]] : {{.*}}) in1(%arg1 : {{.*}}) program <x silu x in1 mul add>
// CHECK-NEXT: return
func.func @chain(%x: !kime.tensor<[T:32, 8], f32>, %y: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %w = kime.weight "a.weight" : () -> !kime.tensor<[8, 8], f32>
  %a = kime.linear "a"(%x, %w) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %s = kime.silu "s"(%a) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %m = kime.mul "m"(%a, %y) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %r = kime.add "sum"(%s, %m) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  return %r : !kime.tensor<[T:32, 8], f32>
}

// A chain needing more than four inputs (a to e): the root takes its own operands, and its
// producers are chains of their own.
// CHECK-LABEL: func.func @wide_chain
// CHECK: %[[ABC:.+]] = kime.eltwise_kernel "abc" x(%arg0 : {{.*}}) in1(%arg1 : {{.*}}) in2(%arg2 : {{.*}}) program <x in1 add in2 add>
// CHECK: %[[X:.+]] = kime.eltwise_kernel "x" x(%arg3 : {{.*}}) in1(%arg4 : {{.*}}) in2(%arg0 : {{.*}}) program <x in1 add in2 add>
// CHECK: kime.eltwise_kernel "all" x(%[[ABC]] : {{.*}}) in1(%[[X]] : {{.*}}) program <x in1 add>
func.func @wide_chain(%a: !kime.tensor<[T:32, 8], f32>, %b: !kime.tensor<[T:32, 8], f32>, %c: !kime.tensor<[T:32, 8], f32>,
                      %d: !kime.tensor<[T:32, 8], f32>, %e: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %ab = kime.add "ab"(%a, %b) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %abc = kime.add "abc"(%ab, %c) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %de = kime.add "de"(%d, %e) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %x = kime.add "x"(%de, %a) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %all = kime.add "all"(%abc, %x) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  return %all : !kime.tensor<[T:32, 8], f32>
}

// An embedding with no type table, normed; a pooler norm on the first rows; a marker head of two
// linears with GELU between them (the first a head kernel that norms only the marked rows);
// logits as a view of their [M, 1].
// CHECK-LABEL: func.func @heads
// CHECK: %[[TOK:.+]] = kime.gather_kernel "tok" x(%{{.+}} : !kime.tensor<[40, 8], f32>) index(%arg0 : {{.*}}) gather(rows)
// CHECK: %[[N:.+]] = kime.norm_kernel "n" x(%[[TOK]]
// CHECK: %[[F:.+]] = kime.gather_kernel "first" x(%[[N]] : {{.*}}) cu(%arg1 : {{.*}}) gather(first)
// CHECK: kime.norm_kernel "pool" x(%[[F]]
// CHECK: kime.linear_kernel "act"
// CHECK: %[[H1:.+]] = kime.head_kernel "h1" x(%[[TOK]] : {{.*}}) cu(%arg1 : {{.*}}) markers(%arg2 : {{.*}}) mcu(%arg3 : {{.*}}) norm_weight({{.*}}) norm(rms, {{.*}}) rows(markers)
// CHECK: %[[G:.+]] = kime.eltwise_kernel "h1.gelu" x(%[[H1]] : {{.*}}) program <x gelu>
// CHECK: %[[H2:.+]] = kime.linear_kernel "h2" x(%[[G]]
// CHECK: %[[SQ:.+]] = kime.squeeze "logits"(%[[H2]])
// CHECK: return %[[SQ]]
func.func @heads(%ids: !kime.tensor<[T:32], ui32>, %cu: !kime.tensor<[S+1:5], ui32>, %markers: !kime.tensor<[M:8], ui32>,
                 %mcu: !kime.tensor<[S+1:5], ui32>, %qtype: !kime.tensor<[S:4], ui8>) -> (!kime.tensor<[M:8], f32>, !kime.tensor<[S:4, 2], f32>)
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %tok = kime.weight "embed.tok" : () -> !kime.tensor<[40, 8], f32>
  %g = kime.weight "n.weight" : () -> !kime.tensor<[8], f32>
  %w1 = kime.weight "h1.weight" : () -> !kime.tensor<[6, 8], f32>
  %w2 = kime.weight "h2.weight" : () -> !kime.tensor<[1, 6], f32>
  %wa = kime.weight "act.weight" : () -> !kime.tensor<[2, 8], f32>
  %t = kime.gather_rows "tok"(%tok, %ids) : (!kime.tensor<[40, 8], f32>, !kime.tensor<[T:32], ui32>) -> !kime.tensor<[T:32, 8], f32>
  %n = kime.rms_norm "n"(%t, %g) {eps = 1.0e-6 : f64} : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %f = kime.first_rows "first"(%n, %cu) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
  %p = kime.rms_norm "pool"(%f, %g) {eps = 1.0e-6 : f64} : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[S:4, 8], f32>
  %a = kime.linear "act"(%p, %wa) : (!kime.tensor<[S:4, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[S:4, 2], f32>
  %mk = kime.gather_markers "mk"(%n, %cu, %markers, %mcu) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[S+1:5], ui32>, !kime.tensor<[M:8], ui32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[M:8, 8], f32>
  %h1 = kime.linear "h1"(%mk, %w1) : (!kime.tensor<[M:8, 8], f32>, !kime.tensor<[6, 8], f32>) -> !kime.tensor<[M:8, 6], f32>
  %ge = kime.gelu "h1.gelu"(%h1) : (!kime.tensor<[M:8, 6], f32>) -> !kime.tensor<[M:8, 6], f32>
  %h2 = kime.linear "h2"(%ge, %w2) : (!kime.tensor<[M:8, 6], f32>, !kime.tensor<[1, 6], f32>) -> !kime.tensor<[M:8, 1], f32>
  %l = kime.squeeze "logits"(%h2) : (!kime.tensor<[M:8, 1], f32>) -> !kime.tensor<[M:8], f32>
  return %l, %a : !kime.tensor<[M:8], f32>, !kime.tensor<[S:4, 2], f32>
}

// RoPE by token ids: no linear takes it; a rope kernel does. A SwiGLU whose up-projection alone
// has a bias is one linear kernel.
// CHECK-LABEL: func.func @rope_and_swiglu
// CHECK: %[[Q:.+]] = kime.linear_kernel "q"
// CHECK-NEXT: kime.rope_kernel "q.rope" x(%[[Q]] : {{.*}}) index(%arg0 : {{.*}}) rope(2, 1.000000e+04)
// CHECK: kime.linear_kernel "act" {{.*}} weight_up({{.*}}) bias_up({{.*}}) act(swiglu)
func.func @rope_and_swiglu(%ids: !kime.tensor<[T:32], ui32>, %x: !kime.tensor<[T:32, 8], f32>) -> (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 16], f32>)
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %wq = kime.weight "q.weight" : () -> !kime.tensor<[8, 8], f32>
  %q = kime.linear "q"(%x, %wq) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %qr = kime.rope "q.rope"(%q, %ids) {heads = 2 : i64, theta = 1.0e4 : f64} : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32], ui32>) -> !kime.tensor<[T:32, 8], f32>
  %wg = kime.weight "gate.weight" : () -> !kime.tensor<[16, 8], f32>
  %wu = kime.weight "up.weight" : () -> !kime.tensor<[16, 8], f32>
  %bu = kime.weight "up.bias" : () -> !kime.tensor<[16], f32>
  %gl = kime.linear "gate"(%x, %wg) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[16, 8], f32>) -> !kime.tensor<[T:32, 16], f32>
  %s = kime.silu "gate.silu"(%gl) : (!kime.tensor<[T:32, 16], f32>) -> !kime.tensor<[T:32, 16], f32>
  %u = kime.linear "up"(%x, %wu, %bu) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[16, 8], f32>, !kime.tensor<[16], f32>) -> !kime.tensor<[T:32, 16], f32>
  %m = kime.mul "act"(%s, %u) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[T:32, 16], f32>) -> !kime.tensor<[T:32, 16], f32>
  return %qr, %m : !kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 16], f32>
}

// Graph format 2's functions join programs like the others (sub keeps its operand order), and a
// mean of each sequence's tokens is a pool kernel.
// CHECK-LABEL: func.func @format2
// CHECK: %[[E:.+]] = kime.eltwise_kernel "t" x(%arg1 : {{.*}}) in1(%arg0 : {{.*}}) program <x in1 sub relu gelu_tanh sigmoid tanh>
// CHECK-NEXT: kime.pool_kernel "mean" x(%[[E]] : {{.*}}) cu(%arg2 : {{.*}})
func.func @format2(%x: !kime.tensor<[T:32, 8], f32>, %y: !kime.tensor<[T:32, 8], f32>, %cu: !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %d = kime.sub "d"(%y, %x) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %r = kime.relu "r"(%d) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %g = kime.gelu_tanh "g"(%r) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %s = kime.sigmoid "s"(%g) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %t = kime.tanh "t"(%s) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %m = kime.mean_seqs "mean"(%t, %cu) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 8], f32>
  return %m : !kime.tensor<[S:4, 8], f32>
}
