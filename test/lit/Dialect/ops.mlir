// Every kime op parses, verifies and prints back; printing twice gives the same text.
// RUN: kime-opt %s | kime-opt | FileCheck %s

// CHECK-LABEL: func.func @every_op
// CHECK-SAME: kime.types = 3 : i64, kime.vocab = 50 : i64
func.func @every_op(%ids: !kime.tensor<[T], ui32>, %cu: !kime.tensor<[S+1], ui32>,
                    %markers: !kime.tensor<[M], ui32>, %mcu: !kime.tensor<[S+1], ui32>,
                    %qtype: !kime.tensor<[S], ui8>)
    -> (!kime.tensor<[M], f32>, !kime.tensor<[S, 2], f32>)
    attributes {kime.vocab = 50 : i64, kime.types = 3 : i64} {
  // CHECK-DAG: %[[TOK:.+]] = kime.weight "embed.tok" : () -> !kime.tensor<[50, 8], bf16>
  // CHECK-DAG: %[[TYP:.+]] = kime.weight "embed.type" : () -> !kime.tensor<[3, 8], f16>
  %tok = kime.weight "embed.tok" : () -> !kime.tensor<[50, 8], bf16>
  %typ = kime.weight "embed.type" : () -> !kime.tensor<[3, 8], f16>
  %g = kime.weight "norm.weight" : () -> !kime.tensor<[8], f32>
  %b = kime.weight "norm.bias" : () -> !kime.tensor<[8], f32>
  %wq = kime.weight "q.weight" : () -> !kime.tensor<[8, 8], f32>
  %wk = kime.weight "k.weight" : () -> !kime.tensor<[4, 8], f32>
  %bk = kime.weight "k.bias" : () -> !kime.tensor<[4], f32>
  %wm = kime.weight "head.marker.weight" : () -> !kime.tensor<[1, 8], f32>
  %wa = kime.weight "head.act.weight" : () -> !kime.tensor<[2, 8], f32>

  // CHECK: %[[ROWS:.+]] = kime.gather_rows "tok"(%[[TOK]], %arg0) : (!kime.tensor<[50, 8], bf16>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  %rows = kime.gather_rows "tok"(%tok, %ids) : (!kime.tensor<[50, 8], bf16>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: %[[SEQ:.+]] = kime.gather_rows "typ"(%[[TYP]], %arg4)
  %seq = kime.gather_rows "typ"(%typ, %qtype) : (!kime.tensor<[3, 8], f16>, !kime.tensor<[S], ui8>) -> !kime.tensor<[S, 8], f32>
  // CHECK-NEXT: kime.expand_seqs "typ.rows"(%[[SEQ]], %arg1) : (!kime.tensor<[S, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  %tr = kime.expand_seqs "typ.rows"(%seq, %cu) : (!kime.tensor<[S, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.positions "pos"(%arg1) : (!kime.tensor<[S+1], ui32>) -> !kime.tensor<[T], ui32>
  %pos = kime.positions "pos"(%cu) : (!kime.tensor<[S+1], ui32>) -> !kime.tensor<[T], ui32>
  // CHECK-NEXT: kime.add "x"
  %x = kime.add "x"(%rows, %tr) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.rms_norm "n1"({{.*}}) {eps = 9.9999999999999995E-7 : f64}
  %n1 = kime.rms_norm "n1"(%x, %g) {eps = 1.0e-6 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.layer_norm "n2"
  %n2 = kime.layer_norm "n2"(%n1, %g, %b) {eps = 1.0e-5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.linear "q"({{.*}}) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T, 8], f32>
  %q = kime.linear "q"(%n2, %wq) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.linear "k"({{.*}}) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[4, 8], f32>, !kime.tensor<[4], f32>) -> !kime.tensor<[T, 4], f32>
  %k = kime.linear "k"(%n2, %wk, %bk) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[4, 8], f32>, !kime.tensor<[4], f32>) -> !kime.tensor<[T, 4], f32>
  // CHECK-NEXT: kime.rope "q.rope"({{.*}}) {heads = 2 : i64, theta = 1.000000e+04 : f64}
  %qr = kime.rope "q.rope"(%q, %pos) {heads = 2 : i64, theta = 1.0e4 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.attention "attn"({{.*}}) {heads = 2 : i64, kv_heads = 1 : i64, scale = 5.000000e-01 : f64}
  %at = kime.attention "attn"(%qr, %k, %k, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.silu "s"
  %s = kime.silu "s"(%at) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.gelu "e"
  %e = kime.gelu "e"(%s) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.mul "m0"
  %m0 = kime.mul "m0"(%s, %e) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.sub "d"
  %d = kime.sub "d"(%m0, %s) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.gelu_tanh "gt"
  %gt = kime.gelu_tanh "gt"(%d) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.relu "r"
  %r = kime.relu "r"(%gt) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.tanh "th"
  %th = kime.tanh "th"(%r) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.sigmoid "m"
  %m = kime.sigmoid "m"(%th) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.gather_markers "mk"({{.*}}) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[M], ui32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[M, 8], f32>
  %mk = kime.gather_markers "mk"(%m, %cu, %markers, %mcu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[M], ui32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[M, 8], f32>
  %lg = kime.linear "lg"(%mk, %wm) : (!kime.tensor<[M, 8], f32>, !kime.tensor<[1, 8], f32>) -> !kime.tensor<[M, 1], f32>
  // CHECK: kime.squeeze "logits"({{.*}}) : (!kime.tensor<[M, 1], f32>) -> !kime.tensor<[M], f32>
  %logits = kime.squeeze "logits"(%lg) : (!kime.tensor<[M, 1], f32>) -> !kime.tensor<[M], f32>
  // CHECK-NEXT: kime.first_rows "first"({{.*}}) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  %first = kime.first_rows "first"(%m, %cu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  // CHECK-NEXT: kime.mean_seqs "mean"({{.*}}) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  %mean = kime.mean_seqs "mean"(%m, %cu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  %pooled = kime.add "pooled"(%first, %mean) : (!kime.tensor<[S, 8], f32>, !kime.tensor<[S, 8], f32>) -> !kime.tensor<[S, 8], f32>
  %act = kime.linear "act"(%pooled, %wa) : (!kime.tensor<[S, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[S, 2], f32>
  // CHECK: return %{{.+}}, %{{.+}} : !kime.tensor<[M], f32>, !kime.tensor<[S, 2], f32>
  return %logits, %act : !kime.tensor<[M], f32>, !kime.tensor<[S, 2], f32>
}

// A bucket-specialized type keeps its bound through a round trip.
// CHECK-LABEL: func.func @bounded
// CHECK-SAME: !kime.tensor<[T:128, 8], f32>
func.func @bounded(%x: !kime.tensor<[T:128, 8], f32>) -> !kime.tensor<[T:128, 8], f32> {
  return %x : !kime.tensor<[T:128, 8], f32>
}

// Kernels print their program and class as they were written.
// CHECK-LABEL: func.func @kernels
// CHECK: %[[E:.+]] = kime.eltwise_kernel "e" x(%arg0 : {{.*}}) in1(%arg1 : {{.*}}) program <in1 x sub gelu_tanh relu tanh sigmoid> : !kime.tensor<[T:8, 4], f32>
// CHECK-NEXT: kime.pool_kernel "p" x(%[[E]] : {{.*}}) cu(%arg2 : {{.*}}) : !kime.tensor<[S:2, 4], f32>
func.func @kernels(%x: !kime.tensor<[T:8, 4], f32>, %y: !kime.tensor<[T:8, 4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) -> !kime.tensor<[S:2, 4], f32> {
  %e = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) in1(%y : !kime.tensor<[T:8, 4], f32>) program <in1 x sub gelu_tanh relu tanh sigmoid> : !kime.tensor<[T:8, 4], f32>
  %p = kime.pool_kernel "p" x(%e : !kime.tensor<[T:8, 4], f32>) cu(%cu : !kime.tensor<[S+1:3], ui32>) : !kime.tensor<[S:2, 4], f32>
  return %p : !kime.tensor<[S:2, 4], f32>
}
