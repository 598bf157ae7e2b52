// The fused kernel classes' Halide pipelines, one file each (EmbedKernel.cpp, NormKernel.cpp,
// LinearKernel.cpp, AttentionKernel.cpp, HeadKernel.cpp, SelectKernel.cpp; the generic classes in
// GenericKernels.cpp), and the row arithmetic several of them share (RowMath.cpp).
#ifndef KIME_CODEGEN_CPU_CLASSKERNELS_H
#define KIME_CODEGEN_CPU_CLASSKERNELS_H

#include <functional>
#include <string>

#include "HalideKernels.h"

namespace kime::cpu {

// An index read from a buffer, clamped into `table`'s rows (dimension 1) so a bad index can
// never read outside it; the batch check already refused ids past the vocabulary.
inline Halide::Expr rowOf(Halide::Expr i, const Halide::ImageParam& table) {
  return Halide::clamp(Halide::cast<int>(i), 0, table.dim(1).extent() - 1);
}

// Column c of `table`'s row `row` as f32: an int8 table's values times the row's scale
// (LinearArithmetic.h's int8 embedding tables), or the f32 value.
inline Halide::Expr tableValue(const Halide::ImageParam& table, const Halide::ImageParam& scale, bool int8,
                               Halide::Expr c, Halide::Expr row) {
  return int8 ? Halide::cast<float>(table(c, row)) * scale(row) : table(c, row);
}

// Per row r, the sum over k < width of term(k, r): `lanes` partial sums in one vector (vertical
// adds), then one sum across them (not a scalar loop over k).
Halide::Func rowSum(const std::string& name, const std::function<Halide::Expr(Halide::Expr, Halide::Var)>& term,
                    int64_t width, int lanes, Halide::Var r);

// The norm of each row of `x` (width k), times gain (+ bias): a Func of (c, r). `stat(r)` is
// (mean, sum of squared deviations) for layer norm, (0, sum of squares) for rms; the caller
// places it.
Halide::Func normRows(NormKind kind, double eps, Halide::Func x, int64_t k, const Halide::ImageParam* g,
                      const Halide::ImageParam* b, Halide::Var c, Halide::Var r, Halide::Func& stat, int lanes);

HalideKernel embedKernel(const KernelShape& s, const EmbedSpec& e, const RowSchedule& sch);
HalideKernel normKernel(const KernelShape& s, const NormSpec& n, const RowSchedule& sch);
HalideKernel linearKernel(const KernelShape& s, const LinearSpec& l, const IsaInfo& isa);
// Attention in query tiles or per query, as the schedule says (AttentionSchedule::tiled).
HalideKernel attentionKernel(const KernelShape& s, const AttentionSpec& a, const IsaInfo& isa);
HalideKernel headKernel(const KernelShape& s, const HeadSpec& h, const RowSchedule& sch);
HalideKernel selectKernel(const KernelShape& s, const RowSchedule& sch);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_CLASSKERNELS_H
