#include "cache/KernelCache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "cache/ContentHash.h"

namespace kime {

namespace fs = std::filesystem;

namespace {

// An entry: this line, the key, the payload's size and BLAKE2b (hex), each on a line, then the
// payload.
constexpr std::string_view kMagic = "kime kernel cache entry 1\n";

std::string hexOf(const std::string& raw) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += {digits[c >> 4], digits[c & 15]};
  return out;
}

std::string header(const std::string& key, const std::string& payload) {
  return std::string(kMagic) + key + "\n" + std::to_string(payload.size()) + "\n" + hexOf(hashBytes(payload)) + "\n";
}

// The payload of `entry` if it is a whole, undamaged entry for `key`.
std::optional<std::string> payloadOf(const std::string& entry, const std::string& key) {
  std::istringstream in(entry);
  std::string magic, k, size, hash;
  if (!std::getline(in, magic) || magic + "\n" != kMagic || !std::getline(in, k) || k != key ||
      !std::getline(in, size) || !std::getline(in, hash) || size.empty() ||
      size.find_first_not_of("0123456789") != std::string::npos || size.size() > 15)
    return std::nullopt;
  const size_t start = size_t(in.tellg());
  const size_t bytes = std::stoull(size);
  if (entry.size() != start + bytes) return std::nullopt;
  std::string payload = entry.substr(start);
  if (hexOf(hashBytes(payload)) != hash) return std::nullopt;
  return payload;
}

std::optional<std::string> readWhole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t envMegabytes(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  return *end ? fallback : uint64_t(mb) << 20;
}

}  // namespace

KernelCache::KernelCache(fs::path dir, uint64_t maxBytes) : dir_(std::move(dir)), maxBytes_(maxBytes) {}

std::unique_ptr<KernelCache> KernelCache::open(const fs::path& dir) {
  return std::make_unique<KernelCache>(dir, envMegabytes("KIME_CACHE_MAX_MB", kDefaultMaxBytes));
}

std::unique_ptr<KernelCache> KernelCache::openDefault() {
  if (const char* d = std::getenv("KIME_CACHE_DIR"); d && *d) return open(d);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return open(fs::path(x) / "kime");
  if (const char* h = std::getenv("HOME"); h && *h) return open(fs::path(h) / ".cache" / "kime");
  return nullptr;
}

fs::path KernelCache::entryPath(const std::string& key) const { return dir_ / "v1" / key.substr(0, 2) / key; }

std::optional<std::string> KernelCache::get(const std::string& key) {
  const fs::path p = entryPath(key);
  std::optional<std::string> entry = readWhole(p);
  if (!entry) {
    ++misses_;
    return std::nullopt;
  }
  std::optional<std::string> payload = payloadOf(*entry, key);
  if (!payload) {
    ++damaged_;
    ++misses_;
    std::error_code ec;
    fs::remove(p, ec);
    return std::nullopt;
  }
  ++hits_;
  utimensat(AT_FDCWD, p.c_str(), nullptr, 0);  // used now: the last to go when trimmed
  return payload;
}

void KernelCache::put(const std::string& key, const std::string& payload) {
  static std::atomic<uint64_t> serial{0};
  const fs::path final = entryPath(key);
  const fs::path tmp = final.parent_path() /
                       (".tmp." + key.substr(0, 16) + "." + std::to_string(getpid()) + "." + std::to_string(serial++));
  std::error_code ec;
  fs::create_directories(final.parent_path(), ec);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << header(key, payload) << payload;
    out.close();
    if (!ec && out && std::rename(tmp.c_str(), final.c_str()) == 0) return;
  }
  ++writeFailures_;
  fs::remove(tmp, ec);
}

void KernelCache::trim() {
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  const fs::path root = dir_ / "v1";
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const auto used = it->last_write_time(ec);
    const uint64_t size = it->file_size(ec);
    if (ec) continue;
    // A temporary file an hour old was left by a compile that died while writing it.
    if (it->path().filename().string().rfind(".tmp.", 0) == 0) {
      if (fs::file_time_type::clock::now() - used > std::chrono::hours(1)) fs::remove(it->path(), ec);
      continue;
    }
    entries.push_back({used, size, it->path()});
    total += size;
  }
  if (total <= maxBytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= maxBytes_) break;
    if (fs::remove(e.path, ec)) total -= e.size;  // another compile may have removed it first
  }
}

}  // namespace kime
