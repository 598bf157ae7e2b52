// The linear kernel in CUDA: a warp per row in f32, or tiles of 16 rows on tensor cores (tf32).
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

// One warp per output row: each lane computes columns lane, lane+32, ... (weights are packed
// [in, out] or in panels, so a warp's loads of one k are contiguous). The rows are tokens or
// kime-prune-rows' output rows; `tokpos` is their positions in their sequences.
std::string linearSource(const KernelSpec& s, const LinearSpec& l, const std::string& name) {
  std::ostringstream o;
  const std::string K = std::to_string(s.in), O = std::to_string(s.out);
  o << signature(s, name)
    << "  const int lane = threadIdx.x & 31, r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n"
    << "  if (r >= " << rowCount(s) << ") return;\n";
  auto dot = [&](const std::string& w, const std::string& col) {
    return "[&](int oc) { float a = 0.0f; for (int k = 0; k < " + K + "; ++k) a = fmaf(x[(long)r * " + K + " + k], " +
           w + "[" + weightIndex(s, l, "k", "oc") + "], a); return a; }(" + col + ")";
  };
  o << "  for (int c = lane; c < " << O << "; c += 32) {\n";
  o << "    float y = " << dot("weight", "c") << (l.bias ? " + bias[c]" : "") << ";\n";
  if (l.act == Activation::swiglu)
    o << "    float u = " << dot("weight_up", "c") << (l.biasUp ? " + bias_up[c]" : "") << ";\n"
      << "    y = y / (1.0f + expf(-y)) * u;\n";
  if (l.act == Activation::gelu) o << "    y = 0.5f * y * (1.0f + erff(y * 0.70710678118654752f));\n";
  if (l.rope.heads) {
    // Column i < G/2 of each group of G (a head, or 16 interleaved columns) pairs with i + G/2.
    const int64_t hd = s.out / l.rope.heads, half = hd / 2, G = ropePairGroup(l.rope, s.out), gh = G / 2;
    o << "    { const int i = c % " << G << ", j = c % " << hd << " / " << G << " * " << gh << " + c % " << gh
      << ", p = tokpos[r];\n"
      << "      const int partner = i < " << gh << " ? c + " << gh << " : c - " << gh << ";\n"
      << "      const float q = " << dot("weight", "partner") << (l.bias ? " + bias[partner]" : "") << ";\n"
      << "      y = y * rope_cos[p * " << half << " + j] + (i < " << gh << " ? -q : q) * rope_sin[p * " << half
      << " + j]; }\n";
  }
  if (l.residual) o << "    y += residual[(long)r * " << O << " + c];\n";
  if (!l.program.empty()) o << "    y = " << epilogue(l.program, "y", "(long)r * " + O + " + c") << ";\n";
  o << "    out[(long)r * " << O << " + c] = y;\n  }\n}\n";
  return o.str();
}

// The columns one warp computes with tensor cores, or 0 when the layer does not fit them: the
// inputs a multiple of 8 (the K of m16n8k8) and the columns a multiple of the tile, which with
// RoPE is a whole head, so that each output's partner is held by the same lane.
int64_t tensorCoreWidth(const KernelShape& s, const LinearSpec& l) {
  if (s.in % 8 != 0) return 0;
  int64_t w = 32;
  if (l.rope.heads) {
    w = s.out / l.rope.heads;
    if (w % 16 != 0 || w > 128) return 0;
  }
  return s.out % w == 0 ? w : 0;
}

