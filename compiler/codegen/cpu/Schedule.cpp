#include "Schedule.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "support/Diagnostic.h"

namespace kime::cpu {

namespace {

// A register block: rows x vectors of accumulators. The other registers hold the block's weight
// vectors and the broadcast input element (and, on NEON, the inputs read by element).
struct Block {
  int rows, vecs;
};

// Each ISA's register blocks from its register file, best first: a linear takes the first whose
// columns fit its outputs.
std::vector<Block> registerBlocks(Isa isa, bool fewRows) {
  switch (isa) {
    case Isa::Avx512:
      // 24 of 32 registers. Where a bucket allows at most kFewRows rows (streamed weights),
      // 8 x 3: 16 rows are two whole groups and the weights are swept twice, not three times.
      if (fewRows) return {{8, 3}, {6, 4}};
      return {{6, 4}};
    case Isa::Avx2:
      // 12 of 16 registers, with 3 or 2 weight vectors and 1 broadcast beside them. 4 x 3 loads
      // 7 times for 12 FMAs (6 x 2: 8) and makes batches of 16, 128, 512 rows whole groups;
      // 6 x 2 where the outputs are no multiple of 24 (or RoPE needs blocks of 16 columns).
      return {{4, 3}, {6, 2}};
    case Isa::Neon:
      // 24 of 32 registers: 4 weight vectors and each row's input element (fmla by element)
      // beside them; 4 vectors are a group of interleaved RoPE columns.
      return {{6, 4}};
  }
  return {{1, 1}};
}

// int8 without VNNI. Its vectors are of 16 outputs, a whole panel, so that their weights are one
// dense load. By pairs (vpmaddwd, smull + sadalp), a vector holds 32 sums (its quads' first pairs
// and second pairs), and its 64 bytes of weights widen to 64 i16: AVX2 takes 2 rows (8
// accumulators beside the 4 widened weight vectors and each row's broadcast quad; 3 rows spilled),
// AVX-512 6 x 2 (24), NEON 3 rows (24). AVX2's u8 x s8 pairs sum whole quads, a vector of 16 in 2
// registers: 3 rows (6) beside the 2 of weights, 2 of ones and the pair sums (4 rows spilled; 2
// were as fast), 2 where a bucket has at most kFewRows (16 rows in whole groups, 3% faster than
// 6 groups of 3). By sdot quads, NEON's vector is 4 accumulators: 6 rows.
std::vector<Block> int8Blocks(Isa isa, Int8Dot dot, bool fewRows) {
  if (isa == Isa::Avx512) return {{6, 2}, {4, 2}};
  if (isa == Isa::Neon)
    return dot == Int8Dot::S8Quads ? std::vector<Block>{{6, 1}, {4, 1}} : std::vector<Block>{{3, 1}, {2, 1}};
  if (dot == Int8Dot::U8S8Pairs) return {{fewRows ? 2 : 3, 1}};
  return {{2, 1}};
}

// Row groups in a blocked linear's task: a batch of up to 32 groups (128 rows in groups of 4,
// 192 in groups of 6) reads each weight from memory once (its tasks are column chunks).
constexpr int kTaskGroups = 32;
// int8, past a few rows: row groups in a task (see linearSchedule).
constexpr int kInt8TaskGroups = 4;
// The largest weights (bytes, both of SwiGLU's) of a linear whose tasks are numbered row range by
// row range, so that a thread mostly reads rows it wrote; larger weights are numbered chunk by
// chunk, so that the threads sweep one chunk at once and read it from memory once.
constexpr int64_t kRowsFirstWeightBytes = 2 << 20;
// Rows a task of a linear without register blocks, and of the embedding.
constexpr int kRowTile = 4;
// bf16: the most pairs of k rounded to bf16 at a time, on the stack (Halide 14 moves a stack
// buffer over 16 KB to the heap): 8 KB for a group of 8 rows.
constexpr int kBf16ChunkPairs = 256;

// int8: the rows quantized at once (a row group's, or a task's) are a stack buffer, and Halide 14
// moves one over 16 KB to the heap, where a warm run would allocate: at most `rows`, fewer where
// the inputs are wide (kime-fuse's int8 rule bounds them: LinearArithmetic.h).
constexpr int64_t kStackBufferBytes = 16 << 10;
int int8StackRows(const KernelShape& s, const LinearSpec& l, Int8Dot dot, int rows) {
  if (!l.int8()) return rows;
  const int64_t rowBytes = s.in * (dot == Int8Dot::S16Pairs ? 2 : 1);
  return int(std::clamp<int64_t>(kStackBufferBytes / rowBytes, 1, rows));
}

// Whether blocks of `vecs` vectors of `lanes` cover the outputs, each holding its outputs' RoPE
// partners: whole groups of interleaved columns, or else whole heads.
bool fits(const KernelShape& s, const LinearSpec& l, int vecs, int lanes) {
  const int64_t width = int64_t(vecs) * lanes;
  if (s.out % width != 0) return false;
  if (l.rope.heads == 0) return true;
  return width % ropePairGroup(l.rope, s.out) == 0;
}

}  // namespace

kime_cpu_target parseTarget(const std::string& name) {
  const int t = kime_name_index(kime_cpu_target_names, KIME_CPU_TARGET_COUNT, name.c_str());
  if (t >= 0) return kime_cpu_target(t);
  std::string known;
  for (const char* k : kime_cpu_target_names) known += (known.empty() ? "" : ", ") + std::string(k);
  throw CompileError("unknown target \"" + name + "\" (kime knows " + known + ")");
}

IsaInfo isaOf(kime_cpu_target target) {
  switch (target) {
    case KIME_CPU_X86_64_AVX2:
      return {Isa::Avx2, 8, 16, Int8Dot::S16Pairs};
    case KIME_CPU_X86_64_AVX512:
    case KIME_CPU_X86_64_AVX512BF16:
      return {Isa::Avx512, 16, 32, Int8Dot::S16Pairs};
    case KIME_CPU_X86_64_AVX512VNNI:
      return {Isa::Avx512, 16, 32, Int8Dot::U8S8Quads};
    case KIME_CPU_ARM_64:
      return {Isa::Neon, 4, 32, Int8Dot::S8Pairs};
    case KIME_CPU_ARM_64_DOTPROD:
      return {Isa::Neon, 4, 32, Int8Dot::S8Quads};
    default:
      break;
  }
  throw CompileError("internal: no ISA for target " + std::to_string(int(target)));
}

IsaInfo isaOf(const std::string& target) { return isaOf(parseTarget(target)); }

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
    case Isa::Neon:
      return "neon";
  }
  return "?";
}

