// kime-specialize-bucket bounds every symbolic size by the bucket and records the bucket.
// RUN: kime-opt %s --split-input-file --verify-diagnostics --kime-specialize-bucket="tokens=128 seqs=8 markers=32" | FileCheck %s

// CHECK-LABEL: func.func @g
// CHECK-SAME: (%[[IDS:.+]]: !kime.tensor<[T:128], ui32>, %[[CU:.+]]: !kime.tensor<[S+1:9], ui32>, %{{.+}}: !kime.tensor<[M:32], ui32>, %{{.+}}: !kime.tensor<[S+1:9], ui32>, %{{.+}}: !kime.tensor<[S:8], ui8>)
// CHECK-SAME: -> (!kime.tensor<[M:32], f32>, !kime.tensor<[S:8, 2], f32>)
// CHECK-SAME: kime.bucket = array<i64: 128, 8, 32>
func.func @g(%ids: !kime.tensor<[T], ui32>, %cu: !kime.tensor<[S+1], ui32>, %markers: !kime.tensor<[M], ui32>,
             %mcu: !kime.tensor<[S+1], ui32>, %qtype: !kime.tensor<[S], ui8>)
    -> (!kime.tensor<[M], f32>, !kime.tensor<[S, 2], f32>) attributes {kime.vocab = 16 : i64, kime.types = 2 : i64} {
  // Weights keep their static sizes.
  // CHECK: kime.weight "tok" : () -> !kime.tensor<[16, 8], f32>
  %tok = kime.weight "tok" : () -> !kime.tensor<[16, 8], f32>
  %wm = kime.weight "wm" : () -> !kime.tensor<[1, 8], f32>
  %wa = kime.weight "wa" : () -> !kime.tensor<[2, 8], f32>
  // CHECK-NEXT: kime.weight "wm"
  // CHECK-NEXT: kime.weight "wa"
  // CHECK-NEXT: kime.gather_rows "rows"({{.*}}) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:128], ui32>) -> !kime.tensor<[T:128, 8], f32>
  %x = kime.gather_rows "rows"(%tok, %ids) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  // CHECK-NEXT: kime.gather_markers "mk"({{.*}}) -> !kime.tensor<[M:32, 8], f32>
  %m = kime.gather_markers "mk"(%x, %cu, %markers, %mcu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[M], ui32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[M, 8], f32>
  %l = kime.linear "l"(%m, %wm) : (!kime.tensor<[M, 8], f32>, !kime.tensor<[1, 8], f32>) -> !kime.tensor<[M, 1], f32>
  // CHECK: kime.squeeze "logits"({{.*}}) : (!kime.tensor<[M:32, 1], f32>) -> !kime.tensor<[M:32], f32>
  %logits = kime.squeeze "logits"(%l) : (!kime.tensor<[M, 1], f32>) -> !kime.tensor<[M], f32>
  // CHECK-NEXT: kime.first_rows "first"({{.*}}) -> !kime.tensor<[S:8, 8], f32>
  %f = kime.first_rows "first"(%x, %cu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  %act = kime.linear "act"(%f, %wa) : (!kime.tensor<[S, 8], f32>, !kime.tensor<[2, 8], f32>) -> !kime.tensor<[S, 2], f32>
  return %logits, %act : !kime.tensor<[M], f32>, !kime.tensor<[S, 2], f32>
}

// -----

// A function is specialized once.
// expected-error @+1 {{the function is already specialized to a bucket}}
func.func @twice() attributes {kime.bucket = array<i64: 1, 1, 1>} {
  return
}
