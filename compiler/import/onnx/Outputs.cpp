// The model's outputs as the Graph's: the per-token one read at the markers (logits [M]), the
// per-sequence pair (act [S, 2]).
#include "Importer.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

// Whether `a` is one value per token ([B, L] or [B, L, 1]) or a pair per sequence ([B, 2]).
bool fits(const ActVal& a, bool perToken) {
  if (a.perToken() != perToken || a.layout.hasAtom(Atom::Kind::Bcast)) return false;
  return a.layout.width() == (perToken ? 1 : 2);
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
  const ActVal a = materialize(std::get<ActVal>(values_.at(names[0])));
  if (!perToken) return a.value;
  const std::string rows = rowsAt(graph_, a.value, true);
  return graph_.node(OpKind::Squeeze, names[0], {rows});
}

}  // namespace kime::onnx_import
