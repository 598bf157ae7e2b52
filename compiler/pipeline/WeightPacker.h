// Pre-packs weights at compile time into the layouts the kernels read (f32), once each.
#ifndef KIME_PIPELINE_WEIGHTPACKER_H
#define KIME_PIPELINE_WEIGHTPACKER_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/Safetensors.h"

namespace kime {

struct PackedWeight {
  std::string name;  // checkpoint name, or "rope.cos:<hd>:<theta>" for a generated table
  // "rows" (as stored), "transposed" ([in, out], out fastest), "panels" (kWeightPanel columns
  // of the transposed matrix after another, each contiguous: [out / P * in, P]), "pairs.bf16"
  // (the panels in bf16 with each two consecutive inputs of a column side by side:
  // [out / P * in / 2, P * 2]), "table..."
  std::string layout;
  std::vector<int64_t> shape;  // as packed, outermost first
  std::vector<float> values;
  int64_t offset = 0;         // in the weights section, 64-byte aligned
  std::string dtype = "f32";  // f32, or bf16: `values` are then rounded and stored in 2 bytes
};

// The bf16 nearest to `f` (ties to even), as its bits; a NaN stays a NaN.
uint16_t toBf16(float f);

// The columns of one weight panel: a vector of AVX-512, two of AVX2, four of NEON.
constexpr int64_t kWeightPanel = 16;

class WeightPacker {
 public:
  explicit WeightPacker(const Checkpoint& c) : checkpoint_(c) {}

  // The id of `name` packed in `layout` ("rows", "transposed", "panels" or "pairs.bf16", each
  // optionally followed by ":rope<hd>": the columns interleaved for RoPE, KernelSpec.h), packing
  // it on first use.
  int64_t use(const std::string& name, const std::string& layout);
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
