// What codegen needs to know about one kernel, and what the plan needs to call it: plain C++,
// read off a planned kernel op. CPU (Halide) and CUDA codegen both start from here.
#ifndef KIME_KERNELS_KERNELSPEC_H
#define KIME_KERNELS_KERNELSPEC_H

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "kime/core/Eltwise.h"
#include "kime/core/KernelChoices.h"
#include "kime/plan.h"

namespace kime {

// The most rows a bucket allows a linear for it to count as a few-row kernel (LinearSpec::fewRows).
constexpr int64_t kFewRows = 16;

// RoPE rotates element i < hd/2 of a head with element i + hd/2. Where hd is a multiple of
// kRopePairGroup, the q and k weights (and biases) are packed with each head's columns
// interleaved: column p of a head holds its element ropeColumnSource(p, hd), so that every group
// of 16 columns is 8 elements of the first half and, 8 columns on, their partners; angle
// (p / 16) * 8 + p % 8. q.k over a head is the same sum in another order, so attention reads
// them as they are.
constexpr int64_t kRopePairGroup = 16;
inline int64_t ropeColumnSource(int64_t p, int64_t hd) {
  const int64_t half = hd / 2, g = p % hd / kRopePairGroup, second = p % kRopePairGroup / (kRopePairGroup / 2);
  return p / hd * hd + second * half + g * (kRopePairGroup / 2) + p % (kRopePairGroup / 2);
}

// A kernel class's name (plan.h's), for keys, kernel names and messages.
inline const char* className(kime_kernel_class c) { return kime_kernel_class_names[c]; }

// Per kernel class, the static choices of its kernels (a class with none has an empty spec).
// Each lists every field in fields(): equal specs are one kernel (KernelRegistry) and the kernel
// cache keys code by them, so a field left out would merge kernels that differ.

// RoPE on a linear's output columns (heads 0: none) or a rope kernel's rows.
struct RopeSpec {
  int64_t heads = 0;
  // The weights' columns interleaved (ropeColumnSource): every group of kRopePairGroup columns
  // holds each output's rotation partner, so that register blocks need not hold whole heads.
  bool interleaved = false;
  double theta = 0;
  int64_t rows = 0;  // rows of the cos/sin tables: the longest sequence, or the vocabulary
  auto fields() const { return std::tie(heads, interleaved, theta, rows); }
};

struct EmbedSpec {
  // int8: the token table's and the learned position table's storage, int8 rows with a scale a
  // row ("tok_scale", "pos_scale"), read back to f32.
  Arithmetic arith = Arithmetic::f32;
  bool typeTable = false;   // the question-type table: each token's sequence's type row
  bool learnedPos = false;  // a learned position table
  bool int8() const { return arith == Arithmetic::int8; }
  auto fields() const { return std::tie(arith, typeTable, learnedPos); }
};

// A norm kernel's, or a head's of its input rows (none: the head reads them as they are).
struct NormSpec {
  NormKind norm = NormKind::none;
  double eps = 0;
  auto fields() const { return std::tie(norm, eps); }
};

// out = program(act(x . W + bias) (RoPE) + residual). Linears read rows a norm kernel wrote.
struct LinearSpec {
  Activation act = Activation::none;
  bool bias = false, biasUp = false, residual = false;  // a SwiGLU's gate bias is `bias`
  // The weight layout: 0, transposed ([in, out], out fastest); P, panels of P output columns,
  // each [in, P] and contiguous, so that a sweep over k reads one stream per panel.
  int64_t panel = 0;
  // The weight is a value computed from weights (a Graph's static subgraph), read as it is in
  // the arena, [out, in] (in fastest): no panels, no bf16, no RoPE interleaving.
  bool weightRows = false;
  // bf16 (opt-in, AVX512-BF16): the panels hold bf16 pairs of k, [out / P * in / 2, P * 2], and
  // each pair of inputs is rounded to bf16 for one dot-product instruction (vdpbf16ps); the sums
  // and everything after them stay f32. int8 (opt-in: compiler/quant/Int8.h): the panels hold
  // int8 quads of k, [out / P * in / 4, P * 4], with each column's scale and row sum beside them
  // ("weight_scale", [2, out] f32); each row of inputs is quantized in the kernel's prologue, the
  // sums are int32, and everything after the scales stays f32.
  Arithmetic arith = Arithmetic::f32;
  // The bucket allows this linear at most kFewRows rows (its tokens, or its output rows): the
  // CPU register blocks then favour sweeping the weights, streamed from memory, fewest times.
  bool fewRows = false;
  RopeSpec rope;
  eltwise::Program program;  // the epilogue (its input 0: the value after bias .. residual)

