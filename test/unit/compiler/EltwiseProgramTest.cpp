// The elementwise program (kime/core/Eltwise.h): its words, its checks, its one evaluator, and the
// f64 functions the reference computes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kime/core/Eltwise.h"

namespace kime::eltwise {
namespace {

TEST(EltwiseProgram, ReadsAndWritesItsWords) {
  const auto p = Program::parse("x in1 mul  silu in2 sub");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->text(), "x in1 mul silu in2 sub");
  EXPECT_EQ(p->check(), "");
  EXPECT_EQ(p->inputsRead(), 0b111u);
  std::string error;
  EXPECT_FALSE(Program::parse("x in4 add", &error));
  EXPECT_EQ(error, "unknown step \"in4\"");
  for (Fn f : kAllFns) EXPECT_EQ(parseFn(name(f)), f);
}

TEST(EltwiseProgram, ChecksThatEachFunctionFindsItsValues) {
  EXPECT_EQ(Program::parse("x add")->check(), "add takes two values, but the stack holds 1");
  EXPECT_EQ(Program::parse("relu")->check(), "relu takes a value, but the stack holds 0");
  EXPECT_EQ(Program::parse("x in1")->check(), "leaves 2 values, not 1");
  EXPECT_EQ(Program().check(), "leaves 0 values, not 1");
  EXPECT_TRUE(Program::input(0).isIdentity());
  EXPECT_FALSE(Program::input(0).apply(Fn::tanh).isIdentity());
}

TEST(EltwiseProgram, EvaluatesInPostfixOrderKeepingOperandOrder) {
  // (in1 - x) * x, then tanh: sub is not symmetric, so the order shows.
  const Program p = *Program::parse("in1 x sub x mul tanh");
  const double inputs[] = {0.5, 2.0};
  const double got = evaluate<double>(p, [&](int i) { return inputs[i]; }, apply);
  EXPECT_DOUBLE_EQ(got, std::tanh((2.0 - 0.5) * 0.5));
  // The same evaluator builds text: what the CUDA back end does with it.
  const std::string text = evaluate<std::string>(
      p, [](int i) { return std::string(inputName(i)); },
      [](Fn f, const std::string* a) {
        return arity(f) == 2 ? "(" + a[0] + " " + name(f) + " " + a[1] + ")" : std::string(name(f)) + "(" + a[0] + ")";
      });
  EXPECT_EQ(text, "tanh(((in1 sub x) mul x))");
}

TEST(EltwiseProgram, FunctionsInF64) {
  auto at = [](Fn f, double x, double y = 0) {
    const double a[] = {x, y};
    return apply(f, a);
  };
  EXPECT_EQ(at(Fn::relu, -3), 0);
  EXPECT_EQ(at(Fn::relu, 3), 3);
  EXPECT_EQ(at(Fn::sigmoid, 0), 0.5);
  EXPECT_EQ(at(Fn::sub, 1, 3), -2);
  EXPECT_NEAR(at(Fn::gelu, 1), 0.8413447460685429, 1e-15);
  // The tanh form is within 1e-3 of the exact GELU and differs from it (a swapped formula fails).
  EXPECT_NEAR(at(Fn::gelu_tanh, 1), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(at(Fn::silu, -2), -2 / (1 + std::exp(2.0)), 1e-15);
  EXPECT_EQ(at(Fn::tanh, -0.5), std::tanh(-0.5));
}

}  // namespace
}  // namespace kime::eltwise
