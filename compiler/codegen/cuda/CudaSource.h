// The CUDA C++ of each kernel class, one file each (CudaEmbed.cpp, CudaNorm.cpp, CudaLinear.cpp,
// CudaAttention.cpp, CudaHead.cpp, CudaSelect.cpp; the generic classes in CudaGeneric.cpp), and
// the pieces of source they share (CudaSource.cpp). Each class's function returns its kernel's
// definition, named `name`, for a module that has the prelude.
#ifndef KIME_CODEGEN_CUDA_CUDASOURCE_H
#define KIME_CODEGEN_CUDA_CUDASOURCE_H

#include <functional>
#include <string>

#include "kernels/KernelSpec.h"

namespace kime::cuda {

// Rows of output one warp computes with tensor cores (the M of m16n8k8), and warps per block.
constexpr int64_t kTcRows = 16, kWarps = 4;

// Helpers every kernel uses: the slots of the counts (plan.h's), warp sums.
std::string prelude();
// The count of a kernel's output rows at run time: one of the batch's counts, or static.
std::string rowCount(const KernelShape& s);
// A float literal: "0.5f", "1e-06f", and "1.0f" for a whole number ("1f" is no C literal).
std::string num(double v);
// The norm statistics of row `row` of x (width K), computed by one warp, and element `c` of `v`
// normed by them.
std::string normStats(const KernelShape& s, const NormSpec& n, const std::string& row);
std::string normed(const NormSpec& n, const std::string& v, const std::string& c);
// A kernel's signature: the counts, then plan.h's slots of its spec in order (all read but the
// output).
std::string signature(const KernelSpec& s, const std::string& name);
// The index of the weight of input `k` for output `col` in the packed layout.
std::string weightIndex(const KernelShape& s, const LinearSpec& l, const std::string& k, const std::string& col);
// One elementwise function of `args` as a C expression: the CUDA back end of a program.
std::string applyFn(eltwise::Fn f, const std::string* a);
// A program as a C expression; `input(i)` is input i's element.
std::string programExpr(const eltwise::Program& program, const std::function<std::string(int)>& input);
// A linear's epilogue program: input 0 is `value`, inputs 1 to 3 in1 to in3 at `at`.
std::string epilogue(const eltwise::Program& program, const std::string& value, const std::string& at);

// Each class's kernel: `s` for its shape and signature, its class's spec beside it.
std::string embedSource(const KernelSpec& s, const EmbedSpec& e, const std::string& name);
std::string normSource(const KernelSpec& s, const NormSpec& n, const std::string& name);
std::string linearSource(const KernelSpec& s, const LinearSpec& l, const std::string& name);
// The columns one warp computes with tensor cores, or 0 when the linear does not fit them.
int64_t tensorCoreWidth(const KernelShape& s, const LinearSpec& l);
std::string linearTensorCoresSource(const KernelSpec& s, const LinearSpec& l, const std::string& name, int64_t W);
std::string attentionSource(const KernelSpec& s, const AttentionSpec& a, const std::string& name);
std::string headSource(const KernelSpec& s, const HeadSpec& h, const std::string& name);
std::string selectSource(const KernelSpec& s, const std::string& name);
std::string gatherSource(const KernelSpec& s, const GatherSpec& g, const std::string& name);
std::string eltwiseSource(const KernelSpec& s, const EltwiseSpec& e, const std::string& name);
std::string ropeSource(const KernelSpec& s, const RopeSpec& rope, const std::string& name);
std::string poolSource(const KernelSpec& s, const std::string& name);

}  // namespace kime::cuda

#endif  // KIME_CODEGEN_CUDA_CUDASOURCE_H
