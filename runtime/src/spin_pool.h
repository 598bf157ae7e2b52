// The threads that run the CPU kernels' parallel loops, in place of Halide's own pool.
//
// Why: a plan is tens of kernels back to back, each one parallel loop. Halide's pool parks its
// workers on a condition variable after each loop, so every kernel pays a wake-up (tens of
// microseconds, as much as a small kernel's work). Here the workers spin for a while after a
// loop, so the next kernel of the plan finds them awake; only after a quiet spell do they sleep.
// One pool serves the process (the kernels' parallel-for hook is global to their code); a loop
// started while another runs (a second executor on another thread) runs on its caller alone.
// Nothing is allocated per loop.
//
// Each thread of a loop owns a contiguous range of its indices (the caller the first) and takes
// from the others' only once its own is done. Consecutive kernels split rows alike, so a thread
// mostly reads rows it wrote itself, from its own cache: handing indices out one by one to
// whoever came first put half of every kernel's input in the other core's cache (a norm over
// 512 rows took 3x longer on two threads than on one).
#ifndef KIME_RUNTIME_SPIN_POOL_H
#define KIME_RUNTIME_SPIN_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kime {

// Halide's task and parallel-for signatures (halide_task_t, halide_do_par_for_t).
using ParTask = int (*)(void* userContext, int index, uint8_t* closure);
using ParFor = int (*)(void* userContext, ParTask task, int min, int size, uint8_t* closure);

class SpinPool {
 public:
  static SpinPool& instance();
  ~SpinPool();

  // At least `threads` threads can work on a loop (the caller and threads - 1 workers). Starts
  // workers; call it outside runs.
  void reserve(size_t threads);
  // The threads the following loops use, the caller included (at most those reserved).
  void use(size_t threads) { active_.store(threads, std::memory_order_relaxed); }
  // Runs task(i) for i in [min, min + size); returns the first nonzero result, else 0.
  int parallelFor(void* userContext, ParTask task, int min, int size, uint8_t* closure);
  // The hook handed to the kernels (halide_set_custom_do_par_for).
  static int hook(void* userContext, ParTask task, int min, int size, uint8_t* closure);

 private:
  SpinPool() = default;
  void workerLoop(size_t index);

  // One thread's share of a loop: the next index to run and the end, on a cache line of its own.
  struct alignas(64) Range {
    std::atomic<int> next{0};
    int end = 0;
  };
  static constexpr size_t kMaxRanges = 64;  // threads past it share the ranges
  // Runs indices of range `own` first, then of the others; returns the first nonzero result.
  void work(size_t own);

  // The loop being run; its fields are written before `generation_` turns odd.
  ParTask task_ = nullptr;
  void* userContext_ = nullptr;
  uint8_t* closure_ = nullptr;
  size_t ranges_ = 1;
  Range range_[kMaxRanges];
  std::atomic<int> remaining_{0}, result_{0};

  std::atomic<uint64_t> generation_{0};  // odd while a loop is open
  std::atomic<int> inFlight_{0};         // workers inside the open loop
  std::atomic<bool> busy_{false}, stop_{false};
  std::atomic<size_t> active_{1};
  std::atomic<int> sleepers_{0};
  std::mutex sleepLock_;
  std::condition_variable wake_;
  std::mutex reserveLock_;
  std::vector<std::thread> workers_;    // grows under reserveLock_ only
  std::atomic<size_t> workerCount_{0};  // what loops may read while it grows
};

}  // namespace kime

#endif  // KIME_RUNTIME_SPIN_POOL_H
