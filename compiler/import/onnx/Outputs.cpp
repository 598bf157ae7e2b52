// The model's outputs as the Graph's, by name: each per-token one ([B, L] or [B, L, K]) read at the
// markers ([M] or [M, K]), each per-sequence one ([B] or [B, K]) as it is ([S, 1] or [S, K]). Or,
// with --logits / --act, the seed's contract: logits [M] and act [S, 2].
#include <set>

#include "Importer.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

// Whether `a` is per token ([B, L] or [B, L, K]: true) or per sequence ([B] or [B, K]: false) and
// its width, where it is either.
std::optional<std::pair<bool, int64_t>> outputShapeOf(const ActVal& a) {
  const Layout l = normalized(a.layout);
  if (l.hasAtom(Atom::Kind::Bcast)) return std::nullopt;
  auto only = [&](size_t d, Atom::Kind k) { return l.dims[d].size() == 1 && l.dims[d][0].kind == k; };
  const bool perToken = a.perToken();
  const size_t first = perToken ? 2 : 1;  // the first feature dim
  if (l.rank() < first || l.rank() > first + 1 || !only(0, Atom::Kind::Batch) ||
      (perToken && !only(1, Atom::Kind::Len)))
    return std::nullopt;
  for (size_t d = first; d < l.rank(); ++d)
    for (const Atom& atom : l.dims[d])
      if (atom.kind != Atom::Kind::Feat) return std::nullopt;
  return std::make_pair(perToken, l.width());
}

// Whether `a` is one value per token ([B, L] or [B, L, 1]) or a pair per sequence ([B, 2]).
bool fits(const ActVal& a, bool perToken) {
  const auto shape = outputShapeOf(a);
  return shape && shape->first == perToken && shape->second == (perToken ? 1 : 2);
}

// The rows `value` has at the markers (or each sequence's first token). Row-wise nodes that only
// this reads (linears by weights, activations) are computed on those rows instead of every
// token's: the head reads the normed tokens it needs, as kime-graph's heads do.
std::string rowsAt(GraphEmitter& g, const std::string& value, bool markers) {
  Node* n = g.producer(value);
  const bool rowWise =
      n && g.readers(value) == 0 &&
      ((n->kind == OpKind::Linear && !g.producer(n->operands[1])) || (eltwiseFn(n->kind) && n->operands.size() == 1));
  if (rowWise) {
    Node copy = *n;
    copy.operands[0] = rowsAt(g, n->operands[0], markers);
    return g.node(copy.kind, copy.name + (markers ? ".markers" : ".first"), copy.operands, copy.attrs);
  }
  if (markers) return g.node(OpKind::GatherMarkers, value + ".markers", {value, "cu", "markers", "mcu"});
  return g.node(OpKind::FirstRows, value + ".first", {value, "cu"});
}

}  // namespace

std::string Importer::outputValue(const std::string& wanted, bool perToken) {
  const char* what = perToken ? "logits" : "act";
  const char* shape = perToken ? "one value per token ([B, L] or [B, L, 1])" : "a pair per sequence ([B, 2])";
  std::vector<std::string> names;
  for (const auto& o : model_.graph().output()) {
    auto it = values_.find(o.name());
    if (it == values_.end()) throw CompileError(source_ + ": output '" + o.name() + "' is computed by no node");
    const ActVal* a = std::get_if<ActVal>(&it->second);
    if (!wanted.empty()) {
      if (o.name() != wanted) continue;
      if (!a || !fits(*a, perToken))
        throw CompileError(source_ + ": output '" + o.name() + "' is " + describeValue(it->second) + ", not " + shape +
                           " as " + what + " must be");
    }
    if (a && fits(*a, perToken)) names.push_back(o.name());
  }
  if (names.empty())
    throw CompileError(source_ + ": " +
                       (wanted.empty() ? std::string("no output is ") + shape + ", which " + what + " needs"
                                       : "the model has no output '" + wanted + "'"));
  if (names.size() > 1)
    throw CompileError(source_ + ": outputs '" + names[0] + "' and '" + names[1] + "' are both " + shape +
                       ": say which is " + what + " (--" + what + " NAME)");
  return outputRows(names[0], std::get<ActVal>(values_.at(names[0])), perToken, perToken ? 1 : 2);
}

// A per-token output's rows at the markers ([M] where one wide), a per-sequence one as it is.
std::string Importer::outputRows(const std::string& name, const ActVal& value, bool perToken, int64_t width) {
  const ActVal a = materialize(value);
  if (!perToken) return a.value;
  const std::string rows = rowsAt(graph_, a.value, true);
  return width == 1 ? graph_.node(OpKind::Squeeze, name, {rows}) : rows;
}

std::vector<GraphOutput> Importer::graphOutputs() {
  if (options_.seedOutputs || !options_.logits.empty() || !options_.act.empty())
    return {{"logits", outputValue(options_.logits, true)}, {"act", outputValue(options_.act, false)}};
  std::set<std::string> all, wanted(options_.outputs.begin(), options_.outputs.end());
  for (const auto& o : model_.graph().output()) all.insert(o.name());
  for (const std::string& w : wanted)
    if (!all.count(w)) {
      std::string names;
      for (const std::string& n : all) names += (names.empty() ? "'" : ", '") + n + "'";
      throw CompileError(source_ + ": the model has no output '" + w + "' (its outputs: " + names + ")");
    }
  std::vector<GraphOutput> out;
  for (const auto& o : model_.graph().output()) {
    if (!wanted.empty() && !wanted.count(o.name())) continue;
    auto it = values_.find(o.name());
    if (it == values_.end()) throw CompileError(source_ + ": output '" + o.name() + "' is computed by no node");
    const ActVal* a = std::get_if<ActVal>(&it->second);
    const auto shape = a ? outputShapeOf(*a) : std::nullopt;
    if (!shape)
      throw CompileError(source_ + ": output '" + o.name() + "' is " + describeValue(it->second) +
                         ", not per token ([B, L] or [B, L, K]) or per sequence ([B] or [B, K])" +
                         (wanted.empty() ? "; name the outputs to import with --output NAME" : ""));
    out.push_back({o.name(), outputRows(o.name(), *a, shape->first, shape->second)});
  }
  return out;
}

}  // namespace kime::onnx_import
