#include "KernelSpec.h"

#include <sstream>

namespace kime {

const char* nameOf(NormKind n) {
  static const char* const names[] = {"none", "rms", "layer"};
  return names[int(n)];
}
const char* nameOf(ActKind a) {
  static const char* const names[] = {"none", "gelu", "swiglu"};
  return names[int(a)];
}
const char* nameOf(RowsKind r) {
  static const char* const names[] = {"", "markers", "first"};
  return names[int(r)];
}

int64_t ropePairGroup(const KernelSpec& s) {
  return s.ropeInterleaved ? kRopePairGroup : s.out / s.ropeHeads;
}

namespace {

// Whether a kernel of `s` has optional slot `name` (plan.h says when each one is there).
bool hasSlot(const KernelSpec& s, const std::string& name) {
  if (name == "pos") return s.learnedPos;
  if (name == "norm_weight") return s.norm != NormKind::none;
  if (name == "norm_bias") return s.norm == NormKind::layer;
  if (name == "bias") return s.bias;
  if (name == "weight_up") return s.act == ActKind::swiglu;
  if (name == "bias_up") return s.act == ActKind::swiglu && s.bias;
  if (name == "tokpos" || name == "rope_cos" || name == "rope_sin") return s.ropeHeads > 0;
  if (name == "residual") return s.residual;
  return false;
}

}  // namespace

std::vector<kime_arg_slot> argSlots(const KernelSpec& s) {
  int n = 0;
  const kime_arg_slot* slots = kime_class_slots(s.kind, &n);
  std::vector<kime_arg_slot> out;
  for (int i = 0; i < n; ++i)
    if (!slots[i].optional || hasSlot(s, slots[i].name)) out.push_back(slots[i]);
  return out;
}

std::string KernelSpec::describe() const {
  std::ostringstream s;
  s.precision(17);
  s << className(kind) << "|norm=" << nameOf(norm) << "|eps=" << eps << "|act=" << nameOf(act) << "|bias=" << bias
    << "|res=" << residual << "|panel=" << panel << (bf16 ? "|bf16" : "") << (fewRows ? "|few" : "") << "|rope=" << ropeHeads << "," << ropeTheta << "," << ropeRows << (ropeInterleaved ? ",interleaved" : "")
    << "|pos=" << learnedPos << "|heads=" << heads << "," << kvHeads << "|scale=" << scale
    << "|len=" << maxLen << "|rows=" << nameOf(rows) << "|outrows=" << outputRows << "|w=" << in << "," << out << "," << kvWidth;
  return s.str();
}

}  // namespace kime
