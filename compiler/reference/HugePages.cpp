#include "HugePages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace kime::ref {

namespace {

constexpr size_t kHuge = size_t(2) << 20;

size_t mappedSize(size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }

}  // namespace

void* allocateZeroed(size_t bytes) {
  if (bytes < kHuge) {
    void* p = std::calloc(bytes ? bytes : 1, 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Mapped one huge page over, then trimmed to a 2 MiB aligned start: every page can be a huge one.
  const size_t size = mappedSize(bytes);
  void* raw = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHuge - 1) & ~uintptr_t(kHuge - 1);
  if (aligned > begin) munmap(raw, aligned - begin);
  if (const size_t tail = begin + kHuge - aligned) munmap(reinterpret_cast<void*>(aligned + size), tail);
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // advice: may fail
#endif
  return reinterpret_cast<void*>(aligned);
}

void releaseZeroed(void* p, size_t bytes) {
  if (bytes < kHuge)
    std::free(p);
  else
    munmap(p, mappedSize(bytes));
}

}  // namespace kime::ref
