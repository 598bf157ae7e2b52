// The norm kernel in CUDA.
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

// The norm of the rows linears read: a warp per row, its statistics, then the row normed.
std::string normSource(const KernelSpec& s, const NormSpec& n, const std::string& name) {
  std::ostringstream o;
  const std::string K = std::to_string(s.in);
  o << signature(s, name)
    << "  const int lane = threadIdx.x & 31, r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n"
    << "  if (r >= " << rowCount(s) << ") return;\n"
    << normStats(s, n, "r") << "  for (int c = lane; c < " << K << "; c += 32) out[(long)r * " << K
    << " + c] = " << normed(n, "x[(long)r * " + K + " + c]", "c") << ";\n}\n";
  return o.str();
}

}  // namespace kime::cuda
