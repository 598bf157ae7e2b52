#include "OpsCommon.h"

namespace kime::onnx_import {

std::optional<Layout> layoutOf(const Value& v) {
  if (auto x = std::get_if<FilledVal>(&v)) return x->layout;
  if (auto x = std::get_if<IndexVal>(&v)) return x->layout;
  if (auto x = std::get_if<MaskVal>(&v)) return x->layout;
  if (auto x = std::get_if<PosTableVal>(&v)) return x->layout;
  if (auto x = std::get_if<ActVal>(&v)) return x->layout;
  if (auto x = std::get_if<ScoresVal>(&v)) return x->layout;
  if (auto x = std::get_if<SeqSumVal>(&v)) return x->layout;
  if (auto x = std::get_if<SeqLenVal>(&v)) return x->layout;
  if (auto x = std::get_if<RowNormVal>(&v)) return x->layout;
  return std::nullopt;
}

Value withLayout(Value v, Layout l) {
  std::visit(
      [&](auto& x) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, ConstVal> &&
                      !std::is_same_v<std::decay_t<decltype(x)>, SymVal>)
          x.layout = std::move(l);
      },
      v);
  return v;
}

std::pair<int64_t, int64_t> groupsOf(const Layout& l, int64_t width) {
  if (l.rank() == 0 || l.dims.back().empty()) return {width, 1};
  for (const Atom& a : l.dims.back())
    if (a.kind != Atom::Kind::Feat) return {width, 1};
  const int64_t last = l.size(l.rank() - 1).k;
  return {width / last, last};
}

Value relayout(Importer& im, const Value& v, Layout l) {
  if (std::holds_alternative<ScoresVal>(v))
    im.refuse(
        "moves the dims of attention scores (kime's attention takes q·kᵀ, scaled and masked, through a "
        "softmax over the keys, times v)");
  if (auto a = std::get_if<ActVal>(&v); a && a->tree) {
    const auto [g, w] = groupsOf(l, l.width());
    if (a->tree->groups != g || a->tree->width != w) {
      ActVal m = im.materialize(*a);
      m.layout = std::move(l);
      return m;
    }
  }
  return withLayout(v, std::move(l));
}

size_t rankOf(const Value& v) {
  if (auto c = std::get_if<ConstVal>(&v)) return c->t.shape.size();
  if (auto s = std::get_if<SymVal>(&v)) return s->scalar ? 0 : 1;
  return layoutOf(v)->rank();
}

int64_t axisIn(const Importer& im, int64_t axis, size_t rank) {
  const int64_t a = axis < 0 ? axis + int64_t(rank) : axis;
  if (a < 0 || a >= int64_t(rank))
    im.refuse("axis " + std::to_string(axis) + " is outside a value of " + std::to_string(rank) + " dims");
  return a;
}

std::optional<double> uniformValue(const Value& v) {
  if (auto c = std::get_if<ConstVal>(&v); c && c->t.size() > 0 && c->t.isUniform()) return c->t.at(0);
  if (auto f = std::get_if<FilledVal>(&v)) return f->v;
  return std::nullopt;
}

ScoresVal maskScores(const Importer& im, ScoresVal s, double real, double pad, const Layout& mask) {
  if (real != 0 || !(pad <= -1e4))
    im.refuse("the attention mask is not a key mask of attention_mask: it adds " + std::to_string(real) +
              " at tokens and " + std::to_string(pad) + " at padding (a key mask adds 0, and -1e4 or less)");
  const int len = mask.dimOf(Atom::Kind::Len);
  const size_t shift = s.layout.rank() - std::min(s.layout.rank(), mask.rank());
  // Along the keys, and each sequence's (and head's) own: the batch must meet the batch.
  const bool keys = mask.rank() <= s.layout.rank() && len >= 0 && size_t(len) + shift == s.layout.rank() - 1;
  if (!keys || !broadcastLayouts(mask, s.layout))
    im.refuse("the attention mask " + describe(mask) + " does not lie along the keys of the scores " +
              describe(s.layout) + " (each sequence's own): kime's mask is attention_mask's key mask");
  if (s.padding != 0) im.refuse("masks the attention scores twice");
  s.padding = pad;
  return s;
}

}  // namespace kime::onnx_import
