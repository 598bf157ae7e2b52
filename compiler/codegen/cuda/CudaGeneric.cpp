// The generic kernel classes in CUDA: gather, eltwise, rope, pool.
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

// A block per output row: x's row index[r], or zeros for -1.
std::string gatherSource(const KernelSpec& s, const GatherSpec& g, const std::string& name) {
  std::ostringstream o;
  const std::string D = std::to_string(s.out);
  o << signature(s, name) << "  const int r = blockIdx.x;\n  if (r >= " << rowCount(s) << ") return;\n"
    << "  const int src = " << (g.indexU8 ? "(int)index_u8[r]" : "index[r]") << ";\n"
    << "  for (int c = threadIdx.x; c < " << D << "; c += blockDim.x)\n"
    << "    out[(long)r * " << D << " + c] = src >= 0 ? x[(long)src * " << D << " + c] : 0.0f;\n}\n";
  return o.str();
}

// A thread per element: the postfix program over the inputs' elements.
std::string eltwiseSource(const KernelSpec& s, const EltwiseSpec& el, const std::string& name) {
  static const char* const inputs[] = {"x", "in1", "in2", "in3"};
  std::ostringstream o;
  o << signature(s, name) << "  const long e = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    << "  if (e >= (long)" << rowCount(s) << " * " << s.out << ") return;\n"
    << "  out[e] = " << programExpr(el.program, [&](int i) { return std::string(inputs[i]) + "[e]"; }) << ";\n}\n";
  return o.str();
}

// A block per row: rotate-half RoPE per head, the angles' cos and sin from the tables.
std::string ropeSource(const KernelSpec& s, const RopeSpec& rope, const std::string& name) {
  std::ostringstream o;
  const int64_t hd = s.out / rope.heads, half = hd / 2;
  const std::string D = std::to_string(s.out);
  o << signature(s, name) << "  const int r = blockIdx.x;\n  if (r >= " << rowCount(s) << ") return;\n"
    << "  const int p = pos[r] < 0 ? 0 : min(pos[r], " << rope.rows - 1 << ");\n"
    << "  for (int c = threadIdx.x; c < " << D << "; c += blockDim.x) {\n"
    << "    const int i = c % " << hd << ", j = i < " << half << " ? i : i - " << half << ";\n"
    << "    const float q = x[(long)r * " << D << " + (i < " << half << " ? c + " << half << " : c - " << half
    << ")];\n"
    << "    out[(long)r * " << D << " + c] = x[(long)r * " << D << " + c] * rope_cos[p * " << half << " + j] + (i < "
    << half << " ? -q : q) * rope_sin[p * " << half << " + j];\n  }\n}\n";
  return o.str();
}

// A block per sequence: the mean of its token rows (zeros for an empty one), summed in token order.
std::string poolSource(const KernelSpec& s, const std::string& name) {
  std::ostringstream o;
  const std::string D = std::to_string(s.out);
  o << signature(s, name) << "  const int q = blockIdx.x;\n  if (q >= " << rowCount(s) << ") return;\n"
    << "  const int begin = (int)cu[q], end = (int)cu[q + 1];\n"
    << "  for (int c = threadIdx.x; c < " << D << "; c += blockDim.x) {\n"
    << "    float sum = 0.0f;\n"
    << "    for (int t = begin; t < end; ++t) sum += x[(long)t * " << D << " + c];\n"
    << "    out[(long)q * " << D << " + c] = sum / fmaxf(1.0f, (float)(end - begin));\n  }\n}\n";
  return o.str();
}

}  // namespace kime::cuda
