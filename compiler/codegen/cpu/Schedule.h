// The CPU schedules as data. Per kernel class one function chooses how a kernel runs on a target
// ISA (and, through the spec, in a bucket): register blocks, task shapes, tiles. Codegen
// (HalideKernels.cpp) applies what they return, the few-row kernel key asks whether a bucket
// changes it, and `kime-compile --emit=schedule` prints it for the lit tests. Each ISA's choices
// sit side by side in the tables of Schedule.cpp; the measurements behind them are in
// bench/NOTES.md.
#ifndef KIME_CODEGEN_CPU_SCHEDULE_H
#define KIME_CODEGEN_CPU_SCHEDULE_H

#include <string>

#include "kernels/KernelSpec.h"

namespace kime::cpu {

enum class Isa { Avx2, Avx512, Neon };

// How a target sums int8 products (--cpu-precision int8, quant/Int8.h's arithmetic on each):
enum class Int8Dot {
  U8S8Quads,  // AVX512-VNNI vpdpbusd: four u8 x s8 products a lane, the inputs offset by 128
  S16Pairs,   // vpmaddwd (AVX2, AVX-512): inputs and weights widened to i16, two products a lane
  U8S8Pairs,  // AVX2 with int8pairs: vpmaddubsw of the inputs offset by 128 (u8) by the weights,
              // each pair's sum in i16 (exact: <= 255 x 128), then vpmaddwd by ones into i32
  S8Quads,    // AArch64 sdot (the dot-product extension): four s8 x s8 products a lane
  S8Pairs,    // AArch64 smull + sadalp: s8 x s8 products widened to i16, pairs added into i32
};
// Whether a flavour keeps each quad's two pairs' sums apart until the epilogue.
inline bool inPairs(Int8Dot d) { return d == Int8Dot::S16Pairs || d == Int8Dot::S8Pairs; }
// Whether a flavour multiplies u8 inputs (the s8 ones + 128), so that the sums take 128 times the
// column's weight sum back out.
inline bool offsetsInputs(Int8Dot d) { return d == Int8Dot::U8S8Quads || d == Int8Dot::U8S8Pairs; }
const char* int8DotName(Int8Dot d);

// What a schedule needs to know of a target's vector unit.
struct IsaInfo {
  Isa isa = Isa::Avx2;
  int lanes = 8;       // f32 lanes of a vector register
  int registers = 16;  // vector registers
  Int8Dot int8 = Int8Dot::S16Pairs;
};

// One of plan.h's CPU targets by name; a CompileError naming the known ones otherwise.
kime_cpu_target parseTarget(const std::string& name);

// The dot product of a linear's int8 sums on an ISA: the ISA's own, or AVX2's u8 x s8 pairs where
// the linear's weights are bounded in pairs (int8pairs).
Int8Dot int8DotOf(const LinearSpec& l, const IsaInfo& isa);

// The ISA of a target (x86-64-avx512bf16 is AVX-512); CompileError for an unknown name.
IsaInfo isaOf(kime_cpu_target target);
IsaInfo isaOf(const std::string& target);
const char* isaName(Isa isa);

// The largest of 16/8/4/2/1 lanes that divides `width` and fits `vector` lanes.
int lanesFor(int64_t width, int vector);

// A linear: out = epilogue(x . W). Blocked, each task sweeps a range of row groups through the
// blocks of a column chunk, a group's accumulators (rows x vecs vectors) in registers while the
// block's weight panel stays in cache; unblocked (where no block fits the outputs), tasks of
// `tileRows` rows with the columns vectorized.
struct LinearSchedule {
  int lanes = 1;
  bool blocked = false;
  int rows = 0, vecs = 0;            // the register block
  int taskGroups = 0;                // row groups in a task, at most
  bool rowsFirst = false;            // tasks numbered row range by row range (else column chunk by chunk)
  int chunks = 1;                    // column chunks of a row range
  int kChunk = 0;                    // bf16: pairs of k rounded to bf16 at a time (0: f32)
  Int8Dot int8 = Int8Dot::S16Pairs;  // int8: the dot product
  int tileRows = 0;                  // unblocked: rows a task

  bool operator==(const LinearSchedule& o) const;
  bool operator!=(const LinearSchedule& o) const { return !(*this == o); }
};
LinearSchedule linearSchedule(const KernelShape& s, const LinearSpec& l, const IsaInfo& isa);

// Whether a few-row bucket (LinearSpec::fewRows) changes a linear's schedule on any ISA; where it
// does not, the bucket shares the other buckets' kernel.
bool fewRowsChangesSchedule(const KernelSpec& spec);

// Attention over the tokens: tiles of `queries` queries a task and head, keys in blocks of
// `keyBlock`; untiled (the output rows, each of its own sequence): one query a task.
struct AttentionSchedule {
  bool tiled = false;
  int queries = 1, keyBlock = 0;
  int headUnroll = 1;  // tiled: head elements whose weighted sums run at once
  int lanes = 1;       // along the head
  int keyLanes = 1;    // untiled: keys a vector (the max and the sum of exponentials)
};
AttentionSchedule attentionSchedule(const KernelShape& s, const AttentionSpec& a, const IsaInfo& isa);

// Kernels that work row by row (embed, norm, select, head): rows a task, lanes along the row.
struct RowSchedule {
  int taskRows = 1;
  int lanes = 1;
};
RowSchedule rowSchedule(const KernelSpec& spec, const IsaInfo& isa);

// One line per kernel class, for --emit=schedule and the lit tests, e.g.
// "linear: block 6x2 lanes 8 rope-pairs tasks 16 groups rows-first chunks 4".
std::string describeSchedule(const KernelSpec& spec, const IsaInfo& isa);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_SCHEDULE_H
