#include "spin_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kime {

namespace {

// How long an idle worker spins before it sleeps: longer than the gap between two kernels of a
// plan, shorter than anything a person would notice as a busy core.
constexpr auto kSpin = std::chrono::microseconds(300);

inline void relax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

SpinPool& SpinPool::instance() {
  static SpinPool pool;
  return pool;
}

SpinPool::~SpinPool() {
  stop_.store(true);
  {
    std::lock_guard<std::mutex> hold(sleepLock_);
    wake_.notify_all();
  }
  for (std::thread& t : workers_) t.join();
}

void SpinPool::reserve(size_t threads) {
  std::lock_guard<std::mutex> hold(reserveLock_);
  while (workers_.size() + 1 < threads) {
    size_t index = workers_.size();
    workers_.emplace_back([this, index] { workerLoop(index); });
    workerCount_.store(workers_.size());
  }
}

int SpinPool::hook(void* userContext, ParTask task, int min, int size, uint8_t* closure) {
  return instance().parallelFor(userContext, task, min, size, closure);
}

void SpinPool::work(size_t own) {
  // Counted here and subtracted once: a shared counter touched per index moved its cache line
  // between the cores at every index (a loop of 64 empty indices took 11 us on two threads).
  int ran = 0;
  for (size_t k = 0; k < ranges_; ++k) {
    Range& range = range_[(own + k) % ranges_];
    for (int i; (i = range.next.fetch_add(1)) < range.end; ++ran) {
      if (int r = task_(userContext_, i, closure_)) {
        int none = 0;
        result_.compare_exchange_strong(none, r);
      }
    }
  }
  if (ran) remaining_.fetch_sub(ran);
}

int SpinPool::parallelFor(void* userContext, ParTask task, int min, int size, uint8_t* closure) {
  const bool alone = active_.load(std::memory_order_relaxed) <= 1 || size <= 1 || workerCount_.load() == 0;
  if (alone || busy_.exchange(true)) {
    // One thread asked for, or another loop holds the pool (a nested loop, or a second
    // executor's): this caller runs it.
    for (int i = min; i < min + size; ++i)
      if (int r = task(userContext, i, closure)) return r;
    return 0;
  }
  task_ = task, userContext_ = userContext, closure_ = closure;
  ranges_ = std::min({active_.load(std::memory_order_relaxed), workerCount_.load() + 1, kMaxRanges});
  for (size_t p = 0; p < ranges_; ++p) {
    range_[p].next.store(min + int(int64_t(size) * int64_t(p) / int64_t(ranges_)));
    range_[p].end = min + int(int64_t(size) * int64_t(p + 1) / int64_t(ranges_));
  }
  remaining_.store(size), result_.store(0);
  const uint64_t open = generation_.load() + 1;  // odd: the loop is open
  generation_.store(open);
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> hold(sleepLock_);
    wake_.notify_all();
  }
  work(0);
  while (remaining_.load() > 0) relax();
  // Close the loop, then wait for any worker still inside it before its fields change.
  generation_.store(open + 1);
  while (inFlight_.load() > 0) relax();
  const int r = result_.load();
  busy_.store(false);
  return r;
}

void SpinPool::workerLoop(size_t index) {
  uint64_t done = 0;  // the last loop this worker took part in
  while (!stop_.load()) {
    auto idleSince = std::chrono::steady_clock::now();
    uint64_t g;
    while ((g = generation_.load()) == done || !(g & 1)) {
      if (stop_.load()) return;
      relax();
      if (std::chrono::steady_clock::now() - idleSince > kSpin) {
        std::unique_lock<std::mutex> hold(sleepLock_);
        sleepers_.fetch_add(1);
        wake_.wait(hold, [&] {
          uint64_t now = generation_.load();
          return stop_.load() || ((now & 1) && now != done);
        });
        sleepers_.fetch_sub(1);
        idleSince = std::chrono::steady_clock::now();
      }
    }
    done = g;
    if (index + 1 >= active_.load(std::memory_order_relaxed)) continue;  // not asked to help
    inFlight_.fetch_add(1);
    if (generation_.load() == g) work(index + 1);  // else the loop closed before this worker got in
    inFlight_.fetch_sub(1);
  }
}

}  // namespace kime
