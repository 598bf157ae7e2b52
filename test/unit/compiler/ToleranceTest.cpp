// The tolerances every check holds outputs to (Reference.h) accept the errors each arithmetic
// was measured to make, and refuse a wrong sign, ten times too large and ten times too small for
// outputs as small as 0.03 (the smallest the test models give are ~0.02).
#include <gtest/gtest.h>

#include "reference/Reference.h"

namespace kime {
namespace {

struct Named {
  const char* name;
  Tolerance t;
  double measured;  // the largest error seen (f32 kernels, bf16 linears, TF32 in the emulator)
};

const Named kTolerances[] = {
    {"f32", kF32Tolerance, 2e-6}, {"bf16", kBf16Tolerance, 1.6e-2}, {"tf32", kTf32Tolerance, 8.7e-4}};

TEST(Tolerance, RefusesAWrongSignOrMagnitudeAndAcceptsTheMeasuredError) {
  for (const Named& n : kTolerances) {
    SCOPED_TRACE(n.name);
    for (double want : {0.03, -0.03, 0.3, 3.0, -3.0}) {
      SCOPED_TRACE(want);
      EXPECT_FALSE(withinTolerance(-want, want, n.t));
      EXPECT_FALSE(withinTolerance(10 * want, want, n.t));
      EXPECT_FALSE(withinTolerance(want / 10, want, n.t));
      EXPECT_TRUE(withinTolerance(want + n.measured, want, n.t));
      EXPECT_TRUE(withinTolerance(want - n.measured, want, n.t));
    }
  }
}

TEST(Tolerance, IsAbsolutePlusRelative) {
  const Tolerance t{1e-2, 1e-1};
  EXPECT_TRUE(withinTolerance(10.0 + 1.0 + 1e-2 - 1e-9, 10.0, t));
  EXPECT_FALSE(withinTolerance(10.0 + 1.0 + 1e-2 + 1e-9, 10.0, t));
  EXPECT_EQ(describe(kF32Tolerance), "0.0001");
  EXPECT_EQ(describe(kBf16Tolerance), "abs 0.02 + rel 0.01");
}

}  // namespace
}  // namespace kime
