// Every verifier message of the kime dialect, each with an expected-error.
// RUN: kime-opt %s --split-input-file --verify-diagnostics

func.func @case0(%t: !kime.tensor<[8], f32>, %i: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.gather_rows' op table must have rank 2, not [8]}}
  %r = kime.gather_rows "g"(%t, %i) : (!kime.tensor<[8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case1(%t: !kime.tensor<[4, 8], f32>, %i: !kime.tensor<[T], f32>) {
  // expected-error @+1 {{'kime.gather_rows' op index must be u32 or u8, not f32}}
  %r = kime.gather_rows "g"(%t, %i) : (!kime.tensor<[4, 8], f32>, !kime.tensor<[T], f32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case2(%t: !kime.tensor<[4, 8], ui32>, %i: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.gather_rows' op table must be f32, f16 or bf16, not u32}}
  %r = kime.gather_rows "g"(%t, %i) : (!kime.tensor<[4, 8], ui32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case3(%t: !kime.tensor<[T, 8], f32>, %i: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.gather_rows' op table must have static sizes, not [T, 8]}}
  %r = kime.gather_rows "g"(%t, %i) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case4(%x: !kime.tensor<[T, 8], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.expand_seqs' op x must have S rows, not T}}
  %r = kime.expand_seqs "e"(%x, %cu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case5(%x: !kime.tensor<[S, 8], f32>, %cu: !kime.tensor<[S], ui32>) {
  // expected-error @+1 {{'kime.expand_seqs' op cu must be [S+1] u32, not [S] u32}}
  %r = kime.expand_seqs "e"(%x, %cu) : (!kime.tensor<[S, 8], f32>, !kime.tensor<[S], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case6(%x: !kime.tensor<[T, S], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.first_rows' op x must have a static width, not [T, S]}}
  %r = kime.first_rows "f"(%x, %cu) : (!kime.tensor<[T, S], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  return
}

// -----

func.func @case7(%a: !kime.tensor<[T, 8], f32>, %b: !kime.tensor<[T, 4], f32>) {
  // expected-error @+1 {{'kime.add' op operands differ: [T, 8] and [T, 4]}}
  %r = kime.add "a"(%a, %b) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 4], f32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case8(%a: !kime.tensor<[T, 8], bf16>, %b: !kime.tensor<[T, 8], f32>) {
  // expected-error @+1 {{'kime.mul' op lhs must be f32 (or a weight of f16 or bf16), not bf16}}
  %r = kime.mul "m"(%a, %b) : (!kime.tensor<[T, 8], bf16>, !kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case9(%a: !kime.tensor<[T, 8], f32>, %b: !kime.tensor<[T, 8], f16>) {
  // expected-error @+1 {{'kime.mul' op rhs must be f32 (or a weight of f16 or bf16), not f16}}
  %r = kime.mul "m"(%a, %b) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 8], f16>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case10(%a: !kime.tensor<[T, 8], f16>) {
  // expected-error @+1 {{'kime.silu' op x must be f32 (or a weight of f16 or bf16), not f16}}
  %r = kime.silu "s"(%a) : (!kime.tensor<[T, 8], f16>) -> !kime.tensor<[T, 8], f16>
  return
}

// -----

func.func @case11(%a: !kime.tensor<[T, 8], f32>) {
  // expected-error @+1 {{'kime.gelu' op result must be [T, 8] f32, not [T, 4] f32}}
  %r = kime.gelu "g"(%a) : (!kime.tensor<[T, 8], f32>) -> !kime.tensor<[T, 4], f32>
  return
}

// -----

func.func @case12(%x: !kime.tensor<[T, 8], f32>, %g: !kime.tensor<[7], f32>) {
  // expected-error @+1 {{'kime.rms_norm' op weight [7] does not match input width 8}}
  %r = kime.rms_norm "n"(%x, %g) {eps = 1.0e-6 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[7], f32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case13(%x: !kime.tensor<[T, 8], f32>, %g: !kime.tensor<[8], f32>) {
  // expected-error @+1 {{'kime.rms_norm' op eps must be in (0, 1), not 2.000000}}
  %r = kime.rms_norm "n"(%x, %g) {eps = 2.0 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case14(%x: !kime.tensor<[T, 8], f32>, %g: !kime.tensor<[8], f32>, %b: !kime.tensor<[7], f32>) {
  // expected-error @+1 {{'kime.layer_norm' op bias [7] does not match input width 8}}
  %r = kime.layer_norm "n"(%x, %g, %b) {eps = 1.0e-6 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[8], f32>, !kime.tensor<[7], f32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case15(%x: !kime.tensor<[T], f32>, %g: !kime.tensor<[8], f32>) {
  // expected-error @+1 {{'kime.rms_norm' op x must have rank 2, not [T]}}
  %r = kime.rms_norm "n"(%x, %g) {eps = 1.0e-6 : f64} : (!kime.tensor<[T], f32>, !kime.tensor<[8], f32>) -> !kime.tensor<[T], f32>
  return
}

// -----

func.func @case16(%x: !kime.tensor<[T, 8], f32>, %w: !kime.tensor<[4, 7], f32>) {
  // expected-error @+1 {{'kime.linear' op weight [4, 7] does not match input width 8}}
  %r = kime.linear "l"(%x, %w) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[4, 7], f32>) -> !kime.tensor<[T, 4], f32>
  return
}

// -----

func.func @case17(%x: !kime.tensor<[T, 8], f32>, %w: !kime.tensor<[4, 8], f32>, %b: !kime.tensor<[3], f32>) {
  // expected-error @+1 {{'kime.linear' op bias [3] does not match output width 4}}
  %r = kime.linear "l"(%x, %w, %b) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[4, 8], f32>, !kime.tensor<[3], f32>) -> !kime.tensor<[T, 4], f32>
  return
}

// -----

func.func @case18(%x: !kime.tensor<[T, 8], f32>, %p: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.rope' op x heads must be positive, not 0}}
  %r = kime.rope "r"(%x, %p) {heads = 0 : i64, theta = 1.0e4 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case19(%x: !kime.tensor<[T, 8], f32>, %p: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.rope' op x width 8 is not a multiple of 3 heads}}
  %r = kime.rope "r"(%x, %p) {heads = 3 : i64, theta = 1.0e4 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case20(%x: !kime.tensor<[T, 8], f32>, %p: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.rope' op head size 1 is odd}}
  %r = kime.rope "r"(%x, %p) {heads = 8 : i64, theta = 1.0e4 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case21(%x: !kime.tensor<[T, 8], f32>, %p: !kime.tensor<[S], ui32>) {
  // expected-error @+1 {{'kime.rope' op pos must be [T] u32 like the rows of x, not [S] u32}}
  %r = kime.rope "r"(%x, %p) {heads = 2 : i64, theta = 1.0e4 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case22(%x: !kime.tensor<[T, 8], f32>, %p: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.rope' op theta must be positive, not -1.000000}}
  %r = kime.rope "r"(%x, %p) {heads = 2 : i64, theta = -1.0 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case23(%q: !kime.tensor<[T, 8], f32>, %k: !kime.tensor<[T, 4], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op 2 heads are not a multiple of 3 kv heads}}
  %r = kime.attention "a"(%q, %k, %k, %cu) {heads = 2 : i64, kv_heads = 3 : i64, scale = 0.5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case24(%q: !kime.tensor<[T, 8], f32>, %k: !kime.tensor<[T, 6], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op k width 6 is not 1 kv heads of size 4}}
  %r = kime.attention "a"(%q, %k, %k, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 6], f32>, !kime.tensor<[T, 6], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case25(%q: !kime.tensor<[T, 8], f32>, %k: !kime.tensor<[T, 4], f32>, %v: !kime.tensor<[T, 2], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op v width 2 is not 1 kv heads of size 4}}
  %r = kime.attention "a"(%q, %k, %v, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[T, 2], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case26(%q: !kime.tensor<[T, 8], f32>, %k: !kime.tensor<[T, 4], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op scale must be positive, not 0.000000}}
  %r = kime.attention "a"(%q, %k, %k, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.0 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case27(%q: !kime.tensor<[S, 8], f32>, %k: !kime.tensor<[T, 4], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op q must have T rows, not S}}
  %r = kime.attention "a"(%q, %k, %k, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : (!kime.tensor<[S, 8], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 8], f32>
  return
}

// -----

func.func @case28(%q: !kime.tensor<[T, 8], f32>, %k: !kime.tensor<[M, 4], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op k must have T rows, not M}}
  %r = kime.attention "a"(%q, %k, %k, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[M, 4], f32>, !kime.tensor<[M, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case29(%q: !kime.tensor<[T, 8], f32>, %k: !kime.tensor<[T, 4], f32>, %v: !kime.tensor<[S, 4], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.attention' op v must have T rows, not S}}
  %r = kime.attention "a"(%q, %k, %v, %cu) {heads = 2 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : (!kime.tensor<[T, 8], f32>, !kime.tensor<[T, 4], f32>, !kime.tensor<[S, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case30(%x: !kime.tensor<[T, 8], f32>, %cu: !kime.tensor<[S+1], ui32>, %m: !kime.tensor<[T], ui32>) {
  // expected-error @+1 {{'kime.gather_markers' op markers must be [M] u32, not [T] u32}}
  %r = kime.gather_markers "g"(%x, %cu, %m, %cu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[T], ui32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case31(%x: !kime.tensor<[T, 8], f32>, %cu: !kime.tensor<[S+1], ui32>, %m: !kime.tensor<[M], ui32>, %mcu: !kime.tensor<[S+1], ui8>) {
  // expected-error @+1 {{'kime.gather_markers' op mcu must be [S+1] u32, not [S+1] u8}}
  %r = kime.gather_markers "g"(%x, %cu, %m, %mcu) : (!kime.tensor<[T, 8], f32>, !kime.tensor<[S+1], ui32>, !kime.tensor<[M], ui32>, !kime.tensor<[S+1], ui8>) -> !kime.tensor<[M, 8], f32>
  return
}

// -----

func.func @case32(%x: !kime.tensor<[M, 2], f32>) {
  // expected-error @+1 {{'kime.squeeze' op x must be [N, 1], not [M, 2]}}
  %r = kime.squeeze "s"(%x) : (!kime.tensor<[M, 2], f32>) -> !kime.tensor<[M], f32>
  return
}

// -----

func.func @case33() {
  // expected-error @+1 {{'kime.weight' op weight must have static sizes, not [T, 8]}}
  %r = kime.weight "w" : () -> !kime.tensor<[T, 8], f32>
  return
}

// -----

func.func @case34() {
  // expected-error @+1 {{'kime.weight' op weight must be f32, f16 or bf16, not u8}}
  %r = kime.weight "w" : () -> !kime.tensor<[4], ui8>
  return
}

// -----

// expected-error @+1 {{element type must be f32, f16, bf16, ui32 or ui8, not 'i32'}}
func.func @bad_type(%x: !kime.tensor<[T], i32>) {
  return
}

// -----

// expected-error @+1 {{sizes must be positive, not 0}}
func.func @bad_type(%x: !kime.tensor<[0, 8], f32>) {
  return
}

// -----

// expected-error @+1 {{a symbol's offset must be >= 0}}
func.func @bad_type(%x: !kime.tensor<[S+-1], ui32>) {
  return
}

// -----

// expected-error @+1 {{expected a size or one of T, S, M, R, not 'X'}}
func.func @bad_type(%x: !kime.tensor<[X, 8], f32>) {
  return
}

// -----

func.func @kernel_class(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // The class is the op: there is no kernel op of another class.
  // expected-error @+1 {{custom op 'kime.conv_kernel' is unknown}}
  %y = kime.conv_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_unknown_role(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // Operands are named by role: a name that is no role of the class does not parse.
  // expected-error @+1 {{custom op 'kime.linear_kernel' expected 'weight'}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) gamma(%w : !kime.tensor<[4, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_role_of_another_class(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // A linear's input comes normed by a norm kernel: a linear has no norm_weight operand.
  // expected-error @+1 {{custom op 'kime.linear_kernel' expected 'weight'}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) norm_weight(%g : !kime.tensor<[4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_missing_role(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{custom op 'kime.linear_kernel' expected 'weight'}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_choice_of_another_class(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // A head's rows are no choice of a linear.
  // expected-error @+1 {{expected ':'}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) rows(first) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_arith_of_a_norm(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{expected ':'}}
  %y = kime.norm_kernel "n" x(%x : !kime.tensor<[T:8, 4], f32>) norm_weight(%g : !kime.tensor<[4], f32>) norm(rms, 1.0e-6) arith(bf16) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_bf16_table(%ids: !kime.tensor<[T:8], ui32>) {
  %t = kime.weight "tok" : () -> !kime.tensor<[16, 4], f32>
  // expected-error @+1 {{'kime.gather_kernel' op arith(bf16) is for linears; an embed or gather kernel takes arith(int8) only}}
  %y = kime.gather_kernel "g" x(%t : !kime.tensor<[16, 4], f32>) index(%ids : !kime.tensor<[T:8], ui32>) arith(bf16) gather(rows) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_int8_rows_of_a_value(%x: !kime.tensor<[T:8, 4], f32>, %ids: !kime.tensor<[T:8], ui32>) {
  // expected-error @+1 {{'kime.gather_kernel' op arith(int8) stores a weight's rows as int8: a gather(rows) of a weight or an embed kernel's tok_table}}
  %y = kime.gather_kernel "g" x(%x : !kime.tensor<[T:8, 4], f32>) index(%ids : !kime.tensor<[T:8], ui32>) arith(int8) gather(rows) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_norm_without_norm(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{custom op 'kime.norm_kernel' expected 'norm'}}
  %y = kime.norm_kernel "n" x(%x : !kime.tensor<[T:8, 4], f32>) norm_weight(%g : !kime.tensor<[4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_layer_norm_without_bias(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{'kime.norm_kernel' op a norm kernel with norm(layer, ...) needs its "norm_bias" operand}}
  %y = kime.norm_kernel "n" x(%x : !kime.tensor<[T:8, 4], f32>) norm_weight(%g : !kime.tensor<[4], f32>) norm(layer, 1.0e-5) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_swiglu_without_up(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{'kime.linear_kernel' op a linear kernel with act(swiglu) needs its "weight_up" operand}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) act(swiglu) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_rope_without_cu(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // RoPE's positions come from cu.
  // expected-error @+1 {{'kime.linear_kernel' op a linear kernel with rope(...) needs its "cu" operand}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) rope(1, 1.0e4) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_cu_without_rope(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{'kime.linear_kernel' op a linear kernel with "cu" operand needs rope(...)}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) cu(%cu : !kime.tensor<[S+1:3], ui32>) weight(%w : !kime.tensor<[4, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_attention_without_heads(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{custom op 'kime.attention_kernel' expected 'heads'}}
  %y = kime.attention_kernel "a" q(%x : !kime.tensor<[T:8, 4], f32>) k(%x : !kime.tensor<[T:8, 4], f32>) v(%x : !kime.tensor<[T:8, 4], f32>) cu(%cu : !kime.tensor<[S+1:3], ui32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_first_rows_with_markers(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %g: !kime.tensor<[4], f32>, %cu: !kime.tensor<[S+1:3], ui32>) {
  // expected-error @+1 {{'kime.head_kernel' op a head kernel with "markers" operand needs rows(markers)}}
  %y = kime.head_kernel "h" x(%x : !kime.tensor<[T:8, 4], f32>) cu(%cu : !kime.tensor<[S+1:3], ui32>) markers(%cu : !kime.tensor<[S+1:3], ui32>) mcu(%cu : !kime.tensor<[S+1:3], ui32>) weight(%w : !kime.tensor<[4, 4], f32>) rows(first) : !kime.tensor<[S:2, 4], f32>
  return
}

// -----

func.func @gather_without_kind(%x: !kime.tensor<[T:8, 4], f32>, %i: !kime.tensor<[T:8], ui32>) {
  // expected-error @+1 {{custom op 'kime.gather_kernel' expected 'gather'}}
  %y = kime.gather_kernel "g" x(%x : !kime.tensor<[T:8, 4], f32>) index(%i : !kime.tensor<[T:8], ui32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @gather_rows_without_index(%x: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{'kime.gather_kernel' op a gather kernel with gather(rows) needs its "index" operand}}
  %y = kime.gather_kernel "g" x(%x : !kime.tensor<[T:8, 4], f32>) gather(rows) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @gather_markers_without_mcu(%x: !kime.tensor<[T:8, 4], f32>, %cu: !kime.tensor<[S+1:3], ui32>, %m: !kime.tensor<[M:4], ui32>) {
  // expected-error @+1 {{'kime.gather_kernel' op a gather kernel with gather(markers) needs its "mcu" operand}}
  %y = kime.gather_kernel "g" x(%x : !kime.tensor<[T:8, 4], f32>) cu(%cu : !kime.tensor<[S+1:3], ui32>) markers(%m : !kime.tensor<[M:4], ui32>) gather(markers) : !kime.tensor<[M:4, 4], f32>
  return
}

// -----

func.func @eltwise_reads_a_missing_input(%x: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{'kime.eltwise_kernel' op program<x in1 add> reads in1, which the kernel does not have}}
  %y = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) program <x in1 add> : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @eltwise_leaves_two_values(%x: !kime.tensor<[T:8, 4], f32>, %z: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{program<x in1>: leaves 2 values, not 1}}
  %y = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) in1(%z : !kime.tensor<[T:8, 4], f32>) program <x in1> : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @eltwise_unknown_step(%x: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{program: unknown step "tanhh"}}
  %y = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) program <x tanhh> : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @eltwise_function_without_its_values(%x: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{program<x add>: add takes two values, but the stack holds 1}}
  %y = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) program <x add> : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @eltwise_without_program(%x: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{custom op 'kime.eltwise_kernel' expected 'program'}}
  %y = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @pool_without_cu(%x: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{custom op 'kime.pool_kernel' expected 'cu'}}
  %y = kime.pool_kernel "p" x(%x : !kime.tensor<[T:8, 4], f32>) : !kime.tensor<[S:2, 4], f32>
  return
}

// -----

func.func @mean_of_sequence_rows(%x: !kime.tensor<[S, 4], f32>, %cu: !kime.tensor<[S+1], ui32>) {
  // expected-error @+1 {{'kime.mean_seqs' op x must have T rows, not S}}
  %y = kime.mean_seqs "m"(%x, %cu) : (!kime.tensor<[S, 4], f32>, !kime.tensor<[S+1], ui32>) -> !kime.tensor<[S, 4], f32>
  return
}

// -----

func.func @eltwise_unread_input(%x: !kime.tensor<[T:8, 4], f32>, %z: !kime.tensor<[T:8, 4], f32>) {
  // expected-error @+1 {{'kime.eltwise_kernel' op program<x silu> never reads its "in1" operand}}
  %y = kime.eltwise_kernel "e" x(%x : !kime.tensor<[T:8, 4], f32>) in1(%z : !kime.tensor<[T:8, 4], f32>) program <x silu> : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @rope_without_rope(%x: !kime.tensor<[T:8, 4], f32>, %i: !kime.tensor<[T:8], ui32>) {
  // expected-error @+1 {{custom op 'kime.rope_kernel' expected 'rope'}}
  %y = kime.rope_kernel "r" x(%x : !kime.tensor<[T:8, 4], f32>) index(%i : !kime.tensor<[T:8], ui32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @up_bias_without_swiglu(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>, %b: !kime.tensor<[4], f32>) {
  // expected-error @+1 {{'kime.linear_kernel' op a linear kernel with "bias_up" operand needs act(swiglu)}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) bias_up(%b : !kime.tensor<[4], f32>) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

// A kernel's choices are the names of kime/core/KernelChoices.h; `none` is written by leaving the
// choice out.
func.func @kernel_norm_named_none(%x: !kime.tensor<[T:8, 4], f32>, %g: !kime.tensor<[4], f32>) {
  // expected-error @+1 {{expected norm rms or layer, not 'none'}}
  %y = kime.norm_kernel "n" x(%x : !kime.tensor<[T:8, 4], f32>) norm_weight(%g : !kime.tensor<[4], f32>) norm(none, 1.0e-6) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_unknown_activation(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>) {
  // expected-error @+1 {{expected activation gelu or swiglu, not 'relu'}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) act(relu) : !kime.tensor<[T:8, 4], f32>
  return
}

// -----

func.func @kernel_unknown_arithmetic(%x: !kime.tensor<[T:8, 4], f32>, %w: !kime.tensor<[4, 4], f32>) {
  // expected-error @+1 {{expected arithmetic f32, bf16, int8 or int8pairs, not 'f16'}}
  %y = kime.linear_kernel "l" x(%x : !kime.tensor<[T:8, 4], f32>) weight(%w : !kime.tensor<[4, 4], f32>) arith(f16) : !kime.tensor<[T:8, 4], f32>
  return
}
