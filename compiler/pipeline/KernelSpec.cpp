#include "KernelSpec.h"

#include <sstream>

namespace kime {

int64_t ropePairGroup(const KernelSpec& s) {
  return s.ropeInterleaved ? kRopePairGroup : s.out / s.ropeHeads;
}

std::string KernelSpec::key() const {
  std::ostringstream s;
  s.precision(17);
  s << kind << "|norm=" << norm << "|eps=" << eps << "|act=" << act << "|bias=" << bias
    << "|res=" << residual << "|panel=" << panel << (bf16 ? "|bf16" : "") << (fewRows ? "|few" : "") << "|rope=" << ropeHeads << "," << ropeTheta << "," << ropeRows << (ropeInterleaved ? ",interleaved" : "")
    << "|pos=" << learnedPos << "|heads=" << heads << "," << kvHeads << "|scale=" << scale
    << "|len=" << maxLen << "|rows=" << rows << "|outrows=" << outputRows << "|w=" << in << "," << out << "," << kvWidth;
  return s.str();
}

}  // namespace kime
