// Which Graph op a RowExpr is: it is evaluated on sample rows and compared with each function
// the Graph has (an activation, then a scale and shift of each feature; an RMS or layer norm with
// its gain and bias; RoPE of some theta; a slice of a linear's outputs). Templates.cpp.
#ifndef KIME_IMPORT_ONNX_TEMPLATES_H
#define KIME_IMPORT_ONNX_TEMPLATES_H

#include <optional>
#include <string>

#include "Importer.h"

namespace kime::onnx_import {

// `a` as a Graph value, a scale of it moved out into `scale` (attention scales q and k by a
// number before q·kᵀ; kime's attention takes that number).
ActVal materializeScaled(Importer& im, const ActVal& a, double& scale);

// `a` (fn) `c`, a constant of one value or one per feature, folded into the linear or norm that
// computes `a` where nothing but this node reads it (a bias added, a norm's gain); none otherwise.
// `rowsFirst`: `a` is the first operand.
std::optional<ActVal> foldConstant(Importer& im, const ActVal& a, const std::string& fn, const RowExpr& c,
                                   bool rowsFirst);

// The shortest decimal that is the same f32 as `v` (an epsilon as the model wrote it: 1e-06, not
// 9.9999999747524271e-07).
double asWritten(double v);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_TEMPLATES_H
