// The select kernel in CUDA.
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

// The output rows of kime-prune-rows, a block per row: x's row rows[r], or zeros for -1.
std::string selectSource(const KernelSpec& s, const std::string& name) {
  std::ostringstream o;
  const std::string D = std::to_string(s.out);
  o << signature(s, name) << "  const int r = blockIdx.x;\n  if (r >= " << rowCount(s)
    << ") return;\n  const int src = rows[r];\n"
    << "  for (int c = threadIdx.x; c < " << D << "; c += blockDim.x)\n"
    << "    out[(long)r * " << D << " + c] = src >= 0 ? x[(long)src * " << D << " + c] : 0.0f;\n}\n";
  return o.str();
}

}  // namespace kime::cuda