// One warp per tile of 16 rows x W columns, on tensor cores: for each step of 8 inputs the A
// fragment (the rows, rounded to TF32) and for each 8 columns a B fragment of the weights into
// one mma; the epilogue per fragment element (row g or g + 8, columns 2q and 2q + 1 of each 8).
std::string linearTensorCoresSource(const KernelSpec& s, const LinearSpec& l, const std::string& name, int64_t W) {
  std::ostringstream o;
  const std::string K = std::to_string(s.in), O = std::to_string(s.out), NT = std::to_string(W / 8);
  const bool up = l.act == Activation::swiglu;
  o << signature(s, name) << "  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;\n"
    << "  const int r0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * " << kTcRows << ", c0 = blockIdx.y * "
    << W << ";\n  const int T = " << rowCount(s) << ";\n  if (r0 >= T) return;\n"
    << "  const int ra = min(r0 + g, T - 1), rb = min(r0 + g + 8, T - 1);\n";
  auto a = [&](const std::string& row, const std::string& col) {
    return "kime_tf32(x[(long)" + row + " * " + K + " + " + col + "])";
  };
  o << "  float acc[" << NT << "][4] = {};\n";
  if (up) o << "  float accu[" << NT << "][4] = {};\n";
  o << "  for (int k0 = 0; k0 < " << K << "; k0 += 8) {\n"
    << "    const unsigned a[4] = {" << a("ra", "k0 + q") << ", " << a("rb", "k0 + q") << ",\n"
    << "                           " << a("ra", "k0 + q + 4") << ", " << a("rb", "k0 + q + 4") << "};\n"
    << "#pragma unroll\n    for (int n = 0; n < " << NT << "; ++n) {\n"
    << "      const long col = c0 + n * 8 + g;\n"
    << "      const unsigned b[2] = {kime_tf32(weight[" << weightIndex(s, l, "k0 + q", "col") << "]), kime_tf32(weight["
    << weightIndex(s, l, "k0 + q + 4", "col") << "])};\n      kime_mma_tf32(acc[n], a, b);\n";
  if (up)
    o << "      const unsigned bu[2] = {kime_tf32(weight_up[" << weightIndex(s, l, "k0 + q", "col")
      << "]), kime_tf32(weight_up[" << weightIndex(s, l, "k0 + q + 4", "col")
      << "])};\n      kime_mma_tf32(accu[n], a, bu);\n";
  o << "    }\n  }\n"
    << "#pragma unroll\n  for (int n = 0; n < " << NT << "; ++n)\n"
    << "#pragma unroll\n    for (int i = 0; i < 4; ++i) {\n"
    << "      const int row = r0 + g + (i >= 2 ? 8 : 0), col = c0 + n * 8 + q * 2 + (i & 1);\n"
    << "      float y = acc[n][i]" << (l.bias ? " + bias[col]" : "") << ";\n";
  if (up) o << "      y = y / (1.0f + expf(-y)) * (accu[n][i]" << (l.biasUp ? " + bias_up[col]" : "") << ");\n";
  if (l.act == Activation::gelu) o << "      y = 0.5f * y * (1.0f + erff(y * 0.70710678118654752f));\n";
  if (l.rope.heads) {
    // The tile is one head, in groups of G columns (the head, or 16 interleaved ones): the
    // partner of column i < G/2 of a group is i + G/2, which is n-tile n + G/16 of the same lane
    // and element (known once n is unrolled).
    const int64_t half = W / 2, G = ropePairGroup(l.rope, s.out), gh = G / 2, shift = gh / 8;
    o << "      { const bool first = n % " << G / 8 << " < " << shift << ";\n"
      << "        const int j = (col - c0) / " << G << " * " << gh << " + (col - c0) % " << gh
      << ", p = tokpos[min(row, T - 1)];\n"
      << "        const float partner = acc[first ? n + " << shift << " : n - " << shift << "][i]"
      << (l.bias ? " + bias[first ? col + " + std::to_string(gh) + " : col - " + std::to_string(gh) + "]" : "") << ";\n"
      << "        y = y * rope_cos[p * " << half << " + j] + (first ? -partner : partner) * rope_sin[p * " << half
      << " + j]; }\n";
  }
  if (l.program.empty()) {
    o << "      if (row < T) out[(long)row * " << O << " + col] = y"
      << (l.residual ? " + residual[(long)row * " + O + " + col]" : "") << ";\n    }\n}\n";
  } else {
    const std::string at = "(long)row * " + O + " + col";
    if (l.residual) o << "      if (row < T) y += residual[" << at << "];\n";
    o << "      if (row < T) out[" << at << "] = " << epilogue(l.program, "y", at) << ";\n    }\n}\n";
  }
  return o.str();
}

}  // namespace kime::cuda
