/* kime plan ABI: everything kime-compile writes into an artifact and the runtime reads back,
 * spelled once. The compiler's lowering, its Halide argument lists and CUDA signatures, and the
 * runtime's manifest reader all take their names, orders and numbers from here (the way IREE's
 * executable_library.h is the one contract between its compiler and runtime); the unit test
 * PlanAbi checks that the kernels each backend builds agree with it. C-compatible, no
 * dependencies.
 *
 * The manifest (section KIME_SECTION_MANIFEST, runtime/schema/manifest.fbs) holds, per bucket,
 * the plan: kernel calls in order, each with its arguments in the order of its class's slots
 * below. An argument is an
 * arena range, a packed weight, or one of the plan inputs, with a row count that is static or
 * one of the batch's counts (kime_row_symbol) and an element type (kime_dtype). */
#ifndef KIME_PLAN_H
#define KIME_PLAN_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The artifact format's version: the header's and the manifest's. 2: the names of this header
 * (kernel classes, inputs, row counts, dtypes by name as below). 3: the generic classes (gather,
 * eltwise, rope), the markers and mcu inputs, a SwiGLU's biases apart, the gather limits. 4: the
 * pool class; eltwise programs as words ("x in1 mul silu"). 5: the manifest, self-test and
 * source sections as FlatBuffers, by the schemas in runtime/schema (until 4: JSON). 6: int8 learned
 * position tables. 7: the model's outputs by name, per marker or per sequence, of any width (until
 * 6: logits [M] and act [S, 2]). */
#define KIME_FORMAT_VERSION 7u

/* Section names: the manifest, the packed weights, and the code: "code.cpu.<target>" (target:
 * kime_cpu_target_names) and "code.ptx.<math>.<arch>" (math: kime_cuda_math_names, arch: sm_80,
 * ...). The manifest's, the self-test's and the source's fields are their schemas'
 * (runtime/schema/). */
#define KIME_SECTION_MANIFEST "manifest"
#define KIME_SECTION_WEIGHTS_CPU "weights.cpu"
#define KIME_SECTION_CPU_CODE "code.cpu."
#define KIME_SECTION_PTX_CODE "code.ptx."
/* What the artifact was compiled from (source.fbs: the compiler's version, the Graph, the bucket file,
 * the options that shape its bytes), for kime-compile --refit and --inspect; the runtime runs
 * nothing of it. */
#define KIME_SECTION_SOURCE "source"
/* Optional (kime-compile --selftest N): batches and the f64 reference's outputs (selftest.fbs);
 * read only by kime_model_selftest. */
#define KIME_SECTION_SELFTEST "selftest"
/* Optional (kime-compile --sign KEY, kime-sign): who built the artifact, as an Ed25519 signature
 * over everything else in it (format.h's kime_signature_header); checked when the runtime is
 * given trusted keys, before any code is loaded. */
#define KIME_SECTION_SIGNATURE "signature"

/* The CPU targets kime emits code for, each a section of its own (KIME_SECTION_CPU_CODE + name). */
typedef enum kime_cpu_target {
  KIME_CPU_X86_64_AVX2 = 0,   /* x86-64 with AVX2 + FMA: the x86 baseline */
  KIME_CPU_X86_64_AVX512,     /* x86-64 with AVX-512 (F, CD, BW, DQ, VL) */
  KIME_CPU_ARM_64,            /* AArch64 with NEON */
  KIME_CPU_X86_64_AVX512BF16, /* AVX-512 with BF16 dot products: --cpu-precision bf16 only */
  KIME_CPU_X86_64_AVX512VNNI, /* AVX-512 with VNNI dot products: --cpu-precision int8 only (the
                                 CPUs of x86-64-avx512bf16: Halide 14 has VNNI in that set only) */
  KIME_CPU_ARM_64_DOTPROD,    /* AArch64 with the dot-product extension (sdot): --cpu-precision int8
                                 only (its kernels are arm-64's but for the int8 dot products) */
  KIME_CPU_TARGET_COUNT
} kime_cpu_target;
static const char* const kime_cpu_target_names[KIME_CPU_TARGET_COUNT] = {
    "x86-64-avx2", "x86-64-avx512", "arm-64", "x86-64-avx512bf16", "x86-64-avx512vnni", "arm-64-dotprod"};

/* A CPU kernel NAME's entry point in its section: the symbol NAME KIME_KERNEL_ENTRY_SUFFIX,
 * int (void** args), args in the order of its class's slots (kime_kernel_buffer pointers). */
#define KIME_KERNEL_ENTRY_SUFFIX "_argv"

