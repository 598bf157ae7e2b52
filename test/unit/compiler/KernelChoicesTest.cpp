// The kernels' choices are spelled once (kime/core/KernelChoices.h): each name parses back to its
// value, the IR and the options parse through the same names, and the KernelSpec carries them.
#include <gtest/gtest.h>

#include "kernels/KernelSpec.h"
#include "kime/core/KernelChoices.h"
#include "kime/core/LinearArithmetic.h"
#include "pipeline/Precision.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

template <class E>
void expectNamesRoundTrip() {
  for (size_t i = 0; i < choiceCount<E>(); ++i) {
    const std::optional<E> e = parseChoice<E>(nameOf(E(i)));
    ASSERT_TRUE(e) << nameOf(E(i));
    EXPECT_EQ(size_t(*e), i);
  }
  EXPECT_FALSE(parseChoice<E>("")) << ChoiceNames<E>::what;
  EXPECT_FALSE(parseChoice<E>("F32")) << ChoiceNames<E>::what;  // names are case-sensitive
}

TEST(KernelChoices, EveryNameParsesBackToItsValue) {
  expectNamesRoundTrip<Arithmetic>();
  expectNamesRoundTrip<NormKind>();
  expectNamesRoundTrip<Activation>();
  expectNamesRoundTrip<HeadRows>();
  expectNamesRoundTrip<GatherKind>();
}

TEST(KernelChoices, ListsForMessages) {
  EXPECT_EQ(choiceList<Arithmetic>(), "f32, bf16, int8 or int8pairs");
  EXPECT_EQ(choiceList<NormKind>(NormKind::rms), "rms or layer");
  EXPECT_EQ(choiceList<GatherKind>(GatherKind::rows), "rows, seqs, first or markers");
  EXPECT_FALSE(choiceHasNone<Arithmetic>());  // f32 is a value, written or left out
  EXPECT_TRUE(choiceHasNone<NormKind>());
  EXPECT_TRUE(choiceHasNone<GatherKind>());
}

TEST(KernelChoices, CpuPrecisionParsesThroughTheSameNames) {
  EXPECT_EQ(parseCpuPrecision("int8"), Arithmetic::int8);
  EXPECT_EQ(parseCpuPrecision("bf16"), Arithmetic::bf16);
  try {
    parseCpuPrecision("f16");
    FAIL() << "f16 was taken";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "--cpu-precision must be f32, bf16, int8 or int8pairs, not \"f16\"");
  }
}

TEST(KernelChoices, LinearArithmeticKeepsF32WhereTheWidthsDoNotAllowTheAsked) {
  EXPECT_EQ(linearArithmetic(Arithmetic::int8, 64, 32), Arithmetic::int8);
  EXPECT_EQ(linearArithmetic(Arithmetic::int8, 16, 32), Arithmetic::f32);  // one panel: a head
  EXPECT_EQ(linearArithmetic(Arithmetic::int8, 64, 30), Arithmetic::f32);  // no whole quads
  EXPECT_EQ(linearArithmetic(Arithmetic::bf16, 16, 30), Arithmetic::bf16);
  EXPECT_EQ(linearArithmetic(Arithmetic::bf16, 24, 32), Arithmetic::f32);  // no whole panels
  EXPECT_EQ(linearArithmetic(Arithmetic::f32, 64, 32), Arithmetic::f32);
}

TEST(KernelChoices, SpecsOfOtherArithmeticsAreOtherKernels) {
  KernelSpec a;
  a.in = 64, a.out = 64;
  LinearSpec l;
  l.panel = 16;
  a.choices = l;
  KernelSpec b = a;
  b.as<LinearSpec>().arith = Arithmetic::int8;
  EXPECT_NE(a, b);
  EXPECT_NE(a.key(), b.key());
  EXPECT_TRUE(b.as<LinearSpec>().int8());
  EXPECT_FALSE(b.as<LinearSpec>().bf16());
  EXPECT_EQ(b.arith(), Arithmetic::int8);
  EXPECT_NE(b.describe().find("|int8"), std::string::npos) << b.describe();
  EXPECT_EQ(a.describe().find("int8"), std::string::npos) << a.describe();
}

}  // namespace
}  // namespace kime
