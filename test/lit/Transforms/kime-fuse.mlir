// kime-fuse turns a layer of Graph ops into kernels: embed; the attention norm once as a norm
// kernel that q, k and v read; q/k/v linears with RoPE as epilogue; attention; the o-projection
// with its residual add; the MLP norm; one SwiGLU kernel over gate and up; the down-projection
// with its residual; and the two heads (each norms only the rows it reads). Nothing but weights
// and kernels is left.
// The input is tiny.json (test/lit/Import/Inputs) imported and specialized to tokens=64, seqs=4,
// markers=16.
// RUN: kime-opt %s --kime-fuse | FileCheck %s
// RUN: kime-opt %s --kime-fuse | FileCheck %s --check-prefix=GONE

// CHECK-LABEL: func.func @tiny
// CHECK-DAG: %[[NORM1:.+]] = kime.weight "layers.0.attn_norm.weight"
// CHECK-DAG: %[[WQ:.+]] = kime.weight "layers.0.attn.q.weight"
// CHECK: %[[X:.+]] = kime.embed_kernel "embed" ids(%arg0 : {{.*}}) qtype(%arg4 : {{.*}}) cu(%arg1 : {{.*}}) tok_table(%{{.+}} : {{.*}}) type_table(%{{.+}} : {{.*}}) : !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[N:.+]] = kime.norm_kernel "layers.0.attn_norm" x(%[[X]] : {{.*}}) norm_weight(%[[NORM1]] : {{.*}}) norm(rms, 9.9999999999999995E-7) : !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[V:.+]] = kime.linear_kernel "layers.0.attn.v" x(%[[N]] : {{.*}}) weight(%{{.+}} : {{.*}}) : !kime.tensor<[T:64, 4], f32>
// CHECK-NEXT: %[[Q:.+]] = kime.linear_kernel "layers.0.attn.q" x(%[[N]] : {{.*}}) cu(%arg1 : {{.*}}) weight(%[[WQ]] : {{.*}}) rope(2, 1.000000e+04) : !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[K:.+]] = kime.linear_kernel "layers.0.attn.k" x(%[[N]] : {{.*}}) cu(%arg1 : {{.*}}) weight(%{{.+}} : {{.*}}) rope(1, 1.000000e+04) : !kime.tensor<[T:64, 4], f32>
// CHECK-NEXT: %[[A:.+]] = kime.attention_kernel "layers.0.attn" q(%[[Q]] : {{.*}}) k(%[[K]] : {{.*}}) v(%[[V]] : {{.*}}) cu(%arg1 : {{.*}}) heads(2, 1, 5.000000e-01) : !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[R1:.+]] = kime.linear_kernel "layers.0.attn.residual" x(%[[A]] : {{.*}}) weight(%{{.+}} : {{.*}}) residual(%[[X]] : {{.*}}) : !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[M:.+]] = kime.norm_kernel "layers.0.mlp_norm" x(%[[R1]] : {{.*}}) norm_weight(%{{.+}} : {{.*}}) norm(rms, {{.*}}) :
// CHECK-NEXT: %[[H:.+]] = kime.linear_kernel "layers.0.mlp.act" x(%[[M]] : {{.*}}) weight(%{{.+}} : {{.*}}) weight_up(%{{.+}} : {{.*}}) act(swiglu) : !kime.tensor<[T:64, 12], f32>
// CHECK-NEXT: %[[R2:.+]] = kime.linear_kernel "layers.0.mlp.residual" x(%[[H]] : {{.*}}) weight(%{{.+}} : {{.*}}) residual(%[[R1]] : {{.*}}) : !kime.tensor<[T:64, 8], f32>
// CHECK-NEXT: %[[L:.+]] = kime.head_kernel "head.marker.logits" x(%[[R2]] : {{.*}}) cu(%arg1 : {{.*}}) markers(%arg2 : {{.*}}) mcu(%arg3 : {{.*}}) norm_weight(%{{.+}} : {{.*}}) weight(%{{.+}} : {{.*}}) bias(%{{.+}} : {{.*}}) norm(rms, {{.*}}) rows(markers) : !kime.tensor<[M:16], f32>
// CHECK-NEXT: %[[ACT:.+]] = kime.head_kernel "head.act" x(%[[R2]] : {{.*}}) cu(%arg1 : {{.*}}) norm_weight(%{{.+}} : {{.*}}) weight(%{{.+}} : {{.*}}) bias(%{{.+}} : {{.*}}) norm(rms, {{.*}}) rows(first) : !kime.tensor<[S:4, 2], f32>
// CHECK-NEXT: return %[[L]], %[[ACT]]

// GONE-NOT: kime.rms_norm "
// GONE-NOT: kime.linear "
// GONE-NOT: kime.positions "
// GONE-NOT: kime.rope "
// GONE-NOT: kime.silu "
// GONE-NOT: kime.add "

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

