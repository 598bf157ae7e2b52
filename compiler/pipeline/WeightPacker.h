// Pre-packs weights at compile time into the layouts the kernels read (f32), once each.
#ifndef KIME_PIPELINE_WEIGHTPACKER_H
#define KIME_PIPELINE_WEIGHTPACKER_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"
#include "kime/plan.h"

namespace kime {

// The columns of one weight panel: a vector of AVX-512, two of AVX2, four of NEON.
constexpr int64_t kWeightPanel = 16;

// How a weight is packed for the kernels that read it.
struct WeightLayout {
  enum class Kind {
    Rows,           // as stored
    Transposed,     // [in, out], out fastest
    Panels,         // `panel` columns of the transposed matrix after another, each contiguous: [out / P * in, P]
    Table,          // a generated table of `tableRows` rows (RoPE's cos and sin)
    Int8Scales,     // an int8 weight's per column scale, then its row sum: [2, out] f32 (quant/Int8.h)
    Int8Rows,       // an int8 token table: its rows as stored, each quantized on its own (quant/Int8.h)
    Int8RowScales,  // an int8 token table's scale of each row: [rows] f32
  };
  Kind kind = Kind::Rows;
  int64_t panel = 0;      // Panels: columns per panel (kWeightPanel)
  bool pairs = false;     // Panels: in bf16, two consecutive inputs of a column side by side: [out / P * in / 2, P * 2]
  int64_t ropeHead = 0;   // the columns (rows as stored) interleaved for RoPE in heads of this size (KernelSpec.h)
  int64_t tableRows = 0;  // Table: its rows
  bool quads = false;  // Panels: in int8, four consecutive inputs of a column side by side: [out / P * in / 4, P * 4]
  bool int8Pairs = false;  // quads and Int8Scales: the weight quantized with its pairs bounded (quant/Int8.h)

  static WeightLayout rows(int64_t ropeHead = 0) { return {Kind::Rows, 0, false, ropeHead, 0}; }
  static WeightLayout transposed(int64_t ropeHead = 0) { return {Kind::Transposed, 0, false, ropeHead, 0}; }
  static WeightLayout panels(bool pairs, int64_t ropeHead = 0);
  static WeightLayout table(int64_t rows) { return {Kind::Table, 0, false, 0, rows}; }
  static WeightLayout int8Panels(bool int8Pairs, int64_t ropeHead) {
    return {Kind::Panels, kWeightPanel, false, ropeHead, 0, true, int8Pairs};
  }
  static WeightLayout int8Scales(bool int8Pairs, int64_t ropeHead) {
    return {Kind::Int8Scales, 0, false, ropeHead, 0, false, int8Pairs};
  }
  static WeightLayout int8Rows() { return {Kind::Int8Rows, 0, false, 0, 0}; }
  static WeightLayout int8RowScales() { return {Kind::Int8RowScales, 0, false, 0, 0}; }

  // The element type the layout stores: bf16 for pairs, i8 for quads and int8 rows, f32 otherwise.
  kime_dtype dtype() const {
    return pairs ? KIME_DTYPE_BF16 : quads || kind == Kind::Int8Rows ? KIME_DTYPE_I8 : KIME_DTYPE_F32;
  }
  // The manifest's spelling: "rows", "transposed", "panels", "pairs.bf16", "quads.i8", "scales.i8",
  // "rows.i8", "rowscales.i8" or "table<rows>" (int8 pairs: "quads.i8pairs", "scales.i8pairs"),
  // then ":rope<hd>" for interleaved RoPE columns.
  std::string name() const;
  bool operator==(const WeightLayout& o) const {
    return kind == o.kind && panel == o.panel && pairs == o.pairs && ropeHead == o.ropeHead &&
           tableRows == o.tableRows && quads == o.quads && int8Pairs == o.int8Pairs;
  }
};

struct PackedWeight {
  std::string name;  // checkpoint name, or "rope.cos:<hd>:<theta>" for a generated table
  WeightLayout layout;
  std::vector<int64_t> shape;  // as packed, outermost first
  std::vector<float> values;
  int64_t offset = 0;                 // in the weights section, 64-byte aligned
  kime_dtype dtype = KIME_DTYPE_F32;  // f32; bf16: `values` are rounded and stored in 2 bytes; i8: whole numbers in 1
};

// The bf16 nearest to `f` (ties to even), as its bits; a NaN stays a NaN.
uint16_t toBf16(float f);

class WeightPacker {
 public:
  explicit WeightPacker(const Checkpoint& c) : checkpoint_(c) {}

  // The id of `name` packed in `layout` (rows, transposed or panels, optionally with RoPE's
  // interleaved columns), packing it on first use.
  int64_t use(const std::string& name, const WeightLayout& layout);
  // cos (or sin) of p * theta^(-2i/hd) for p < rows, i < hd/2, computed in f64.
  int64_t ropeTable(bool sine, int64_t hd, double theta, int64_t rows);

  const std::vector<PackedWeight>& weights() const { return weights_; }
  // The section's bytes: every weight at its offset, little endian f32 (or bf16).
  std::string sectionBytes() const;

 private:
  int64_t add(PackedWeight w);

  const Checkpoint& checkpoint_;
  std::vector<PackedWeight> weights_;
  std::map<std::string, int64_t> ids_;
  int64_t end_ = 0;
};

}  // namespace kime

#endif  // KIME_PIPELINE_WEIGHTPACKER_H
