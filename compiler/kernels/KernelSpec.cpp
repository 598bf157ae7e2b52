#include "KernelSpec.h"

#include <map>
#include <sstream>
#include <type_traits>

#include "cache/ContentHash.h"
#include "support/Diagnostic.h"

namespace kime {

int64_t ropePairGroup(const KernelSpec& s) { return s.ropeInterleaved ? kRopePairGroup : s.out / s.ropeHeads; }

namespace {

// Whether a kernel of `s` has optional slot `name` (plan.h says when each one is there).
bool hasSlot(const KernelSpec& s, const std::string& name) {
  if (name == "pos") return s.learnedPos;
  if (name == "tokseq" || name == "qtype" || name == "type") return s.typeTable;
  if (name == "norm_weight") return s.norm != NormKind::none;
  if (name == "norm_bias") return s.norm == NormKind::layer;
  if (name == "bias") return s.bias;
  if (name == "weight_up") return s.act == Activation::swiglu;
  if (name == "bias_up") return s.act == Activation::swiglu && s.biasUp;
  if (name == "weight_scale") return s.int8();
  if (name == "weight_up_scale") return s.int8() && s.act == Activation::swiglu;
  if (name == "tok_scale" || name == "x_scale") return s.int8();
  if (name == "tokpos" || name == "rope_cos" || name == "rope_sin") return s.ropeHeads > 0;
  if (name == "residual") return s.residual;
  if (name == "index") return s.kind == KIME_CLASS_GATHER && !s.indexU8;
  if (name == "index_u8") return s.kind == KIME_CLASS_GATHER && s.indexU8;
  if (name == "in1" || name == "in2" || name == "in3") return s.program.inputsRead() & (1u << (name.back() - '0'));
  return false;
}

}  // namespace

int64_t rowBound(const KernelSpec& s, int64_t tokens, int64_t seqs, int64_t markers) {
  switch (s.rowSym) {
    case KIME_ROWS_T:
      return tokens;
    case KIME_ROWS_S:
      return seqs;
    case KIME_ROWS_S1:
      return seqs + 1;
    case KIME_ROWS_M:
      return markers;
    case KIME_ROWS_R:
      return seqs + markers;
    default:
      return s.staticRows;
  }
}

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
    << (biasUp ? ",up" : "") << "|res=" << residual << "|panel=" << panel << (weightRows ? "|rows-weight" : "")
    << (arith == Arithmetic::f32 ? "" : "|") << (arith == Arithmetic::f32 ? "" : nameOf(arith))
    << (fewRows ? "|few" : "") << "|rope=" << ropeHeads << "," << ropeTheta << "," << ropeRows
    << (ropeInterleaved ? ",interleaved" : "") << "|pos=" << learnedPos << (typeTable ? "" : "|no-type")
    << "|heads=" << heads << "," << kvHeads << "|scale=" << scale << "|len=" << maxLen
    << "|rows=" << (rows == HeadRows::none ? "" : nameOf(rows))
    << "|of=" << (rowSym == KIME_ROWS_STATIC ? std::to_string(staticRows) : kime_row_symbol_names[rowSym])
    << (indexU8 ? "|u8" : "") << (program.empty() ? "" : "|program=" + program.text()) << (vector ? "|vector" : "")
    << "|w=" << in << "," << out << "," << kvWidth;
  return s.str();
}

namespace {

template <typename T>
void keyField(std::ostringstream& s, const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    s << v.size() << ':' << v;
  else if constexpr (std::is_same_v<T, eltwise::Program>)
    keyField(s, v.text());
  else if constexpr (std::is_floating_point_v<T>)
    s << std::hexfloat << v << std::defaultfloat;
  else if constexpr (std::is_enum_v<T>)
    s << int64_t(v);
  else
    s << v;
  s << ';';
}

}  // namespace

std::string KernelSpec::key() const {
  std::ostringstream s;
  std::apply([&](const auto&... f) { (keyField(s, f), ...); }, fields());
  return s.str();
}

std::string kernelSymbol(const KernelSpec& spec) {
  return std::string(className(spec.kind)) + "_" + ContentHash().add(spec.key()).hex().substr(0, 16);
}

std::vector<std::string> kernelSymbols(const std::vector<KernelSpec>& specs) {
  std::map<std::string, size_t> seen;
  std::vector<std::string> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    out.push_back(kernelSymbol(specs[i]));
    if (!seen.emplace(out.back(), i).second)
      throw CompileError("internal: kernels " + std::to_string(seen[out.back()]) + " and " + std::to_string(i) +
                         " hash to one symbol " + out.back());
  }
  return out;
}

}  // namespace kime
