// What the op handlers (Ops*.cpp) share: the layout of a value of any kind, and axis arithmetic.
#ifndef KIME_IMPORT_ONNX_OPSCOMMON_H
#define KIME_IMPORT_ONNX_OPSCOMMON_H

#include <optional>

#include "Importer.h"

namespace kime::onnx_import {

// The layout of a value that has one (everything but constants and sizes).
std::optional<Layout> layoutOf(const Value& v);
// `v` with layout `l` (its other facts unchanged).
Value withLayout(Value v, Layout l);
// What a layout op (Reshape, Transpose, Unsqueeze, Squeeze, Expand) makes of `v`: `v` with layout
// `l`. Attention scores keep theirs (which L is the queries' and which the keys' is their
// layout's), and rows whose pending expression groups the row otherwise than `l`'s last dim
// are made into Graph ops first (a later reduction or slice reads the groups of `l`).
Value relayout(Importer& im, const Value& v, Layout l);
// The groups of a row of `width` features under `l`: its last dim, where that is features only.
std::pair<int64_t, int64_t> groupsOf(const Layout& l, int64_t width);
// The rank of any value.
size_t rankOf(const Value& v);

// An axis in [0, rank), from ONNX's (negative counts from the end); refuses one outside.
int64_t axisIn(const Importer& im, int64_t axis, size_t rank);

// The constant a value stands for where it is one number everywhere: a constant whose elements
// are all equal, or a filled tensor.
std::optional<double> uniformValue(const Value& v);

// Scores with a function of the mask added (its value at tokens `real`, at padding `pad`), or
// picked over them where the mask says padding: the key mask, which must be 0 (or pick the scores)
// at tokens and push padding keys below -1e4; refuses anything else, and a mask that is not
// along the keys.
ScoresVal maskScores(const Importer& im, ScoresVal s, double real, double pad, const Layout& mask);

// The rows of `a` divided by their L2 norm clamped below by `eps` (F.normalize), as an RMS norm.
ActVal l2Normalize(Importer& im, const ActVal& a, double eps);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_OPSCOMMON_H
