// Several executors of one model on several threads at once, and one executor handed from thread
// to thread: thousands of batches, every output bit-identical to a single-threaded run. The
// executors' kernel pool is shared: a parallel loop started while another runs runs on its
// caller alone, so the results cannot depend on who got the pool.
#include <atomic>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/tooling/BatchGen.h"

namespace kime {
namespace {

constexpr size_t kBatches = 16, kRounds = 40, kThreads = 4;

std::vector<tooling::OwnedBatch> batches() {
  std::vector<tooling::OwnedBatch> out;
  for (size_t i = 0; i < kBatches; ++i)
    out.push_back(tooling::uniformBatch(1 + i % 8, 3 + i % 13, 1 + i % 3, test::testModel()->vocab(),
                                        test::testModel()->types(), 100 + i));
  return out;
}

bool same(const Outputs& a, const Outputs& b) {
  return a[0].size() == b[0].size() && (a[1].size() / 2) == (b[1].size() / 2) &&
         std::memcmp(a[0].data(), b[0].data(), a[0].size() * sizeof(float)) == 0 &&
         std::memcmp(a[1].data(), b[1].data(), a[1].size() * sizeof(float)) == 0;
}

std::unique_ptr<Executor> serve(size_t threads) {
  auto e = Executor::create(test::testModel(), "serve", {threads});
  if (!e) throw std::runtime_error(e.error().text());
  return std::move(*e);
}

// The outputs of every batch from one executor on this thread alone.
std::vector<Outputs> expected(const std::vector<tooling::OwnedBatch>& in) {
  auto e = serve(1);
  std::vector<Outputs> out(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (auto err = e->run(in[i].view(), out[i])) ADD_FAILURE() << err->text();
  return out;
}

TEST(Concurrency, ExecutorsOnSeveralThreadsGiveTheSingleThreadedBits) {
  const auto in = batches();
  const auto want = expected(in);
  std::atomic<size_t> mismatches{0}, runs{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto e = serve(2);  // each asks for the pool; the pool is shared
      Outputs out;
      for (size_t r = 0; r < kRounds; ++r)
        for (size_t i = 0; i < in.size(); ++i) {
          const size_t k = (i + t * 5) % in.size();
          if (e->run(in[k].view(), out) || !same(out, want[k])) ++mismatches;
          ++runs;
        }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(runs.load(), kThreads * kRounds * kBatches);
  EXPECT_EQ(mismatches.load(), 0u);
}

TEST(Concurrency, OneExecutorHandedBetweenThreadsGivesTheSameBits) {
  const auto in = batches();
  const auto want = expected(in);
  auto e = serve(2);
  size_t mismatches = 0;
  for (size_t r = 0; r < kRounds; ++r) {
    // One thread at a time uses it (an executor is not thread-safe), each a fresh thread.
    std::thread([&] {
      Outputs out;
      for (size_t i = 0; i < in.size(); ++i)
        if (e->run(in[i].view(), out) || !same(out, want[i])) ++mismatches;
    }).join();
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace kime
