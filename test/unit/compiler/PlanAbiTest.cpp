// The plan ABI (plan.h) is the one spelling of what compiler and runtime agree on: the CPU
// kernels' parameters and the CUDA kernels' signatures are its slots, in its order, for every
// kernel class and every optional part.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "codegen/cpu/HalideKernels.h"
#include "codegen/cuda/CudaKernels.h"
#include "kernels/KernelSpec.h"
#include "kime/IR/KimeDialect.h"
#include "kime/plan.h"

namespace kime {
namespace {

KernelSpec make(ClassSpec choices, int64_t in, int64_t out, kime_row_symbol rows = KIME_ROWS_T,
                int64_t staticRows = 0) {
  KernelSpec s;
  s.in = in, s.out = out, s.rowSym = rows, s.staticRows = staticRows;
  s.choices = std::move(choices);
  return s;
}

LinearSpec linear(Activation act, bool bias, bool biasUp, bool residual) {
  LinearSpec l;
  l.act = act, l.bias = bias, l.biasUp = biasUp, l.residual = residual, l.panel = 16;
  return l;
}

// One spec of each class, with and without each of its optional slots.
std::vector<KernelSpec> specsOfEveryShape() {
  std::vector<KernelSpec> out;
  for (bool learned : {false, true}) out.push_back(make(EmbedSpec{Arithmetic::f32, false, learned}, 0, 32));
  for (NormKind norm : {NormKind::rms, NormKind::layer}) out.push_back(make(NormSpec{norm, 1e-6}, 32, 32));
  for (Activation act : {Activation::none, Activation::gelu, Activation::swiglu})
    for (bool bias : {false, true})
      for (bool residual : {false, true})
        out.push_back(make(linear(act, bias, act == Activation::swiglu && bias, residual), 32, 64));
  for (bool gateBias : {false, true})  // a SwiGLU with a bias on one of its linears only
    out.push_back(make(linear(Activation::swiglu, gateBias, !gateBias, false), 32, 64));
  LinearSpec rope = linear(Activation::none, false, false, false);
  rope.rope = RopeSpec{2, true, 1e4, 64};
  out.push_back(make(rope, 32, 64));
  for (bool outputRows : {false, true})
    out.push_back(make(AttentionSpec{4, 2, 0.25, 64, 32}, 64, 64, outputRows ? KIME_ROWS_R : KIME_ROWS_T));
  for (NormKind norm : {NormKind::none, NormKind::rms, NormKind::layer})
    for (bool bias : {false, true}) out.push_back(make(HeadSpec{{norm, 1e-6}, HeadRows::markers, bias}, 32, 1));
  out.push_back(make(SelectSpec{}, 32, 32, KIME_ROWS_R));
  for (bool u8 : {false, true})
    out.push_back(make(GatherSpec{Arithmetic::f32, u8}, 32, 32, u8 ? KIME_ROWS_S : KIME_ROWS_T));
  for (const char* program :
       {"x silu", "x in1 mul", "x in1 in2 add mul", "x in1 in2 in3 add add gelu mul", "x in2 add", "x in1 sub tanh"})
    out.push_back(make(EltwiseSpec{*eltwise::Program::parse(program), false}, 32, 32));
  out.push_back(make(EltwiseSpec{*eltwise::Program::parse("x in1 add"), true}, 1, 1, KIME_ROWS_M));
  out.push_back(make(PoolSpec{}, 32, 32, KIME_ROWS_S));
  out.push_back(make(RopeSpec{2, false, 1e4, 64}, 32, 32, KIME_ROWS_STATIC, 5));
  return out;
}

std::vector<std::string> slotNames(const KernelSpec& s) {
  std::vector<std::string> names;
  for (const kime_arg_slot& a : argSlots(s)) names.push_back(a.name);
  return names;
}

TEST(PlanAbi, EveryClassHasItsSlotsWithTheOutputLast) {
  for (int c = 0; c < KIME_CLASS_COUNT; ++c) {
    int n = 0;
    const kime_arg_slot* slots = kime_class_slots(kime_kernel_class(c), &n);
    ASSERT_GT(n, 1) << kime_kernel_class_names[c];
    EXPECT_STREQ(slots[n - 1].name, "out") << kime_kernel_class_names[c];
    EXPECT_EQ(slots[n - 1].optional, 0);
  }
}

TEST(PlanAbi, CpuKernelParametersAreThePlanSlots) {
  for (const KernelSpec& s : specsOfEveryShape()) {
    std::vector<std::string> want = slotNames(s);
    want.pop_back();  // the output is the pipeline's own
    for (const char* target : {"x86-64-avx2", "x86-64-avx512", "arm-64"}) {
      cpu::HalideKernel k = cpu::buildKernel(s, cpu::isaOf(target));
      std::vector<std::string> got;
      for (const auto& a : k.args) got.push_back(a.name);
      EXPECT_EQ(got, want) << s.describe() << " for " << target;
    }
  }
}

TEST(PlanAbi, CudaSignaturesAreThePlanSlots) {
  const std::vector<KernelSpec> specs = specsOfEveryShape();
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) names.push_back("k" + std::to_string(i));
  for (cuda::Math math : {cuda::Math::Tf32, cuda::Math::F32}) {
    const std::string source = cuda::moduleSource(specs, names, math);
    for (size_t i = 0; i < specs.size(); ++i) {
      std::smatch m;
      const std::regex sig("__global__ void " + names[i] + "\\(([^)]*)\\)");
      ASSERT_TRUE(std::regex_search(source, m, sig)) << names[i];
      std::vector<std::string> got;
      std::stringstream params(m[1].str());
      for (std::string p; std::getline(params, p, ',');) got.push_back(p.substr(p.find_last_of("* ") + 1));
      std::vector<std::string> want = slotNames(specs[i]);
      want.insert(want.begin(), "counts");
      EXPECT_EQ(got, want) << specs[i].describe() << " (" << cuda::mathName(math) << ")";
    }
  }
}

TEST(PlanAbi, NamesRoundTrip) {
  for (int c = 0; c < KIME_CLASS_COUNT; ++c) {
    EXPECT_EQ(kime_name_index(kime_kernel_class_names, KIME_CLASS_COUNT, kime_kernel_class_names[c]), c);
    // The dialect's enum: the same numbers (static_asserts in KimeDialect.cpp), the same names.
    EXPECT_EQ(mlir::kime::stringifyKernelClass(mlir::kime::KernelClass(c)).str(), kime_kernel_class_names[c]);
  }
  for (int i = 0; i < KIME_INPUT_COUNT; ++i)
    EXPECT_EQ(kime_name_index(kime_plan_input_names, KIME_INPUT_COUNT, kime_plan_input_names[i]), i);
  EXPECT_EQ(kime_name_index(kime_kernel_class_names, KIME_CLASS_COUNT, "conv"), -1);
  EXPECT_STREQ(cuda::mathName(cuda::parseMath("f32")), "f32");
}

}  // namespace
}  // namespace kime
