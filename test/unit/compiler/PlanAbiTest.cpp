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

// One spec of each class, with and without each of its optional slots.
std::vector<KernelSpec> specsOfEveryShape() {
  std::vector<KernelSpec> out;
  for (bool learned : {false, true}) {
    KernelSpec e;
    e.kind = KIME_CLASS_EMBED, e.out = 32, e.learnedPos = learned;
    out.push_back(e);
  }
  for (NormKind norm : {NormKind::rms, NormKind::layer}) {
    KernelSpec n;
    n.kind = KIME_CLASS_NORM, n.norm = norm, n.eps = 1e-6, n.in = n.out = 32;
    out.push_back(n);
  }
  for (Activation act : {Activation::none, Activation::gelu, Activation::swiglu})
    for (bool bias : {false, true})
      for (bool residual : {false, true}) {
        KernelSpec l;
        l.kind = KIME_CLASS_LINEAR, l.act = act, l.bias = bias, l.residual = residual, l.in = 32, l.out = 64;
        l.biasUp = act == Activation::swiglu && bias;
        l.panel = 16;
        out.push_back(l);
      }
  for (bool gateBias : {false, true}) {  // a SwiGLU with a bias on one of its linears only
    KernelSpec l;
    l.kind = KIME_CLASS_LINEAR, l.act = Activation::swiglu, l.bias = gateBias, l.biasUp = !gateBias, l.in = 32,
    l.out = 64;
    l.panel = 16;
    out.push_back(l);
  }
  KernelSpec rope;
  rope.kind = KIME_CLASS_LINEAR, rope.in = 32, rope.out = 64, rope.panel = 16, rope.ropeHeads = 2;
  rope.ropeTheta = 1e4, rope.ropeRows = 64, rope.ropeInterleaved = true;
  out.push_back(rope);
  for (bool outputRows : {false, true}) {
    KernelSpec a;
    a.kind = KIME_CLASS_ATTENTION, a.in = a.out = 64, a.kvWidth = 32, a.heads = 4, a.kvHeads = 2;
    a.scale = 0.25, a.maxLen = 64, a.rowSym = outputRows ? KIME_ROWS_R : KIME_ROWS_T;
    out.push_back(a);
  }
  for (NormKind norm : {NormKind::none, NormKind::rms, NormKind::layer})
    for (bool bias : {false, true}) {
      KernelSpec h;
      h.kind = KIME_CLASS_HEAD, h.norm = norm, h.eps = 1e-6, h.bias = bias, h.rows = HeadRows::markers, h.in = 32,
      h.out = 1;
      out.push_back(h);
    }
  KernelSpec s;
  s.kind = KIME_CLASS_SELECT, s.in = s.out = 32, s.rowSym = KIME_ROWS_R;
  out.push_back(s);
  for (bool u8 : {false, true}) {
    KernelSpec g;
    g.kind = KIME_CLASS_GATHER, g.in = g.out = 32, g.indexU8 = u8, g.rowSym = u8 ? KIME_ROWS_S : KIME_ROWS_T;
    out.push_back(g);
  }
  for (const char* program :
       {"x silu", "x in1 mul", "x in1 in2 add mul", "x in1 in2 in3 add add gelu mul", "x in2 add", "x in1 sub tanh"}) {
    KernelSpec e;
    e.kind = KIME_CLASS_ELTWISE, e.in = e.out = 32, e.program = *eltwise::Program::parse(program);
    out.push_back(e);
  }
  KernelSpec v;
  v.kind = KIME_CLASS_ELTWISE, v.in = v.out = 1, v.program = *eltwise::Program::parse("x in1 add"), v.vector = true,
  v.rowSym = KIME_ROWS_M;
  out.push_back(v);
  KernelSpec p;
  p.kind = KIME_CLASS_POOL, p.in = p.out = 32, p.rowSym = KIME_ROWS_S;
  out.push_back(p);
  KernelSpec r;
  r.kind = KIME_CLASS_ROPE, r.in = r.out = 32, r.ropeHeads = 2, r.ropeTheta = 1e4, r.ropeRows = 64;
  r.rowSym = KIME_ROWS_STATIC, r.staticRows = 5;
  out.push_back(r);
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
