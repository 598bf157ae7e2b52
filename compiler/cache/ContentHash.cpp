#include "cache/ContentHash.h"

#include <link.h>
#include <sys/stat.h>

#include <fstream>
#include <mutex>
#include <vector>

#include "support/Diagnostic.h"

namespace kime {

ContentHash::ContentHash() {
  if (sodium_init() < 0) throw CompileError("libsodium did not start");
  crypto_generichash_init(&state_, nullptr, 0, kBytes);
}

ContentHash& ContentHash::add(std::string_view field) {
  add(int64_t(field.size()));
  crypto_generichash_update(&state_, reinterpret_cast<const unsigned char*>(field.data()), field.size());
  return *this;
}

ContentHash& ContentHash::add(int64_t field) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(uint64_t(field) >> (8 * i));
  crypto_generichash_update(&state_, le, sizeof le);
  return *this;
}

std::string ContentHash::bytes() const {
  crypto_generichash_state copy = state_;  // hex() and bytes() may both be asked
  std::string out(kBytes, '\0');
  crypto_generichash_final(&copy, reinterpret_cast<unsigned char*>(out.data()), kBytes);
  return out;
}

std::string ContentHash::hex() const {
  const std::string raw = bytes();
  std::string out(2 * kBytes + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
  out.pop_back();
  return out;
}

std::string hashBytes(std::string_view data) {
  if (sodium_init() < 0) throw CompileError("libsodium did not start");
  std::string out(ContentHash::kBytes, '\0');
  crypto_generichash(reinterpret_cast<unsigned char*>(out.data()), out.size(),
                     reinterpret_cast<const unsigned char*>(data.data()), data.size(), nullptr, 0);
  return out;
}

namespace {

std::string executableBytes() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw CompileError("cannot read this program (/proc/self/exe) for the cache key");
  return bytes;
}

int addLibrary(dl_phdr_info* info, size_t, void* out) {
  auto& libs = *static_cast<std::vector<std::string>*>(out);
  struct stat st{};
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  // Files only: not the vDSO, nor a model's kernels loaded from memory (/proc/self/fd/N).
  if (name.rfind('/', 0) == 0 && name.rfind("/proc/", 0) != 0 && stat(name.c_str(), &st) == 0)
    libs.push_back(name + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                   std::to_string(st.st_mtim.tv_nsec));
  return 0;
}

}  // namespace

const std::string& compilerIdentity() {
  static std::once_flag once;
  static std::string identity;
  std::call_once(once, [] {
    std::vector<std::string> libs;
    dl_iterate_phdr(addLibrary, &libs);
    ContentHash h;
    h.add(executableBytes());
    for (const std::string& l : libs) h.add(l);
    identity = h.hex();
  });
  return identity;
}

}  // namespace kime
