// The embed kernel in CUDA: a block per token, its token row plus its type and position rows.
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

std::string embedSource(const KernelSpec& s, const EmbedSpec& e, const std::string& name) {
  std::ostringstream o;
  const std::string D = std::to_string(s.out);
  o << signature(s, name) << "  const int t = blockIdx.x, T = counts[KIME_T];\n  if (t >= T) return;\n"
    << "  for (int c = threadIdx.x; c < " << D << "; c += blockDim.x) {\n"
    << "    float v = tok[(long)ids[t] * " << D << " + c]"
    << (e.typeTable ? " + type[(long)qtype[tokseq[t]] * " + D + " + c]" : std::string()) << ";\n";
  if (e.learnedPos) o << "    v += pos[(long)tokpos[t] * " << D << " + c];\n";
  o << "    out[(long)t * " << D << " + c] = v;\n  }\n}\n";
  return o.str();
}

}  // namespace kime::cuda
