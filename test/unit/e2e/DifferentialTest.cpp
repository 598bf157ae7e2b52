// The compiled artifact against the reference evaluator on generated batches, sound and broken
// alike: both accept a batch or both refuse it with the same message, and what both accept has
// the same outputs within 1e-4. The broken ones are sound batches with one thing changed, as a
// caller might get it wrong: an id past the vocabulary, cu stepping back, a marker past its
// sequence, a type past the model's, lengths that disagree.
#include <random>

#include <gtest/gtest.h>

#include "CompiledModel.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

// `b` with one thing changed, picked by `rng`.
tooling::OwnedBatch broken(tooling::OwnedBatch b, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  switch (rng() % 6) {
    case 0:
      if (!b.ids.empty()) b.ids[pick(b.ids.size())] = 4096 + uint32_t(pick(10));
      break;
    case 1:
      if (b.cu.size() > 2) std::swap(b.cu[1], b.cu[2]), b.cu[1] += 1;
      break;
    case 2:
      if (!b.markers.empty()) b.markers[pick(b.markers.size())] += 64;
      break;
    case 3:
      if (!b.qtype.empty()) b.qtype[pick(b.qtype.size())] = uint8_t(4 + pick(200));
      break;
    case 4:
      b.qtype.push_back(0);
      break;
    default:
      if (!b.mcu.empty()) b.mcu.back() += 1;
      break;
  }
  return b;
}

TEST(Differential, TheArtifactAndTheReferenceAgreeOnSoundAndBrokenBatches) {
  const auto& cm = test::smallModel();
  auto made = Executor::create(cm.model, "serve", {2});
  ASSERT_TRUE(made) << made.error().text();
  auto& exec = *made;
  std::mt19937_64 rng(17);
  size_t accepted = 0, refused = 0;
  for (size_t i = 0; i < 80; ++i) {
    tooling::OwnedBatch b = tooling::uniformBatch(1 + rng() % 6, 1 + rng() % 20, rng() % 3, 4096, 4, 1000 + i);
    if (i % 2) b = broken(std::move(b), rng);
    Outputs got;
    RefOutputs want;
    auto err = exec->run(b.view(), got);
    auto refErr = evaluateReference(cm.graph, cm.weights, b.view(), want);
    SCOPED_TRACE("batch " + std::to_string(i));
    if (err && err->kind == ErrorKind::NoBucket) continue;  // the reference has no buckets
    ASSERT_EQ(bool(err), bool(refErr)) << (err ? err->text() : refErr->text());
    if (err) {
      EXPECT_EQ(err->text(), refErr->text());
      ++refused;
      continue;
    }
    ++accepted;
    ASSERT_EQ(got[0].size(), want[0].size());
    for (size_t k = 0; k < want[0].size(); ++k) EXPECT_TRUE(withinTolerance(got[0][k], want[0][k], kF32Tolerance));
    for (size_t s = 0; s < (want[1].size() / 2); ++s)
      for (int c = 0; c < 2; ++c) EXPECT_TRUE(withinTolerance(got[1][2 * s + c], want[1][2 * s + c], kF32Tolerance));
  }
  EXPECT_GT(accepted, 25u);
  EXPECT_GT(refused, 15u);
}

}  // namespace
}  // namespace kime
