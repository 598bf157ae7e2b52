// A shared object loaded by the runtime itself, from memory, without the system's dynamic loader.
//
// Why: a statically linked kime-run (for boards without a matching glibc) cannot dlopen the
// artifact's kernels; glibc would need a second copy of itself for them. The kernels are one
// self-contained object (Halide code and runtime, linked by ld.lld) whose only outside
// references are a few C library functions, so the runtime maps it, applies its relocations
// against its own table of those functions (host_symbols.cpp) and runs its constructors.
// Only what such an object needs is handled: 64-bit little-endian ET_DYN for the running
// machine, RELA relocations of the plain kinds, no thread-local storage.
#ifndef KIME_RUNTIME_ELF_IMAGE_H
#define KIME_RUNTIME_ELF_IMAGE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kime {

// Where an outside reference of the object goes: a C library function by name.
struct HostSymbol {
  const char* name;
  void* address;
};
// The functions the runtime offers loaded code (host_symbols.cpp).
const std::vector<HostSymbol>& hostSymbols();

class ElfImage {
 public:
  // Loads the object in `bytes`. On failure returns null and sets `error` to what is wrong,
  // e.g. "relocation 12 of type 37 is not supported" or "undefined symbol 'foo'".
  static std::unique_ptr<ElfImage> load(const uint8_t* bytes, size_t size, std::string& error);
  // Everything load does short of making the code executable and running it: parses, maps,
  // resolves and relocates into a scratch mapping, then drops it. For checks of untrusted input
  // (the fuzzer); true when load would get as far as the page protections.
  static bool check(const uint8_t* bytes, size_t size, std::string& error);
  ~ElfImage();  // runs the object's finalizers, then unmaps it
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  // The address of a symbol the object defines, or null.
  void* symbol(const std::string& name) const;

 private:
  struct Loader;
  ElfImage() = default;
  void* map_ = nullptr;  // the mapping, span_ bytes
  size_t span_ = 0;
  uint8_t* base_ = nullptr;  // where virtual address 0 of the object lies
  std::vector<void (*)()> finalizers_;
  struct Export {
    std::string name;
    void* address;
  };
  std::vector<Export> exports_;
};

}  // namespace kime

#endif  // KIME_RUNTIME_ELF_IMAGE_H