const char* int8DotName(Int8Dot d) {
  switch (d) {
    case Int8Dot::U8S8Quads:
      return "u8 x s8 quads";
    case Int8Dot::S16Pairs:
      return "i16 pairs";
    case Int8Dot::U8S8Pairs:
      return "u8 x s8 pairs";
    case Int8Dot::S8Quads:
      return "s8 quads";
    case Int8Dot::S8Pairs:
      return "s8 pairs";
  }
  return "?";
}

Int8Dot int8DotOf(const LinearSpec& l, const IsaInfo& isa) {
  return l.int8Pairs() && isa.isa == Isa::Avx2 ? Int8Dot::U8S8Pairs : isa.int8;
}

int lanesFor(int64_t width, int vector) {
  for (int l = vector; l > 1; l /= 2)
    if (width % l == 0) return l;
  return 1;
}

bool LinearSchedule::operator==(const LinearSchedule& o) const {
  return lanes == o.lanes && blocked == o.blocked && rows == o.rows && vecs == o.vecs && taskGroups == o.taskGroups &&
         rowsFirst == o.rowsFirst && chunks == o.chunks && kChunk == o.kChunk && tileRows == o.tileRows &&
         int8 == o.int8;
}

LinearSchedule linearSchedule(const KernelShape& s, const LinearSpec& l, const IsaInfo& isa) {
  LinearSchedule out;
  const Int8Dot dot = int8DotOf(l, isa);
  const bool int8Blocked = l.int8() && dot != Int8Dot::U8S8Quads;
  out.lanes = lanesFor(s.out, l.int8() ? 16 : isa.lanes);
  if (l.bf16()) {
    out.kChunk = int(s.in / 2);
    while (out.kChunk > kBf16ChunkPairs || (s.in / 2) % out.kChunk != 0) --out.kChunk;
  }
  if (l.int8()) out.int8 = dot;
  const std::vector<Block> candidates =
      int8Blocked ? int8Blocks(isa.isa, dot, l.fewRows) : registerBlocks(isa.isa, l.fewRows);
  auto fitting =
      std::find_if(candidates.begin(), candidates.end(), [&](Block c) { return fits(s, l, c.vecs, out.lanes); });
  Block b = fitting != candidates.end() ? *fitting : candidates.back();
  while (b.vecs > 1 && !fits(s, l, b.vecs, out.lanes)) --b.vecs;
  if (out.lanes == 1 || !fits(s, l, b.vecs, out.lanes)) {
    out.tileRows = int8StackRows(s, l, dot, kRowTile);
    return out;
  }
  b.rows = int8StackRows(s, l, dot, b.rows);
  out.blocked = true;
  out.rows = b.rows;
  out.vecs = b.vecs;
  out.taskGroups = kTaskGroups;
  const int64_t weightBytes = s.in * s.out * (l.int8() ? 1 : l.bf16() ? 2 : 4) * (l.act == Activation::swiglu ? 2 : 1);
  out.rowsFirst = weightBytes <= kRowsFirstWeightBytes;
  const int64_t blocks = s.out / (int64_t(b.vecs) * out.lanes);
  out.chunks = blocks % 4 == 0 ? 4 : blocks % 2 == 0 ? 2 : 1;
  // int8: a task quantizes its rows once for all the columns it computes. Past a few rows, tasks
  // are short ranges of row groups over every column, not column chunks each quantizing them
  // again; a few rows keep the chunks, so that both threads stream weights.
  if (l.int8() && !l.fewRows) {
    out.chunks = 1;
    out.taskGroups = kInt8TaskGroups;
  }
  return out;
}

