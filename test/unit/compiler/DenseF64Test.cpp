// The reference evaluator's dense loops give the same bits at every vector width: each ISA's table
// against plain scalar loops that sum in the documented order (this file, like the loops, is built
// with -ffp-contract=off). Shapes leave partial panels, tiles and lanes everywhere.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "reference/DenseKernels.h"

namespace kime::ref {
namespace {

struct Table {
  std::string name;
  const DenseKernels* kernels;
  bool supported;
};

std::vector<Table> tables() {
  std::vector<Table> t = {{"generic", &denseGeneric, true}};
#if defined(__x86_64__)
  t.push_back({"avx2", &denseAvx2, bool(__builtin_cpu_supports("avx2"))});
  t.push_back({"avx512", &denseAvx512, bool(__builtin_cpu_supports("avx512f"))});
#endif
  return t;
}

std::vector<double> randomValues(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

class DenseF64 : public ::testing::TestWithParam<Table> {
 protected:
  void SetUp() override {
    if (!GetParam().supported) GTEST_SKIP() << "this CPU has no " << GetParam().name;
  }
  const DenseKernels& k() const { return *GetParam().kernels; }
};

TEST_P(DenseF64, LinearRowsSumInputsInOrderAfterTheBias) {
  const size_t rows = 7, in = 19, out = 37;  // a tile of 4 and 3 single rows; a partial panel
  const std::vector<double> x = randomValues(rows * in, 1), w = randomValues(out * in, 2), bias = randomValues(out, 3);
  const PackedWeight packed = packWeight(w.data(), out, in);
  for (const double* b : {bias.data(), static_cast<const double*>(nullptr)}) {
    std::vector<double> want(rows * out), got(rows * out, -1.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t o = 0; o < out; ++o) {
        double acc = b ? b[o] : 0.0;
        for (size_t i = 0; i < in; ++i) acc += x[r * in + i] * w[o * in + i];
        want[r * out + o] = acc;
      }
    k().linearRows(x.data(), packed, b, got.data(), 0, 2);  // rows split as threads split them
    k().linearRows(x.data(), packed, b, got.data(), 2, rows);
    EXPECT_TRUE(sameBits(got, want)) << (b ? "with" : "without") << " a bias";
  }
}

TEST_P(DenseF64, ScoreRowSumsHeadDimsInOrder) {
  const size_t hd = 13, n = 37, stride = 40;  // one tile of 32 keys, then 5 in a vector of 8
  const std::vector<double> q = randomValues(hd, 4), kT = randomValues(hd * stride, 5);
  std::vector<double> want(n), got(n + 1, -1.0);
  for (size_t j = 0; j < n; ++j) {
    double acc = 0;
    for (size_t c = 0; c < hd; ++c) acc += q[c] * kT[c * stride + j];
    want[j] = acc;
  }
  k().scoreRow(q.data(), kT.data(), hd, stride, n, got.data());
  EXPECT_EQ(got[n], -1.0) << "wrote past the n scores";
  got.pop_back();
  EXPECT_TRUE(sameBits(got, want));
}

TEST_P(DenseF64, WeightedSumSumsRowsInOrder) {
  const size_t n = 9, hd = 75, vStride = 80;  // a tile of 64 columns, one of 8, 3 scalar ones
  const std::vector<double> p = randomValues(n, 6), v = randomValues(n * vStride, 7);
  std::vector<double> want(hd), got(hd, -1.0);
  for (size_t c = 0; c < hd; ++c) {
    double acc = 0;
    for (size_t j = 0; j < n; ++j) acc += p[j] * v[j * vStride + c];
    want[c] = acc;
  }
  k().weightedSum(p.data(), n, v.data(), vStride, hd, got.data());
  EXPECT_TRUE(sameBits(got, want));
}

INSTANTIATE_TEST_SUITE_P(EachIsa, DenseF64, ::testing::ValuesIn(tables()),
                         [](const ::testing::TestParamInfo<Table>& t) { return t.param.name; });

}  // namespace
}  // namespace kime::ref