/* The kernel classes, as kime-fuse makes them. */
typedef enum kime_kernel_class {
  KIME_CLASS_EMBED = 0,     /* token (+ type) (+ learned position) rows */
  KIME_CLASS_NORM = 1,      /* a norm of the rows linears read */
  KIME_CLASS_LINEAR = 2,    /* matmul with bias / RoPE / GELU / SwiGLU / residual epilogue */
  KIME_CLASS_ATTENTION = 3, /* variable-length attention over each row's sequence */
  KIME_CLASS_HEAD = 4,      /* the marker logits or the act pairs, normed rows of the heads */
  KIME_CLASS_SELECT = 5,    /* kime-prune-rows' output rows */
  /* The generic classes: whatever no fusion pattern covers. */
  KIME_CLASS_GATHER =
      6, /* rows of a table or a matrix by an index: gather_rows, expand_seqs, first_rows, gather_markers */
  KIME_CLASS_ELTWISE = 7, /* a chain of elementwise functions over up to 4 inputs, as one loop */
  KIME_CLASS_ROPE = 8,    /* RoPE on rows no linear computes, by any positions */
  KIME_CLASS_POOL = 9,    /* the mean of each sequence's token rows (mean_seqs) */
  KIME_CLASS_COUNT = 10
} kime_kernel_class;

/* Whether kernels of class `c` are generic (what no fusion pattern took) rather than fused. */
static inline int kime_class_is_generic(kime_kernel_class c) { return c >= KIME_CLASS_GATHER && c < KIME_CLASS_COUNT; }

/* The arrays a plan reads besides the arena and the weights: the batch's own (ids, qtype, cu),
 * then the int32 index arrays the runtime stages from it (tokseq onward); the out_* ones serve
 * kime-prune-rows' output rows R = S + M (each sequence's first token, then each marked token). */
typedef enum kime_plan_input {
  KIME_INPUT_IDS = 0,
  KIME_INPUT_QTYPE,
  KIME_INPUT_CU,
  KIME_INPUT_MARKERS,
  KIME_INPUT_MCU,
  KIME_INPUT_TOKSEQ, /* per token: its sequence */
  KIME_INPUT_TOKPOS, /* per token: its position in its sequence */
  KIME_INPUT_MARKER_ROWS,
  KIME_INPUT_FIRST_ROWS,
  KIME_INPUT_OUT_ROWS,
  KIME_INPUT_OUT_SEQ,
  KIME_INPUT_OUT_POS,
  KIME_INPUT_OUT_FIRST_ROWS,
  KIME_INPUT_OUT_MARKER_ROWS,
  KIME_INPUT_TOKTYPE, /* per token: its type (the batch's per-token types, or its sequence's qtype) */
  KIME_INPUT_COUNT
} kime_plan_input;
#define KIME_FIRST_STAGED_INPUT KIME_INPUT_TOKSEQ

/* What a dimension's extent is at run time: static, or one of the batch's counts. */
typedef enum kime_row_symbol {
  KIME_ROWS_STATIC = 0,
  KIME_ROWS_T,  /* tokens */
  KIME_ROWS_S,  /* sequences */
  KIME_ROWS_S1, /* sequences + 1 */
  KIME_ROWS_M,  /* markers */
  KIME_ROWS_R,  /* output rows, S + M */
  KIME_ROWS_COUNT
} kime_row_symbol;

typedef enum kime_dtype {
  KIME_DTYPE_F32 = 0,
  KIME_DTYPE_I32,
  KIME_DTYPE_U32,
  KIME_DTYPE_U8,
  KIME_DTYPE_BF16,
  KIME_DTYPE_I8,
  KIME_DTYPE_COUNT
} kime_dtype;

/* The counts a CUDA kernel reads from its first argument, counts[slot]. */
typedef enum kime_count_slot {
  KIME_COUNT_T = 0,
  KIME_COUNT_S = 1,
  KIME_COUNT_M = 2,
  KIME_COUNT_R = 3,
  KIME_COUNT_SLOTS = 4
} kime_count_slot;

/* The arithmetic of the CUDA linear kernels: TF32 tensor cores (f32 accumulation) or f32 FMA. */
typedef enum kime_cuda_math { KIME_CUDA_TF32 = 0, KIME_CUDA_F32 = 1, KIME_CUDA_MATH_COUNT = 2 } kime_cuda_math;

static const char* const kime_cuda_math_names[KIME_CUDA_MATH_COUNT] = {"tf32", "f32"};