bool fewRowsChangesSchedule(const KernelSpec& spec) {
  const LinearSpec* l = spec.maybe<LinearSpec>();
  if (!l) return false;
  LinearSpec few = *l, many = *l;
  few.fewRows = true;
  many.fewRows = false;
  for (int t = 0; t < KIME_CPU_TARGET_COUNT; ++t) {
    const IsaInfo isa = isaOf(kime_cpu_target(t));
    if (linearSchedule(spec, few, isa) != linearSchedule(spec, many, isa)) return true;
  }
  return false;
}

AttentionSchedule attentionSchedule(const KernelShape& s, const AttentionSpec& a, const IsaInfo& isa) {
  AttentionSchedule out;
  out.lanes = lanesFor(s.in / a.heads, isa.lanes);
  if (s.outputRows()) {  // the output rows are few, each of its own sequence
    // A whole vector of keys whatever the bucket's longest sequence (the last one masked), so
    // that the sum of exponentials adds a sequence's keys in the same lanes in every bucket.
    out.keyLanes = isa.lanes;
    return out;
  }
  out.tiled = true;
  // Two vectors of queries where a sequence can be longer than one: each key element loaded
  // feeds both. Blocks of 8 keys on AVX-512 (its 32 registers hold the block's scores for both
  // vectors beside the queries' element and the key's), of 4 on AVX2 (16 registers); NEON keeps
  // one vector of its 4 lanes.
  const bool two = isa.isa != Isa::Neon && a.maxLen > isa.lanes;
  out.queries = two ? 2 * isa.lanes : isa.lanes;
  out.keyBlock = two && isa.isa == Isa::Avx2 ? 4 : 8;
  // Four head elements' sums (chains of dependent adds, in key order) at once: within 16
  // registers on AVX2 beside its two query vectors' exponentials and a value.
  out.headUnroll = 4;
  return out;
}

RowSchedule rowSchedule(const KernelSpec& s, const IsaInfo& isa) {
  if (s.kind() == KIME_CLASS_EMBED) return {kRowTile, lanesFor(s.out, isa.lanes)};
  // A norm task of 16 rows: a batch of a few rows is one task, not a hand-off per few rows.
  if (s.kind() == KIME_CLASS_NORM) return {16, lanesFor(s.in, isa.lanes)};
  if (s.kind() == KIME_CLASS_SELECT || s.kind() == KIME_CLASS_POOL) return {0, lanesFor(s.out, isa.lanes)};
  // The generic row kernels: tasks of 16 rows, like the norm.
  if (s.kind() == KIME_CLASS_GATHER || s.kind() == KIME_CLASS_ELTWISE || s.kind() == KIME_CLASS_ROPE)
    return {16, lanesFor(s.out, isa.lanes)};
  return {0, lanesFor(s.in, isa.lanes)};  // head: one task, its rows are few
}

std::string describeSchedule(const KernelSpec& s, const IsaInfo& isa) {
  std::ostringstream d;
  d << className(s.kind()) << " (" << isaName(isa.isa) << "): ";
  if (const LinearSpec* spec = s.maybe<LinearSpec>()) {
    LinearSchedule l = linearSchedule(s, *spec, isa);
    if (!l.blocked) {
      d << "unblocked, tasks of " << l.tileRows << " rows, lanes " << l.lanes;
    } else {
      d << "block " << l.rows << "x" << l.vecs << ", lanes " << l.lanes
        << (spec->rope.heads ? spec->rope.interleaved ? ", rope interleaved" : ", rope whole heads" : "")
        << ", tasks of " << l.taskGroups << " groups " << (l.rowsFirst ? "rows first" : "chunks first") << ", chunks "
        << l.chunks;
    }
    if (l.kChunk) d << ", bf16 k chunk " << l.kChunk;
    if (spec->int8()) d << ", int8 " << int8DotName(l.int8);
  } else if (const AttentionSpec* spec = s.maybe<AttentionSpec>()) {
    AttentionSchedule a = attentionSchedule(s, *spec, isa);
    if (a.tiled)
      d << "tiles of " << a.queries << " queries, key blocks of " << a.keyBlock << ", head elements " << a.headUnroll
        << " at once, lanes " << a.lanes;
    else
      d << "one query a task, lanes " << a.lanes << ", key lanes " << a.keyLanes;
  } else {
    RowSchedule r = rowSchedule(s, isa);
    if (r.taskRows)
      d << "tasks of " << r.taskRows << " rows, lanes " << r.lanes;
    else
      d << "one task, lanes " << r.lanes;
  }
  return d.str();
}

}  // namespace kime::cpu