  bool bf16() const { return arith == Arithmetic::bf16; }
  bool int8() const { return isInt8(arith); }
  // int8pairs: each pair of a column's weights (inputs 2p, 2p + 1) within 128 in |w| (quant/Int8.h).
  bool int8Pairs() const { return arith == Arithmetic::int8pairs; }
  auto fields() const {
    return std::tie(act, bias, biasUp, residual, panel, weightRows, arith, fewRows, rope.heads, rope.interleaved,
                    rope.theta, rope.rows, program);
  }
};

// Variable-length attention over each row's sequence; q width is the kernel's in and out.
struct AttentionSpec {
  int64_t heads = 0, kvHeads = 0;
  double scale = 0;
  int64_t maxLen = 0;  // the bucket's token bound: the longest possible sequence
  int64_t kvWidth = 0;
  auto fields() const { return std::tie(heads, kvHeads, scale, maxLen, kvWidth); }
};

struct HeadSpec {
  NormSpec norm;
  HeadRows rows = HeadRows::none;  // the rows it reads
  bool bias = false;
  auto fields() const { return std::tie(norm.norm, norm.eps, rows, bias); }
};

struct SelectSpec {
  auto fields() const { return std::tie(); }
};

struct GatherSpec {
  Arithmetic arith = Arithmetic::f32;  // int8: x is an int8 token table ("x_scale" as embed's)
  bool indexU8 = false;                // the index is qtype (u8) rather than an int32 array
  bool int8() const { return arith == Arithmetic::int8; }
  auto fields() const { return std::tie(arith, indexU8); }
};

struct EltwiseSpec {
  eltwise::Program program;  // kime/core/Eltwise.h
  bool vector = false;       // its values are vectors ([N]), not rows
  auto fields() const { return std::tie(program, vector); }
};

struct PoolSpec {
  auto fields() const { return std::tie(); }
};

// In plan.h's class order: a spec's index is its kime_kernel_class.
using ClassSpec = std::variant<EmbedSpec, NormSpec, LinearSpec, AttentionSpec, HeadSpec, SelectSpec, GatherSpec,
                               EltwiseSpec, RopeSpec, PoolSpec>;
static_assert(std::variant_size_v<ClassSpec> == KIME_CLASS_COUNT);
static_assert(std::is_same_v<std::variant_alternative_t<KIME_CLASS_LINEAR, ClassSpec>, LinearSpec>);
static_assert(std::is_same_v<std::variant_alternative_t<KIME_CLASS_ROPE, ClassSpec>, RopeSpec>);
static_assert(std::is_same_v<std::variant_alternative_t<KIME_CLASS_POOL, ClassSpec>, PoolSpec>);

// For std::visit over a ClassSpec: one lambda per class.
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

template <typename C, typename = decltype(std::declval<const C&>().fields())>
bool operator==(const C& a, const C& b) {
  return a.fields() == b.fields();
}

// What every kernel has, whatever its class: its output's rows and its widths, which the plan,
// the schedules and the argument shapes are sized by.
struct KernelShape {
  // The output's rows: the tokens, kime-prune-rows' output rows (R = S + M), the sequences
  // (S, or S+1), the markers, or a static count (`staticRows`: a value computed from weights).
  kime_row_symbol rowSym = KIME_ROWS_T;
  int64_t staticRows = 0;
  // embed (out = D); linear (in = K, out = O); attention (in = out = q width); head (in = D,
  // out = O); norm, select, gather, eltwise, rope, pool (in = out = D)
  int64_t in = 0, out = 0;

