// kime-verify-backend-contract lets through only planned kernels and weights, and names what
// codegen could not compile. (A kernel's roles and choices are its verifier's: invalid.mlir.)
// RUN: kime-opt %s --split-input-file --verify-diagnostics --kime-verify-backend-contract | FileCheck %s

// CHECK-LABEL: func.func @ok
func.func @ok(%x: !kime.tensor<[T:8, 4], f32>) -> !kime.tensor<[T:8, 4], f32>
    attributes {kime.bucket = array<i64: 8, 2, 2>, kime.arena = 128 : i64} {
  %w = kime.weight "w" : () -> !kime.tensor<[4, 4], f32>
  // CHECK: kime.linear_kernel "l"
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) {offset = 0 : i64} : !kime.tensor<[T:8, 4], f32>
  return %y : !kime.tensor<[T:8, 4], f32>
}

// -----

func.func @unfused(%x: !kime.tensor<[T:8, 4], f32>) -> !kime.tensor<[T:8, 4], f32>
    attributes {kime.bucket = array<i64: 8, 2, 2>, kime.arena = 0 : i64} {
  // expected-error @+1 {{backend contract: kime.silu "s" is not part of any kernel class}}
  %y = kime.silu "s"(%x) : (!kime.tensor<[T:8, 4], f32>) -> !kime.tensor<[T:8, 4], f32>
  return %y : !kime.tensor<[T:8, 4], f32>
}

// -----

func.func @unplanned(%x: !kime.tensor<[T:8, 4], f32>) -> !kime.tensor<[T:8, 4], f32>
    attributes {kime.bucket = array<i64: 8, 2, 2>, kime.arena = 0 : i64} {
  %w = kime.weight "w" : () -> !kime.tensor<[4, 4], f32>
  // expected-error @+1 {{backend contract: has no arena offset}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return %y : !kime.tensor<[T:8, 4], f32>
}

// -----

// expected-error @+1 {{backend contract: the function must be specialized to a bucket and planned}}
func.func @unspecialized() {
  return
}