/* The arithmetics an artifact's self-test gives a tolerance for: its CPU code's (f32, or bf16
 * with --cpu-precision bf16), then each CUDA math (KIME_ARITH_TF32 + kime_cuda_math). */
typedef enum kime_arith {
  KIME_ARITH_CPU = 0,
  KIME_ARITH_TF32 = 1,
  KIME_ARITH_F32 = 2,
  KIME_ARITH_COUNT = 3
} kime_arith;
static const char* const kime_arith_names[KIME_ARITH_COUNT] = {"cpu", "tf32", "f32"};
static const char* const kime_kernel_class_names[KIME_CLASS_COUNT] = {
    "embed", "norm", "linear", "attention", "head", "select", "gather", "eltwise", "rope", "pool"};
static const char* const kime_plan_input_names[KIME_INPUT_COUNT] = {
    "ids",         "qtype",      "cu",       "markers", "mcu",     "tokseq",         "tokpos",
    "marker_rows", "first_rows", "out_rows", "out_seq", "out_pos", "out_first_rows", "out_marker_rows",
    "toktype"};
static const char* const kime_row_symbol_names[KIME_ROWS_COUNT] = {"", "T", "S", "S+1", "M", "R"};
static const char* const kime_dtype_names[KIME_DTYPE_COUNT] = {"f32", "i32", "u32", "u8", "bf16", "i8"};
/* Each dtype as Halide's type code (0 int, 1 uint, 2 float, 4 bfloat) and bits. */
static const uint8_t kime_dtype_codes[KIME_DTYPE_COUNT] = {2, 0, 1, 1, 4, 0};
static const uint8_t kime_dtype_bits[KIME_DTYPE_COUNT] = {32, 32, 32, 8, 16, 8};

