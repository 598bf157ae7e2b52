//===- Passes.td - kime's passes ------------------------------------------===//
#ifndef KIME_PASSES_TD
#define KIME_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeBucket : Pass<"kime-specialize-bucket", "::mlir::func::FuncOp"> {
  let summary = "Bounds the symbolic sizes by one bucket's static sizes";
  let description = [{
    Every `T`, `S`, `S+1` and `M` in the function's types gets the bucket's bound
    (`T` becomes `T:128`), and the function records the bucket as `kime.bucket`. The sizes stay
    symbolic: the actual counts of a batch still reach the kernels at run time, so no kernel
    computes padding rows on the CPU; the bounds fix tiles and the arena at compile time.

    Before: `!kime.tensor<[T, 256], f32>`. After (tokens=128): `!kime.tensor<[T:128, 256], f32>`.
  }];
  let options = [
    Option<"tokens", "tokens", "int64_t", "0", "the bucket's token bound">,
    Option<"seqs", "seqs", "int64_t", "0", "the bucket's sequence bound">,
    Option<"markers", "markers", "int64_t", "0", "the bucket's marker bound">,
  ];
}

def PruneRows : Pass<"kime-prune-rows", "::mlir::func::FuncOp"> {
  let summary = "Computes what only the heads read for the rows they read";
  let description = [{
    The heads read each sequence's first token and each marked token: the output rows,
    `R = S + M`. Every op whose result reaches nothing but the heads, row for row (norms,
    linears, elementwise ops, RoPE, and an attention through its queries), is retyped to `R`
    rows; what such an op reads from outside is picked by `kime.output_rows`. An attention keeps every key and value of the sequence
    and gets `qseq`, the sequence of each query row. In the encoder this is the whole last layer
    after its keys and values. Skipped when the bucket allows as many output rows as tokens.

    Before: `kime.linear ... -> !kime.tensor<[T:128, 256], f32>` feeding only the heads.
    After: `kime.linear ... -> !kime.tensor<[R:40, 256], f32>` (seqs 8 + markers 32).
  }];
}

def Fuse : Pass<"kime-fuse", "::mlir::func::FuncOp"> {
  let summary = "Groups Graph ops into kernels of the classes codegen knows";
  let description = [{
    Rewrites the Graph ops into kernel ops, one op per class (`kime.embed_kernel`, ...):
    - `embed`: token rows (+ question-type rows) (+ learned position rows), the adds in any
      order, one pass;
    - `norm`: rms or layer norm of rows that linears read, once (not in each linear's
      prologue, which would norm every row again per block of output columns);
    - `linear`: a linear with its epilogue (bias, RoPE of the output heads, GELU, SiLU(gate)·up
      for two weights, residual add);
    - `attention`: variable-length attention per (sequence, head), no `[T, T]` buffer;
    - `head`: the final norm of only the rows a head reads (markers or first rows), then the
      head's linear.
    Before: `rms_norm`, `linear`, `silu`, `linear`, `mul`, `linear`, `add` (a SwiGLU block).
    After: a `kime.norm_kernel` and two `kime.linear_kernel` ops.
    A linear's epilogue continues as a program: the elementwise ops that only its value feeds.
    Each of these is a rewrite pattern; where two match the same op the more specific one
    (higher benefit) wins: a head's linear, then SwiGLU's two linears, then a plain linear.
    Then whatever no fused pattern took becomes a generic kernel: `gather` (gather_rows,
    expand_seqs, first_rows, gather_markers), `eltwise` (a chain of add, mul, silu, gelu that
    only one another read, up to four inputs), `rope` (RoPE that no linear computes), `norm`
    (a norm of rows of any level); a squeeze stays a view of its operand.
  }];
  let options = [
    Option<"linearArith", "linear-arith", "std::string", "\"f32\"",
           "the linears' CPU arithmetic: f32, or bf16 where a linear's outputs make whole "
           "panels of 16 columns and its inputs whole pairs, or int8 where they make more than "
           "one panel and its inputs whole groups of 4 (int8 also stores the token table as "
           "int8 rows, one scale a row)">,
    Option<"fusion", "fusion", "bool", "true",
           "the fused patterns (false: each linear without epilogue and each other op a generic "
           "kernel of its own, to measure what fusion saves)">,
  ];
}

def PlanMemory : Pass<"kime-plan-memory", "::mlir::func::FuncOp"> {
  let summary = "Places every kernel result in one arena by liveness";
  let description = [{
    Each kernel result gets a byte `offset` (64-byte aligned) in one arena per bucket, its size
    from the bucket's bounds. A result lives from its kernel to its last use (the function's
    results to the end); freed ranges are reused best-fit by size. The function records the
    arena's size as `kime.arena`.
  }];
}

def VerifyBackendContract : Pass<"kime-verify-backend-contract", "::mlir::func::FuncOp"> {
  let summary = "Checks that the IR is what codegen can compile";
  let description = [{
    After fusion and planning, the function may hold only `kime.weight`, kernel ops with
    an arena offset, and the return; every size is static or bounded; the bucket is recorded.
    Anything else is an error that names the op, so codegen never meets what it cannot handle.
  }];
}

#endif // KIME_PASSES_TD
