// kime-fuse's patterns where they compete or choose: the linears' arithmetic (bf16 only where
// the weights make whole panels of 16 outputs and whole pairs of inputs), a SwiGLU found from
// whichever of its linears comes first, and a norm that both a head and a linear read (the head
// takes the norm in; the linear reads a norm kernel).
// RUN: kime-opt %s --kime-fuse=linear-arith=bf16 | FileCheck %s
// RUN: kime-opt %s --kime-fuse | FileCheck %s --check-prefix=F32
// RUN: not kime-opt %s --kime-fuse=linear-arith=f16 2>&1 | FileCheck %s --check-prefix=BAD
// int8 where the outputs make more than one panel and the inputs whole groups of 4 (a linear of
// one panel's outputs or fewer, like a head, stays f32):
// RUN: kime-opt %s --kime-fuse=linear-arith=int8 | FileCheck %s --check-prefix=INT8

// F32-NOT: arith(bf16)
// F32-NOT: arith(int8)
// INT8-LABEL: func.func @arith
// INT8: kime.linear_kernel "a" {{.*}} weight(%{{.+}} : !kime.tensor<[32, 16], f32>) arith(int8) :
// INT8: kime.linear_kernel "b" {{.*}} weight(%{{.+}} : !kime.tensor<[24, 16], f32>) : !kime.tensor<[T:32, 24], f32>
// INT8-LABEL: func.func @swiglu_up_first
// INT8: act(swiglu) arith(int8)
// INT8-LABEL: func.func @norm_for_head_and_linear
// INT8: kime.linear_kernel "l" x({{.*}}) weight(%{{.+}} : !kime.tensor<[16, 16], f32>) : !kime.tensor<[T:32, 16], f32>
// BAD: error: kime-fuse: linear-arith must be f32, bf16, int8 or int8pairs, not "f16"

// CHECK-LABEL: func.func @arith
// CHECK: kime.linear_kernel "a" {{.*}} weight(%{{.+}} : !kime.tensor<[32, 16], f32>) arith(bf16) :
// CHECK: kime.linear_kernel "b" {{.*}} weight(%{{.+}} : !kime.tensor<[24, 16], f32>) : !kime.tensor<[T:32, 24], f32>
func.func @arith(%x: !kime.tensor<[T:32, 16], f32>) -> (!kime.tensor<[T:32, 32], f32>, !kime.tensor<[T:32, 24], f32>) {
  %w = kime.weight "a.weight" : () -> !kime.tensor<[32, 16], f32>
  %v = kime.weight "b.weight" : () -> !kime.tensor<[24, 16], f32>
  %a = kime.linear "a"(%x, %w) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[32, 16], f32>) -> !kime.tensor<[T:32, 32], f32>
  %b = kime.linear "b"(%x, %v) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[24, 16], f32>) -> !kime.tensor<[T:32, 24], f32>
  return %a, %b : !kime.tensor<[T:32, 32], f32>, !kime.tensor<[T:32, 24], f32>
}

// CHECK-LABEL: func.func @swiglu_up_first
// CHECK-DAG: %[[WG:.+]] = kime.weight "gate.weight"
// CHECK-DAG: %[[WU:.+]] = kime.weight "up.weight"
// CHECK: kime.linear_kernel "act" x(%arg0 : {{.*}}) weight(%[[WG]] : {{.*}}) weight_up(%[[WU]] : {{.*}}) act(swiglu) arith(bf16)
// CHECK-NEXT: return
func.func @swiglu_up_first(%x: !kime.tensor<[T:32, 16], f32>) -> !kime.tensor<[T:32, 32], f32> {
  %wg = kime.weight "gate.weight" : () -> !kime.tensor<[32, 16], f32>
  %wu = kime.weight "up.weight" : () -> !kime.tensor<[32, 16], f32>
  %u = kime.linear "up"(%x, %wu) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[32, 16], f32>) -> !kime.tensor<[T:32, 32], f32>
  %g = kime.linear "gate"(%x, %wg) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[32, 16], f32>) -> !kime.tensor<[T:32, 32], f32>
  %s = kime.silu "gate.silu"(%g) : (!kime.tensor<[T:32, 32], f32>) -> !kime.tensor<[T:32, 32], f32>
  %m = kime.mul "act"(%s, %u) : (!kime.tensor<[T:32, 32], f32>, !kime.tensor<[T:32, 32], f32>) -> !kime.tensor<[T:32, 32], f32>
  return %m : !kime.tensor<[T:32, 32], f32>
}