/* The index of `name` among `count` names, or -1. */
static inline int kime_name_index(const char* const* names, int count, const char* name) {
  for (int i = 0; i < count; ++i)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

/* A kernel argument slot: its name (the Halide parameter's and the CUDA parameter's), its
 * element type (a linear's weights are bf16 with --cpu-precision bf16, i8 with int8), and whether a kernel of
 * the class may go without it (then it is absent from the call, not empty). */
typedef struct kime_arg_slot {
  const char* name;
  kime_dtype dtype;
  uint8_t optional;
} kime_arg_slot;

/* Per class, the slots in call order; the output ("out") is last. Which optional slots a kernel
 * has follows from its spec: embed "tokseq" / "qtype" / "type" with a type table, "pos" with
 * learned positions, "tok_scale" with an int8 token table (its rows' scales: [vocab]), "pos_scale" with int8 learned
 * positions (their rows' scales: [positions]); norm and head "norm_bias" with
 * layer norm, head "norm_weight" with any norm; linear "bias" / "bias_up" with biases (each on its
 * own), "weight_up" with SwiGLU, "weight_scale" (and "weight_up_scale" with SwiGLU) with int8
 * weights (each output column's scale, then its correction for the inputs' u8 offset: [2, out]), "tokpos" / "rope_cos"
 * / "rope_sin" with RoPE, "residual" with a residual; gather "index" (i32, or u32 read as i32) or "index_u8" (qtype),
 * "x_scale" where x is an int8 token table (as embed's "tok_scale");
 * linear and eltwise "in1".."in3" as their program reads them (a linear's epilogue program: its input 0 is the linear's
 * value after bias, activation, RoPE and residual). */
#define KIME_F32_ KIME_DTYPE_F32
static const kime_arg_slot kime_embed_slots[] = {{"ids", KIME_DTYPE_U32, 0},    {"tokseq", KIME_DTYPE_I32, 1},
                                                 {"tokpos", KIME_DTYPE_I32, 0}, {"qtype", KIME_DTYPE_U8, 1},
                                                 {"tok", KIME_F32_, 0},         {"tok_scale", KIME_F32_, 1},
                                                 {"type", KIME_F32_, 1},        {"pos", KIME_F32_, 1},
                                                 {"pos_scale", KIME_F32_, 1},   {"out", KIME_F32_, 0}};
static const kime_arg_slot kime_norm_slots[] = {
    {"x", KIME_F32_, 0}, {"norm_weight", KIME_F32_, 0}, {"norm_bias", KIME_F32_, 1}, {"out", KIME_F32_, 0}};
static const kime_arg_slot kime_linear_slots[] = {{"x", KIME_F32_, 0},
                                                  {"weight", KIME_F32_, 0},
                                                  {"bias", KIME_F32_, 1},
                                                  {"weight_up", KIME_F32_, 1},
                                                  {"bias_up", KIME_F32_, 1},
                                                  {"weight_scale", KIME_F32_, 1},
                                                  {"weight_up_scale", KIME_F32_, 1},
                                                  {"tokpos", KIME_DTYPE_I32, 1},
                                                  {"rope_cos", KIME_F32_, 1},
                                                  {"rope_sin", KIME_F32_, 1},
                                                  {"residual", KIME_F32_, 1},
                                                  {"in1", KIME_F32_, 1},
                                                  {"in2", KIME_F32_, 1},
                                                  {"in3", KIME_F32_, 1},
                                                  {"out", KIME_F32_, 0}};
static const kime_arg_slot kime_attention_slots[] = {{"q", KIME_F32_, 0},       {"k", KIME_F32_, 0},
                                                     {"v", KIME_F32_, 0},       {"qseq", KIME_DTYPE_I32, 0},
                                                     {"cu", KIME_DTYPE_U32, 0}, {"out", KIME_F32_, 0}};
static const kime_arg_slot kime_head_slots[] = {
    {"x", KIME_F32_, 0},      {"norm_weight", KIME_F32_, 1}, {"norm_bias", KIME_F32_, 1}, {"rows", KIME_DTYPE_I32, 0},
    {"weight", KIME_F32_, 0}, {"bias", KIME_F32_, 1},        {"out", KIME_F32_, 0}};
static const kime_arg_slot kime_select_slots[] = {
    {"x", KIME_F32_, 0}, {"rows", KIME_DTYPE_I32, 0}, {"out", KIME_F32_, 0}};
/* out row r = x row index[r], or zeros where the index is -1 (an empty sequence's first row). */
static const kime_arg_slot kime_gather_slots[] = {{"x", KIME_F32_, 0},
                                                  {"x_scale", KIME_F32_, 1},
                                                  {"index", KIME_DTYPE_I32, 1},
                                                  {"index_u8", KIME_DTYPE_U8, 1},
                                                  {"out", KIME_F32_, 0}};
static const kime_arg_slot kime_eltwise_slots[] = {
    {"x", KIME_F32_, 0}, {"in1", KIME_F32_, 1}, {"in2", KIME_F32_, 1}, {"in3", KIME_F32_, 1}, {"out", KIME_F32_, 0}};
/* RoPE by positions (the tokens', the output rows', or token ids) from tables of cos and sin of
 * each position's angles, [positions, head / 2]. */
static const kime_arg_slot kime_rope_slots[] = {{"x", KIME_F32_, 0},
                                                {"pos", KIME_DTYPE_I32, 0},
                                                {"rope_cos", KIME_F32_, 0},
                                                {"rope_sin", KIME_F32_, 0},
                                                {"out", KIME_F32_, 0}};
/* out row s = the mean of x's rows cu[s] .. cu[s+1] - 1 (zeros for an empty sequence); tokseq is
 * each token's sequence. */
static const kime_arg_slot kime_pool_slots[] = {
    {"x", KIME_F32_, 0}, {"tokseq", KIME_DTYPE_I32, 0}, {"cu", KIME_DTYPE_U32, 0}, {"out", KIME_F32_, 0}};
/* The most inputs of an eltwise kernel. */
#define KIME_ELTWISE_INPUTS 4
#undef KIME_F32_

/* The slots of class `c` and their number. */
static inline const kime_arg_slot* kime_class_slots(kime_kernel_class c, int* count) {
#define KIME_SLOTS_(a) (*count = (int)(sizeof(a) / sizeof((a)[0])), (a))
  switch (c) {
    case KIME_CLASS_EMBED:
      return KIME_SLOTS_(kime_embed_slots);
    case KIME_CLASS_NORM:
      return KIME_SLOTS_(kime_norm_slots);
    case KIME_CLASS_LINEAR:
      return KIME_SLOTS_(kime_linear_slots);
    case KIME_CLASS_ATTENTION:
      return KIME_SLOTS_(kime_attention_slots);
    case KIME_CLASS_HEAD:
      return KIME_SLOTS_(kime_head_slots);
    case KIME_CLASS_SELECT:
      return KIME_SLOTS_(kime_select_slots);
    case KIME_CLASS_GATHER:
      return KIME_SLOTS_(kime_gather_slots);
    case KIME_CLASS_ELTWISE:
      return KIME_SLOTS_(kime_eltwise_slots);
    case KIME_CLASS_ROPE:
      return KIME_SLOTS_(kime_rope_slots);
    case KIME_CLASS_POOL:
      return KIME_SLOTS_(kime_pool_slots);
    default:
      break;
  }
#undef KIME_SLOTS_
  *count = 0;
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* KIME_PLAN_H */
