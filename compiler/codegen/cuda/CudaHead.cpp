// The head kernel in CUDA.
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

// One warp per output row (a marker's row or a sequence's first row): the norm of that row only,
// then the head's few outputs. A row index of -1 (an empty sequence) reads zeros.
std::string headSource(const KernelSpec& s, const HeadSpec& h, const std::string& name) {
  std::ostringstream o;
  const std::string K = std::to_string(s.in), O = std::to_string(s.out);
  const char* count = h.rows == HeadRows::markers ? "KIME_M" : "KIME_S";
  o << signature(s, name)
    << "  const int lane = threadIdx.x & 31, n = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n"
    << "  if (n >= counts[" << count << "]) return;\n"
    << "  const int row = rows[n];\n"
    << "  if (row < 0) { if (lane < " << O << ") out[(long)n * " << O
    << " + lane] = " << (h.bias ? "bias[lane]" : "0.0f") << "; return; }\n"
    << normStats(s, h.norm, "row") << "  for (int oc = 0; oc < " << O << "; ++oc) {\n"
    << "    float a = 0.0f;\n"
    << "    for (int c = lane; c < " << K << "; c += 32) a = fmaf("
    << normed(h.norm, "x[(long)row * " + K + " + c]", "c") << ", weight[(long)c * " << O << " + oc], a);\n"
    << "    a = kime_warp_sum(a);\n"
    << "    if (lane == 0) out[(long)n * " << O << " + oc] = a" << (h.bias ? " + bias[oc]" : "") << ";\n  }\n}\n";
  return o.str();
}

}  // namespace kime::cuda
