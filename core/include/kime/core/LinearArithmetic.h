// Which linears take a narrow arithmetic, by their widths: kime-fuse's choice, and the rule the
// reference reads to simulate int8 where the compiled kernels use it (compiler/quant/Int8.h).
// Header-only and free of MLIR, so that both sides read this one definition.
#ifndef KIME_CORE_LINEARARITHMETIC_H
#define KIME_CORE_LINEARARITHMETIC_H

#include <cstdint>

#include "kime/core/KernelChoices.h"

namespace kime {

// A narrow linear's weights are panels of this many output columns, each of groups of inputs:
// pairs for bf16, quads for int8.
inline constexpr int64_t kLinearPanelColumns = 16;

// bf16: whole panels of whole pairs.
constexpr bool takesBf16(int64_t outs, int64_t ins) { return outs % kLinearPanelColumns == 0 && ins % 2 == 0; }

// int8's widest inputs: a row of them quantized (i16 for vpmaddwd) fits the kernels' 16 KB stack
// buffer of quantized rows.
inline constexpr int64_t kInt8MaxInputs = 8192;

// int8: whole panels of whole quads (one vpdpbusd or sdot lane), and more than one panel (a head
// has at most 16 outputs and stays f32), inputs up to kInt8MaxInputs.
constexpr bool takesInt8(int64_t outs, int64_t ins) {
  return outs % kLinearPanelColumns == 0 && outs > kLinearPanelColumns && ins % 4 == 0 && ins <= kInt8MaxInputs;
}

// The arithmetic a linear of these widths gets when `asked` is asked for: `asked` where its
// widths allow it, f32 otherwise.
constexpr Arithmetic linearArithmetic(Arithmetic asked, int64_t outs, int64_t ins) {
  if (asked == Arithmetic::bf16 && takesBf16(outs, ins)) return asked;
  if (isInt8(asked) && takesInt8(outs, ins)) return asked;
  return Arithmetic::f32;
}

// int8 embedding tables: with int8, a weight that gather_rows reads by the token ids or by the
// tokens' positions (an embed kernel's token table or learned position table, or a gather
// kernel's) is stored as int8 rows, each symmetric with its
// own scale (compiler/quant/Int8.h's rule for a weight's row), and each gathered row is read back
// to f32 (q * scale): a quarter of the table's bytes, and everything computed from the rows stays
// f32. Other gathers of the same weight (and a linear that shares it) read it as before.

}  // namespace kime

#endif  // KIME_CORE_LINEARARITHMETIC_H
