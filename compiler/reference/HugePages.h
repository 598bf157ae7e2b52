// Storage for the reference evaluator's large values. A batch's intermediates are tens of MB each,
// and on this kind of machine the first touch of a page costs more than the arithmetic done on it:
// storage comes zeroed from the kernel (never written with zeros by this process), on huge pages
// from 2 MiB, so that the first touch is the op's own write, spread over its threads.
#ifndef KIME_REFERENCE_HUGEPAGES_H
#define KIME_REFERENCE_HUGEPAGES_H

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace kime::ref {

// `bytes` of zeros not touched yet: fresh pages, 2 MiB aligned and advised to be huge from 2 MiB;
// calloc's below. Throws std::bad_alloc.
void* allocateZeroed(size_t bytes);
void releaseZeroed(void* p, size_t bytes);

// An allocator of zeroed storage whose value-initialization writes nothing, so that Doubles(n) is
// n zeros no thread has touched. Storage taken back and grown again (resize after a shrink) would
// keep stale values: a Doubles is filled with assign(n, value) when it is reused.
template <typename T>
struct ZeroedAllocator {
  using value_type = T;
  ZeroedAllocator() = default;
  template <typename U>
  ZeroedAllocator(const ZeroedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocateZeroed(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { releaseZeroed(p, n * sizeof(T)); }
  template <typename U>
  void construct(U*) noexcept {}  // the storage is zero already
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const ZeroedAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const ZeroedAllocator<U>&) const {
    return false;
  }
};

using Doubles = std::vector<double, ZeroedAllocator<double>>;

// n zeros, untouched.
inline Doubles zeros(size_t n) { return Doubles(n); }

}  // namespace kime::ref

#endif  // KIME_REFERENCE_HUGEPAGES_H
