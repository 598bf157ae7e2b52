#include "PlanText.h"

#include <algorithm>

namespace kime {

namespace {

// One line per argument kind: in:NAME[ROWS], w:NAME[SHAPE], @OFFSET[ROWS, COLS].
// How --emit=plan marks a packed weight's layout: ^T transposed, ^P panels (^P.bf16 in pairs,
// ^P.i8 in int8 quads), ^S an int8 weight's scales.
const char* planSuffix(const WeightLayout& l) {
  using Kind = WeightLayout::Kind;
  if (l.kind == Kind::Int8Scales) return "^S";
  return l.kind == Kind::Transposed ? "^T"
         : l.kind != Kind::Panels   ? ""
         : l.pairs                  ? "^P.bf16"
         : l.quads                  ? "^P.i8"
                                    : "^P";
}

std::string argText(const PlanArg& a, const WeightPacker& w) {
  auto dims = [&](kime_row_symbol rows, int64_t bound, int64_t cols) {
    std::string r =
        rows == KIME_ROWS_STATIC ? std::to_string(bound) : kime_row_symbol_names[rows] + (":" + std::to_string(bound));
    return "[" + r + (cols ? ", " + std::to_string(cols) : "") + "]";
  };
  switch (a.source) {
    case PlanArg::Source::Input:
      return "in:" + std::string(kime_plan_input_names[a.input]) + dims(a.rows, a.rowCount, a.cols);
    case PlanArg::Source::Weight: {
      const PackedWeight& p = w.weights()[size_t(a.weight)];
      std::string shape;
      for (int64_t d : p.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
      return "w:" + p.name + planSuffix(p.layout) + "[" + shape + "]";
    }
    case PlanArg::Source::Arena:
      return "@" + std::to_string(a.offset) + dims(a.rows, a.rowCount, a.cols);
  }
  return "?";
}

}  // namespace

std::string planText(const BucketPlan& p, const KernelRegistry& k, const WeightPacker& w,
                     const std::vector<GraphOutput>& outputs) {
  const size_t generic = size_t(std::count_if(p.steps.begin(), p.steps.end(), [&](const PlanStep& st) {
    return kime_class_is_generic(k.specs[size_t(st.kernel)].kind());
  }));
  std::string s = "bucket " + describe(p.bucket) + ": arena " + std::to_string(p.arena) + " bytes, " +
                  std::to_string(p.steps.size()) + " kernel calls (" + std::to_string(p.steps.size() - generic) +
                  " fused, " + std::to_string(generic) + " generic)\n";
  for (const PlanStep& st : p.steps) {
    s += "  " + k.name(st.kernel) + " \"" + st.node + "\"(";
    for (size_t i = 0; i + 1 < st.args.size(); ++i) s += (i ? ", " : "") + argText(st.args[i], w);
    s += ") -> " + argText(st.args.back(), w) + "\n";
  }
  for (size_t i = 0; i < p.outputs.size(); ++i)
    s += (i ? ", " : "  ") + outputs[i].name + " " + argText(p.outputs[i], w);
  s += "\n";
  return s;
}

}  // namespace kime
