// A linear's epilogue is a program: the elementwise ops that only its value feeds, one after
// another, join it (input 0 is the linear's value after bias, activation, RoPE and residual;
// in1..in3 are the other tensors they read). A gated residual, an activation of a sum and a
// scaled branch each become one linear kernel.
// RUN: kime-opt %s --kime-fuse | FileCheck %s

// x + o * silu(g): the first linear in order (g) takes its SiLU, the product with o and the
// residual: x + o * silu(g) is "2" "1" "0s" "*" "+" in postfix.
// CHECK-LABEL: func.func @gated_residual
// CHECK-DAG: %[[WG:.+]] = kime.weight "g.weight"
// CHECK: %[[O:.+]] = kime.linear_kernel "o" x(%arg1 : {{.*}})
// CHECK-NEXT: kime.linear_kernel "out" x(%arg0 : {{.*}}) weight(%[[WG]] : {{.*}}) in1(%[[O]] : {{.*}}) in2(%arg0 : {{.*}}) program <in2 in1 x silu mul add>
// CHECK-NEXT: return
func.func @gated_residual(%x: !kime.tensor<[T:32, 8], f32>, %a: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %wg = kime.weight "g.weight" : () -> !kime.tensor<[8, 8], f32>
  %wo = kime.weight "o.weight" : () -> !kime.tensor<[8, 8], f32>
  %g = kime.linear "g"(%x, %wg) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %s = kime.silu "g.silu"(%g) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %o = kime.linear "o"(%a, %wo) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %m = kime.mul "gated"(%o, %s) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %r = kime.add "out"(%x, %m) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  return %r : !kime.tensor<[T:32, 8], f32>
}

// gelu(l1 + l2): l2, first in order, takes l1 as its residual, then the GELU as its program.
// CHECK-LABEL: func.func @activation_of_a_sum
// CHECK-DAG: %[[W2:.+]] = kime.weight "l2.weight"
// CHECK: %[[L1:.+]] = kime.linear_kernel "l1"
// CHECK-NEXT: kime.linear_kernel "act" x(%arg0 : {{.*}}) weight(%[[W2]] : {{.*}}) residual(%[[L1]] : {{.*}}) program <x gelu>
func.func @activation_of_a_sum(%x: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 12], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %w1 = kime.weight "l1.weight" : () -> !kime.tensor<[12, 8], f32>
  %w2 = kime.weight "l2.weight" : () -> !kime.tensor<[12, 8], f32>
  %l2 = kime.linear "l2"(%x, %w2) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:32, 12], f32>
  %l1 = kime.linear "l1"(%x, %w1) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[12, 8], f32>) -> !kime.tensor<[T:32, 12], f32>
  %s = kime.add "sum"(%l1, %l2) : (!kime.tensor<[T:32, 12], f32>, !kime.tensor<[T:32, 12], f32>) -> !kime.tensor<[T:32, 12], f32>
  %g = kime.gelu "act"(%s) : (!kime.tensor<[T:32, 12], f32>) -> !kime.tensor<[T:32, 12], f32>
  return %g : !kime.tensor<[T:32, 12], f32>
}

// x + gelu(o) * y: a scaled branch with its activation (the GELU of the fixed epilogue, then the
// program); a linear whose value an op reads twice keeps that op apart.
// CHECK-LABEL: func.func @scaled_branch
// CHECK: kime.linear_kernel "out" x(%arg0 : {{.*}}) weight({{.*}}) in1(%arg1 : {{.*}}) in2(%arg0 : {{.*}}) act(gelu) program <in2 x in1 mul add>
// CHECK-LABEL: func.func @a_value_read_twice
// CHECK: %[[O:.+]] = kime.linear_kernel "o"
// CHECK-NEXT: kime.eltwise_kernel "sq" x(%[[O]] : {{.*}}) program <x x mul>
func.func @scaled_branch(%x: !kime.tensor<[T:32, 8], f32>, %y: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %w = kime.weight "o.weight" : () -> !kime.tensor<[8, 8], f32>
  %o = kime.linear "o"(%x, %w) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %g = kime.gelu "g"(%o) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %m = kime.mul "m"(%g, %y) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %r = kime.add "out"(%x, %m) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  return %r : !kime.tensor<[T:32, 8], f32>
}

func.func @a_value_read_twice(%x: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %w = kime.weight "o.weight" : () -> !kime.tensor<[8, 8], f32>
  %o = kime.linear "o"(%x, %w) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %r = kime.mul "sq"(%o, %o) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  return %r : !kime.tensor<[T:32, 8], f32>
}

// y - relu(o), then tanh: a subtraction keeps its operands' order in the epilogue.
// CHECK-LABEL: func.func @subtracted_branch
// CHECK: kime.linear_kernel "t" x(%arg0 : {{.*}}) weight({{.*}}) in1(%arg1 : {{.*}}) program <in1 x relu sub tanh>
func.func @subtracted_branch(%x: !kime.tensor<[T:32, 8], f32>, %y: !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
    attributes {kime.bucket = array<i64: 32, 4, 8>} {
  %w = kime.weight "o.weight" : () -> !kime.tensor<[8, 8], f32>
  %o = kime.linear "o"(%x, %w) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[8, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %r = kime.relu "r"(%o) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %d = kime.sub "d"(%y, %r) : (!kime.tensor<[T:32, 8], f32>, !kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  %t = kime.tanh "t"(%d) : (!kime.tensor<[T:32, 8], f32>) -> !kime.tensor<[T:32, 8], f32>
  return %t : !kime.tensor<[T:32, 8], f32>
}
