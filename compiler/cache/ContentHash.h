// BLAKE2b-256 over a sequence of fields (libsodium): the keys of the kernel cache, and the
// identity of the compiler that made an entry.
#ifndef KIME_CACHE_CONTENTHASH_H
#define KIME_CACHE_CONTENTHASH_H

#include <sodium.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kime {

class ContentHash {
 public:
  static constexpr size_t kBytes = 32;
  ContentHash();
  // Each field is added with its length first, so ("ab", "c") and ("a", "bc") differ.
  ContentHash& add(std::string_view field);
  ContentHash& add(int64_t field);
  std::string hex() const;    // 64 lowercase hex digits
  std::string bytes() const;  // kBytes raw bytes

 private:
  crypto_generichash_state state_;
};

// The BLAKE2b-256 of `data`, raw.
std::string hashBytes(std::string_view data);

// What makes this process's compiler what it is: the bytes of its executable, and the path, size
// and modification time of every shared library loaded in it (Halide, LLVM, NVRTC). Two processes
// with the same identity make the same code from the same kernel; an entry made by any other
// build is never looked up. Computed once per process.
const std::string& compilerIdentity();

}  // namespace kime

#endif  // KIME_CACHE_CONTENTHASH_H
