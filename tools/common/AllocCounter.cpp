#include "AllocCounter.h"

#include <atomic>
#include <cstddef>

#if defined(KIME_ALLOC_COUNTER) && defined(__GLIBC__)

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {
std::atomic<uint64_t> counter{0};
}

// Interposed: glibc's own implementations do the work.
extern "C" void* malloc(size_t n) {
  counter.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t n, size_t s) {
  counter.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, s);
}
extern "C" void* realloc(void* p, size_t n) {
  counter.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
extern "C" void* aligned_alloc(size_t a, size_t n) {
  counter.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
extern "C" void* memalign(size_t a, size_t n) {
  counter.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
extern "C" int posix_memalign(void** out, size_t a, size_t n) {
  counter.fetch_add(1, std::memory_order_relaxed);
  *out = __libc_memalign(a, n);
  return *out || n == 0 ? 0 : 12 /* ENOMEM */;
}

namespace kime::tools {
bool allocCounterAvailable() { return true; }
uint64_t allocCount() { return counter.load(std::memory_order_relaxed); }
}  // namespace kime::tools

#else

namespace kime::tools {
bool allocCounterAvailable() { return false; }
uint64_t allocCount() { return 0; }
}  // namespace kime::tools

#endif
