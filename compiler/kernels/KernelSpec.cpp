#include "KernelSpec.h"

#include <map>
#include <sstream>
#include <type_traits>

#include "cache/ContentHash.h"
#include "support/Diagnostic.h"

namespace kime {

int64_t ropePairGroup(const RopeSpec& r, int64_t width) { return r.interleaved ? kRopePairGroup : width / r.heads; }

Arithmetic KernelSpec::arith() const {
  if (auto* l = maybe<LinearSpec>()) return l->arith;
  if (auto* e = maybe<EmbedSpec>()) return e->arith;
  if (auto* g = maybe<GatherSpec>()) return g->arith;
  return Arithmetic::f32;
}

namespace {

bool programReads(const eltwise::Program& p, const std::string& slot) {
  return (slot == "in1" || slot == "in2" || slot == "in3") && (p.inputsRead() & (1u << (slot.back() - '0')));
}
bool normHas(const NormSpec& n, const std::string& slot) {
  return (slot == "norm_weight" && n.norm != NormKind::none) || (slot == "norm_bias" && n.norm == NormKind::layer);
}

// Whether a kernel has optional slot `slot` (plan.h says when each one is there), per class.
bool hasSlot(const EmbedSpec& e, const std::string& slot) {
  if (slot == "pos") return e.learnedPos;
  if (slot == "pos_scale") return e.learnedPos && e.int8();
  if (slot == "tokseq" || slot == "qtype" || slot == "type") return e.typeTable;
  return slot == "tok_scale" && e.int8();
}
bool hasSlot(const NormSpec& n, const std::string& slot) { return normHas(n, slot); }
bool hasSlot(const LinearSpec& l, const std::string& slot) {
  const bool swiglu = l.act == Activation::swiglu;
  if (slot == "bias") return l.bias;
  if (slot == "weight_up") return swiglu;
  if (slot == "bias_up") return swiglu && l.biasUp;
  if (slot == "weight_scale") return l.int8();
  if (slot == "weight_up_scale") return l.int8() && swiglu;
  if (slot == "tokpos" || slot == "rope_cos" || slot == "rope_sin") return l.rope.heads > 0;
  if (slot == "residual") return l.residual;
  return programReads(l.program, slot);
}
bool hasSlot(const HeadSpec& h, const std::string& slot) { return slot == "bias" ? h.bias : normHas(h.norm, slot); }
bool hasSlot(const GatherSpec& g, const std::string& slot) {
  if (slot == "x_scale") return g.arith == Arithmetic::int8;
  return slot == (g.indexU8 ? "index_u8" : "index");
}
bool hasSlot(const EltwiseSpec& e, const std::string& slot) { return programReads(e.program, slot); }
// Attention, select, rope and pool have no optional slots.
template <typename C>
bool hasSlot(const C&, const std::string&) {
  return false;
}

}  // namespace

int64_t rowBound(const KernelShape& s, int64_t tokens, int64_t seqs, int64_t markers) {
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
  const kime_arg_slot* slots = kime_class_slots(s.kind(), &n);
  std::vector<kime_arg_slot> out;
  for (int i = 0; i < n; ++i)
    if (!slots[i].optional || std::visit([&](const auto& c) { return hasSlot(c, slots[i].name); }, s.choices))
      out.push_back(slots[i]);
  return out;
}

namespace {

// Each class's choices in describe()'s words: "|name=value" for each that is not its default.
void describeChoices(std::ostream& s, const RopeSpec& r) {
  if (r.heads) s << "|rope=" << r.heads << "," << r.theta << "," << r.rows << (r.interleaved ? ",interleaved" : "");
}
void describeChoices(std::ostream& s, const EmbedSpec& e) {
  s << (e.arith == Arithmetic::int8 ? "|int8" : "") << (e.typeTable ? "|type" : "") << (e.learnedPos ? "|pos" : "");
}
void describeChoices(std::ostream& s, const NormSpec& n) {
  if (n.norm != NormKind::none) s << "|norm=" << nameOf(n.norm) << "|eps=" << n.eps;
}
void describeChoices(std::ostream& s, const LinearSpec& l) {
  s << "|act=" << nameOf(l.act) << (l.bias ? "|bias" : "") << (l.biasUp ? "|bias-up" : "")
    << (l.residual ? "|residual" : "") << "|panel=" << l.panel << (l.weightRows ? "|rows-weight" : "")
    << (l.arith == Arithmetic::f32 ? "" : "|") << (l.arith == Arithmetic::f32 ? "" : nameOf(l.arith))
    << (l.fewRows ? "|few" : "");
  describeChoices(s, l.rope);
  if (!l.program.empty()) s << "|program=" << l.program.text();
}
void describeChoices(std::ostream& s, const AttentionSpec& a) {
  s << "|heads=" << a.heads << "," << a.kvHeads << "|scale=" << a.scale << "|len=" << a.maxLen << "|kv=" << a.kvWidth;
}
void describeChoices(std::ostream& s, const HeadSpec& h) {
  describeChoices(s, h.norm);
  s << "|rows=" << nameOf(h.rows) << (h.bias ? "|bias" : "");
}
void describeChoices(std::ostream& s, const GatherSpec& g) {
  s << (g.arith == Arithmetic::int8 ? "|int8" : "") << (g.indexU8 ? "|u8" : "");
}
void describeChoices(std::ostream& s, const EltwiseSpec& e) {
  s << "|program=" << e.program.text() << (e.vector ? "|vector" : "");
}
void describeChoices(std::ostream&, const SelectSpec&) {}
void describeChoices(std::ostream&, const PoolSpec&) {}

}  // namespace

std::string KernelSpec::describe() const {
  std::ostringstream s;
  s.precision(17);
  s << className(kind())
    << "|of=" << (rowSym == KIME_ROWS_STATIC ? std::to_string(staticRows) : kime_row_symbol_names[rowSym])
    << "|w=" << in << "," << out;
  std::visit([&](const auto& c) { describeChoices(s, c); }, choices);
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

template <typename Tuple>
void keyFields(std::ostringstream& s, const Tuple& fields) {
  std::apply([&](const auto&... f) { (keyField(s, f), ...); }, fields);
}

}  // namespace

std::string KernelSpec::key() const {
  std::ostringstream s;
  s << className(kind()) << ';';
  keyFields(s, fields());
  std::visit([&](const auto& c) { keyFields(s, c.fields()); }, choices);
  return s.str();
}

std::string kernelSymbol(const KernelSpec& spec) {
  return std::string(className(spec.kind())) + "_" + ContentHash().add(spec.key()).hex().substr(0, 16);
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
