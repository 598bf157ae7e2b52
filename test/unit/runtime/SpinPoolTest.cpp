// The pool the kernels' parallel loops run on (runtime/src/spin_pool.h): every index once, the
// first error returned, nested and concurrent loops run to completion, many loops back to back,
// each thread's own contiguous share first.
#include <gtest/gtest.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "spin_pool.h"

namespace kime {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(1000);
};

int countHit(void*, int i, uint8_t* closure) {
  reinterpret_cast<Counts*>(closure)->hits[size_t(i)].fetch_add(1);
  return 0;
}

TEST(SpinPool, RunsEveryIndexOnce) {
  SpinPool& pool = SpinPool::instance();
  pool.reserve(4);
  for (size_t threads : {1, 2, 4}) {
    pool.use(threads);
    for (int loop = 0; loop < 200; ++loop) {  // back to back, as the kernels of a plan
      Counts c;
      ASSERT_EQ(pool.parallelFor(nullptr, countHit, 100, 900, reinterpret_cast<uint8_t*>(&c)), 0);
      for (int i = 0; i < 1000; ++i) ASSERT_EQ(c.hits[size_t(i)].load(), i >= 100 ? 1 : 0) << "index " << i;
    }
  }
}

struct Runners {
  std::thread::id who[8];
};

int slowRecord(void*, int i, uint8_t* closure) {
  reinterpret_cast<Runners*>(closure)->who[i] = std::this_thread::get_id();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return 0;
}

// Whether the caller ran indices 0-3 and one other thread 4-7: each its own contiguous share.
bool splitInTwoShares(const Runners& r) {
  for (int i = 0; i < 4; ++i)
    if (r.who[i] != std::this_thread::get_id()) return false;
  for (int i = 4; i < 8; ++i)
    if (r.who[i] == std::this_thread::get_id() || r.who[i] != r.who[4]) return false;
  return true;
}

TEST(SpinPool, EachThreadRunsItsOwnContiguousShare) {
  SpinPool& pool = SpinPool::instance();
  pool.reserve(2);
  pool.use(2);
  // Each index takes 5 ms, so a worker that is in within 5 ms runs its whole share. On a loaded
  // machine the OS may keep the worker off a core longer, and the caller then rightly takes some
  // of its share; so a few tries, of which one must show the split (a pool that deals indices
  // out one by one, or runs them all on the caller, never shows it).
  bool split = false;
  for (int attempt = 0; attempt < 10 && !split; ++attempt) {
    Counts warm;
    pool.parallelFor(nullptr, countHit, 0, 2, reinterpret_cast<uint8_t*>(&warm));  // wakes the worker
    Runners r;
    ASSERT_EQ(pool.parallelFor(nullptr, slowRecord, 0, 8, reinterpret_cast<uint8_t*>(&r)), 0);
    split = splitInTwoShares(r);
  }
  EXPECT_TRUE(split) << "in 10 loops of 8 indices, never the caller on 0-3 and one worker on 4-7";
}

int failAt7(void*, int i, uint8_t*) { return i == 7 ? -3 : 0; }

TEST(SpinPool, ReturnsATasksError) {
  SpinPool& pool = SpinPool::instance();
  pool.reserve(2);
  pool.use(2);
  EXPECT_EQ(pool.parallelFor(nullptr, failAt7, 0, 64, nullptr), -3);
  EXPECT_EQ(pool.parallelFor(nullptr, failAt7, 8, 64, nullptr), 0);  // the next loop starts clean
}

int nested(void*, int, uint8_t* closure) {
  // A loop inside a loop: runs on this thread, and completes.
  return SpinPool::instance().parallelFor(nullptr, countHit, 0, 1000, closure);
}

TEST(SpinPool, NestedAndConcurrentLoopsComplete) {
  SpinPool& pool = SpinPool::instance();
  pool.reserve(2);
  pool.use(2);
  Counts c;
  ASSERT_EQ(pool.parallelFor(nullptr, nested, 0, 3, reinterpret_cast<uint8_t*>(&c)), 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(c.hits[size_t(i)].load(), 3);
  // Two callers at once (two executors on two threads): each loop is whole.
  Counts a, b;
  std::thread other([&] {
    for (int k = 0; k < 50; ++k) pool.parallelFor(nullptr, countHit, 0, 1000, reinterpret_cast<uint8_t*>(&a));
  });
  for (int k = 0; k < 50; ++k) pool.parallelFor(nullptr, countHit, 0, 1000, reinterpret_cast<uint8_t*>(&b));
  other.join();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(a.hits[size_t(i)].load(), 50);
    ASSERT_EQ(b.hits[size_t(i)].load(), 50);
  }
}

}  // namespace
}  // namespace kime