  bool outputRows() const { return rowSym == KIME_ROWS_R; }
  auto fields() const { return std::tie(rowSym, staticRows, in, out); }
};

// One kernel: its shape and its class's choices. Two kernels with equal specs are the same code.
struct KernelSpec : KernelShape {
  ClassSpec choices;

  kime_kernel_class kind() const { return kime_kernel_class(choices.index()); }
  template <typename C>
  const C& as() const {
    return std::get<C>(choices);
  }
  template <typename C>
  C& as() {
    return std::get<C>(choices);
  }
  template <typename C>
  const C* maybe() const {
    return std::get_if<C>(&choices);
  }
  // A linear's arithmetic, or an embed's or gather's table storage (f32 for the other classes).
  Arithmetic arith() const;

  bool operator==(const KernelSpec& o) const { return fields() == o.fields() && choices == o.choices; }
  bool operator!=(const KernelSpec& o) const { return !(*this == o); }

  // The spec in one line, for the manifest, --emit comments and messages.
  std::string describe() const;
  // The class and every field of every fields(), exactly (doubles to the bit): what the kernel
  // cache keys code by.
  std::string key() const;
};

// The columns of a RoPE linear's output that hold each other's partners: kRopePairGroup, or a
// whole head.
int64_t ropePairGroup(const RopeSpec& r, int64_t width);

// The symbol a kernel of `spec` is compiled under (CPU object, PTX entry) before it is given its
// name in an artifact: its class and a hash of its key(), so that its code depends on the spec
// alone and is found in the kernel cache whatever place the kernel has in an artifact.
std::string kernelSymbol(const KernelSpec& spec);
// Each spec's kernelSymbol, checked distinct (equal symbols of distinct specs would be one kernel).
std::vector<std::string> kernelSymbols(const std::vector<KernelSpec>& specs);

// The most rows a kernel of `s` has in a bucket of these bounds.
int64_t rowBound(const KernelShape& s, int64_t tokens, int64_t seqs, int64_t markers);

// The argument slots (plan.h) a kernel of `spec` takes, in call order, the output ("out") last:
// its class's slots less the optional ones it goes without. The plan's steps, the Halide
// argument lists and the CUDA signatures are built to this and checked against it.
std::vector<kime_arg_slot> argSlots(const KernelSpec& spec);

// One argument of a kernel call in a plan.
struct PlanArg {
  enum class Source { Arena, Weight, Input };
  Source source = Source::Arena;
  int64_t offset = 0;                      // Arena: byte offset
  int64_t weight = -1;                     // Weight: index into the packed weights
  kime_plan_input input = KIME_INPUT_IDS;  // Input: which (plan.h)
  // Shape, innermost first as Halide sees it: cols (0 for a vector), then rows.
  int64_t cols = 0;
  kime_row_symbol rows = KIME_ROWS_STATIC;  // the batch's count at run time, or a static size
  int64_t rowCount = 0;                     // the static size, or the bucket's bound of `rows`
  kime_dtype dtype = KIME_DTYPE_F32;
};

struct PlanStep {
  int64_t kernel = -1;        // index into the artifact's kernels
  std::string node;           // the graph node it ends at (for messages and profiles)
  std::vector<PlanArg> args;  // in the kernel's argument order; the output last
  double flops = 0;           // matmul FLOPs per row of output (attention: per query-key pair)
};

}  // namespace kime

#endif  // KIME_KERNELS_KERNELSPEC_H
