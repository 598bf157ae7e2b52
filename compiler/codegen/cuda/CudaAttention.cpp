// The attention kernel in CUDA.
#include "CudaSource.h"

#include <sstream>

namespace kime::cuda {

// One warp per (query, head): online softmax over the keys of the query's sequence (qseq: the
// tokens' or the output rows' sequences); each lane holds head elements lane, lane+32, ... of the
// running weighted sum. No [T, T] buffer. An empty sequence's output row is zeros.
std::string attentionSource(const KernelSpec& s, const AttentionSpec& a, const std::string& name) {
  std::ostringstream o;
  const int64_t hd = s.in / a.heads, group = a.heads / a.kvHeads, per = (hd + 31) / 32;
  const std::string Q = std::to_string(s.in), KV = std::to_string(a.kvWidth);
  o << signature(s, name)
    << "  const int lane = threadIdx.x & 31, t = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, h = blockIdx.y;\n"
    << "  if (t >= " << rowCount(s) << ") return;\n"
    << "  const int s = qseq[t], start = (int)cu[s], end = (int)cu[s + 1], kh = h / " << group << ";\n"
    << "  float qv[" << per << "], acc[" << per << "];\n"
    << "  for (int i = 0; i < " << per << "; ++i) { const int d = lane + 32 * i; qv[i] = d < " << hd
    << " ? q[(long)t * " << Q << " + h * " << hd << " + d] * " << num(a.scale) << " : 0.0f; acc[i] = 0.0f; }\n"
    << "  float m = -__int_as_float(0x7f800000), l = 0.0f;\n"
    << "  for (int j = start; j < end; ++j) {\n"
    << "    float part = 0.0f;\n"
    << "    for (int i = 0; i < " << per << "; ++i) { const int d = lane + 32 * i; if (d < " << hd
    << ") part = fmaf(qv[i], k[(long)j * " << KV << " + kh * " << hd << " + d], part); }\n"
    << "    const float sc = kime_warp_sum(part), mn = fmaxf(m, sc), scale = expf(m - mn), p = expf(sc - mn);\n"
    << "    l = l * scale + p;\n"
    << "    for (int i = 0; i < " << per << "; ++i) { const int d = lane + 32 * i; if (d < " << hd
    << ") acc[i] = acc[i] * scale + p * v[(long)j * " << KV << " + kh * " << hd << " + d]; }\n"
    << "    m = mn;\n  }\n"
    << "  for (int i = 0; i < " << per << "; ++i) { const int d = lane + 32 * i; if (d < " << hd << ") out[(long)t * "
    << Q << " + h * " << hd << " + d] = l > 0.0f ? acc[i] / l : 0.0f; }\n}\n";
  return o.str();
}

}  // namespace kime::cuda
