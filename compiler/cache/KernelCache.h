// The kernel cache: compiled kernel objects and PTX, content addressed, shared by compiles.
//
// An entry is found by a key that hashes everything its bytes depend on (what it is, its target,
// the compiler's identity: ContentHash.h). Entries are written to a temporary file and renamed
// into place, so two compiles sharing a directory never see half an entry; each entry holds its
// key and the BLAKE2b of its payload, so a damaged or misplaced one is detected, removed and
// made again, never used. The directory is kept under a size bound, the least recently used
// entries removed first. An artifact is byte-identical with or without the cache.
#ifndef KIME_CACHE_KERNELCACHE_H
#define KIME_CACHE_KERNELCACHE_H

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace kime {

class KernelCache {
 public:
  // The default bound on the directory's size (KIME_CACHE_MAX_MB overrides it).
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(2) << 30;

  KernelCache(std::filesystem::path dir, uint64_t maxBytes);

  // The cache a compile uses unless told otherwise: $KIME_CACHE_DIR, else $XDG_CACHE_HOME/kime,
  // else ~/.cache/kime; none (nullptr) when none of these can be named. Bounded by
  // $KIME_CACHE_MAX_MB (MiB) or kDefaultMaxBytes.
  static std::unique_ptr<KernelCache> openDefault();
  static std::unique_ptr<KernelCache> open(const std::filesystem::path& dir);

  // The payload stored under `key` (ContentHash::hex()), or nothing: absent, or damaged (then
  // removed, and counted). A hit marks the entry used now.
  std::optional<std::string> get(const std::string& key);
  // Stores `payload` under `key`. A failure to write is counted and otherwise ignored: the
  // cache only ever saves time.
  void put(const std::string& key, const std::string& payload);
  // Removes the least recently used entries until the directory is within its bound.
  void trim();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entryPath(const std::string& key) const;
  // Since this object was made: entries found, not found, found damaged, not written.
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t damaged() const { return damaged_; }
  uint64_t writeFailures() const { return writeFailures_; }

 private:
  std::filesystem::path dir_;
  uint64_t maxBytes_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, damaged_{0}, writeFailures_{0};
};

}  // namespace kime

#endif  // KIME_CACHE_KERNELCACHE_H
