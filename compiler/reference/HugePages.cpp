#include "HugePages.h"

#include <sys/mman.h>

#include <cstdint>

namespace kime::ref {

std::vector<double> zeros(size_t n) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  std::vector<double> v;
  v.reserve(n);  // a fresh mapping from malloc at this size: not touched yet
#if defined(MADV_HUGEPAGE)
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(v.data() + n)) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice: may fail
#endif
  v.assign(n, 0.0);
  return v;
}

}  // namespace kime::ref
