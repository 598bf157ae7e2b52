// The kernel cache's store: entries found as written, damaged ones detected and removed, the
// least recently used removed first past the bound, writers of one key never seen half done.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "cache/ContentHash.h"
#include "cache/KernelCache.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace kime {
namespace {

namespace fs = std::filesystem;

std::string keyOf(const std::string& what) { return ContentHash().add(what).hex(); }

// Sets an entry's last use `ago` seconds back.
void usedAgo(const fs::path& p, int ago) {
  fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::seconds(ago));
}

TEST(KernelCache, AnEntryIsFoundAsItWasWritten) {
  TempDir dir;
  KernelCache cache(dir.path(), KernelCache::kDefaultMaxBytes);
  const std::string payload("object\0bytes", 12);
  EXPECT_FALSE(cache.get(keyOf("a")));
  cache.put(keyOf("a"), payload);
  EXPECT_EQ(cache.get(keyOf("a")).value_or(""), payload);
  EXPECT_FALSE(cache.get(keyOf("b")));
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.damaged(), 0u);
}

TEST(KernelCache, KeysHashEveryFieldApart) {
  EXPECT_NE(ContentHash().add("ab").add("c").hex(), ContentHash().add("a").add("bc").hex());
  EXPECT_NE(ContentHash().add(int64_t(1)).hex(), ContentHash().add(int64_t(2)).hex());
  EXPECT_EQ(ContentHash().add("x").hex().size(), 64u);
}

// Each way an entry can be damaged: it is not used, it is removed, and it is counted.
TEST(KernelCache, ADamagedEntryIsMissedAndRemoved) {
  const std::string payload(5000, 'k');
  const std::vector<std::pair<const char*, std::function<void(std::string&)>>> damages = {
      {"truncated", [](std::string& e) { e.resize(e.size() - 7); }},
      {"a payload byte changed", [](std::string& e) { e[e.size() - 100] ^= 1; }},
      {"longer", [](std::string& e) { e += "x"; }},
      {"empty", [](std::string& e) { e.clear(); }},
      {"header changed", [](std::string& e) { e[3] = 'X'; }}};
  for (const auto& [what, damage] : damages) {
    TempDir dir;
    KernelCache cache(dir.path(), KernelCache::kDefaultMaxBytes);
    cache.put(keyOf("k"), payload);
    const fs::path p = cache.entryPath(keyOf("k"));
    std::string entry = json::readFile(p.string());
    damage(entry);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << entry;
    EXPECT_FALSE(cache.get(keyOf("k"))) << what;
    EXPECT_EQ(cache.damaged(), 1u) << what;
    EXPECT_FALSE(fs::exists(p)) << what;
    cache.put(keyOf("k"), payload);  // made again
    EXPECT_EQ(cache.get(keyOf("k")).value_or(""), payload) << what;
  }
}

TEST(KernelCache, AnEntryUnderAnotherKeysNameIsNotUsed) {
  TempDir dir;
  KernelCache cache(dir.path(), KernelCache::kDefaultMaxBytes);
  cache.put(keyOf("a"), "payload of a");
  const fs::path b = cache.entryPath(keyOf("b"));
  fs::create_directories(b.parent_path());
  fs::copy_file(cache.entryPath(keyOf("a")), b);
  EXPECT_FALSE(cache.get(keyOf("b")));
  EXPECT_EQ(cache.damaged(), 1u);
}

TEST(KernelCache, TrimRemovesTheLeastRecentlyUsedFirst) {
  TempDir dir;
  const std::string payload(1000, 'p');
  KernelCache cache(dir.path(), 2500);  // room for two entries with their headers, not three
  for (const char* k : {"old", "older", "newest"}) cache.put(keyOf(k), payload);
  usedAgo(cache.entryPath(keyOf("old")), 100);
  usedAgo(cache.entryPath(keyOf("older")), 200);
  ASSERT_TRUE(cache.get(keyOf("older")));  // used now: no longer the oldest
  cache.trim();
  EXPECT_FALSE(fs::exists(cache.entryPath(keyOf("old"))));
  EXPECT_TRUE(fs::exists(cache.entryPath(keyOf("older"))));
  EXPECT_TRUE(fs::exists(cache.entryPath(keyOf("newest"))));
}

TEST(KernelCache, ATemporaryFileLeftByADeadCompileIsRemovedWhenOld) {
  TempDir dir;
  KernelCache cache(dir.path(), KernelCache::kDefaultMaxBytes);
  cache.put(keyOf("a"), "a");
  const fs::path stale = cache.entryPath(keyOf("a")).parent_path() / ".tmp.left.behind";
  const fs::path fresh = cache.entryPath(keyOf("a")).parent_path() / ".tmp.being.written";
  std::ofstream(stale) << "half";
  std::ofstream(fresh) << "half";
  usedAgo(stale, 2 * 3600);
  cache.trim();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // perhaps another compile's, still being written
}

// Two writers and a reader on one key: the reader sees the whole payload or
// nothing, never a part.
TEST(KernelCache, WritersOfOneKeyAreNeverSeenHalfDone) {
  TempDir dir;
  const std::string payload(1 << 20, 'w');
  auto writer = [&] {
    KernelCache cache(dir.path(), KernelCache::kDefaultMaxBytes);
    for (int i = 0; i < 30; ++i) cache.put(keyOf("shared"), payload);
  };
  std::thread a(writer), b(writer);
  KernelCache reader(dir.path(), KernelCache::kDefaultMaxBytes);
  for (int i = 0; i < 200; ++i) {
    if (auto got = reader.get(keyOf("shared"))) {
      ASSERT_EQ(got->size(), payload.size());
    }
  }
  a.join();
  b.join();
  EXPECT_EQ(reader.damaged(), 0u);
  EXPECT_EQ(reader.get(keyOf("shared")).value_or(""), payload);
}

}  // namespace
}  // namespace kime