// CHECK-LABEL: func.func @norm_for_head_and_linear
// CHECK: %[[N:.+]] = kime.norm_kernel "norm" x(%arg0 : {{.*}}) norm_weight
// CHECK-NEXT: kime.head_kernel "head" x(%arg0 : {{.*}}) cu(%arg1 : {{.*}}) norm_weight({{.*}}) weight({{.*}}) norm(rms, {{.*}}) rows(first)
// CHECK-NEXT: kime.linear_kernel "l" x(%[[N]] : {{.*}})
func.func @norm_for_head_and_linear(%x: !kime.tensor<[T:32, 16], f32>, %cu: !kime.tensor<[S+1:5], ui32>) -> (!kime.tensor<[S:4, 2], f32>, !kime.tensor<[T:32, 16], f32>) {
  %g = kime.weight "norm.weight" : () -> !kime.tensor<[16], f32>
  %wh = kime.weight "head.weight" : () -> !kime.tensor<[2, 16], f32>
  %wl = kime.weight "l.weight" : () -> !kime.tensor<[16, 16], f32>
  %n = kime.rms_norm "norm"(%x, %g) {eps = 1.0e-6 : f64} : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[16], f32>) -> !kime.tensor<[T:32, 16], f32>
  %r = kime.first_rows "head.rows"(%n, %cu) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[S:4, 16], f32>
  %h = kime.linear "head"(%r, %wh) : (!kime.tensor<[S:4, 16], f32>, !kime.tensor<[2, 16], f32>) -> !kime.tensor<[S:4, 2], f32>
  %l = kime.linear "l"(%n, %wl) : (!kime.tensor<[T:32, 16], f32>, !kime.tensor<[16, 16], f32>) -> !kime.tensor<[T:32, 16], f32>
  return %h, %l : !kime.tensor<[S:4, 2], f32>, !kime.tensor<[T:32, 16], f32>
}

// An embedding without a type table, its adds in another order: one embed kernel over the
// token and position tables; the token table alone is a gather.
// CHECK-LABEL: func.func @embed_without_types
// CHECK: kime.embed_kernel "sum" ids(%arg0 : {{.*}}) tok_table(%{{.+}} : !kime.tensor<[16, 8], f32>) pos(%{{.+}} : !kime.tensor<[32, 8], f32>) :
// CHECK: kime.gather_kernel "alone"
// With int8, an embedding table (a weight gathered by the ids or by the positions) is int8 rows:
// the embed kernel's token and position tables (arith(int8) says both) and the lone gathers'
// (LinearArithmetic.h):
// INT8-LABEL: func.func @embed_without_types
// INT8: kime.embed_kernel "sum" ids(%arg0 : {{.*}}) tok_table(%{{.+}} : !kime.tensor<[16, 8], f32>) pos({{.*}}) arith(int8) :
// INT8-DAG: kime.gather_kernel "alone" x(%{{.+}} : !kime.tensor<[16, 8], f32>) index(%arg0 : {{.*}}) arith(int8) gather(rows)
// INT8-DAG: kime.gather_kernel "pos.alone" x(%{{.+}} : !kime.tensor<[32, 8], f32>) index(%{{.+}} : {{.*}}) arith(int8) gather(rows)
func.func @embed_without_types(%ids: !kime.tensor<[T:32], ui32>, %cu: !kime.tensor<[S+1:5], ui32>) -> (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>)
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %tok = kime.weight "embed.tok" : () -> !kime.tensor<[16, 8], f32>
  %pt = kime.weight "embed.pos" : () -> !kime.tensor<[32, 8], f32>
  %pt2 = kime.weight "embed.pos2" : () -> !kime.tensor<[32, 8], f32>
  %t2 = kime.weight "embed.tok2" : () -> !kime.tensor<[16, 8], f32>
  %p = kime.positions "positions"(%cu) : (!kime.tensor<[S+1:5], ui32>) -> !kime.tensor<[T:32], ui32>
  %pr = kime.gather_rows "pos.rows"(%pt, %p) : (!kime.tensor<[32, 8], f32>, !kime.tensor<[T:32], ui32>) -> !kime.tensor<[T:32, 8], f32>
  %tr = kime.gather_rows "tok.rows"(%tok, %ids) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:32], ui32>) -> !kime.tensor<[T:32, 8], f32>
  %s = kime.add "sum"(%pr, %tr) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %a = kime.gather_rows "alone"(%t2, %ids) : (!kime.tensor<[16, 8], f32>, !kime.tensor<[T:32], ui32>) -> !kime.tensor<[T:32, 8], f32>
  %b = kime.gather_rows "pos.alone"(%pt2, %p) : (!kime.tensor<[32, 8], f32>, !kime.tensor<[T:32], ui32>) -> !kime.tensor<[T:32, 8], f32>
  return %s, %a, %b : !kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>
}
