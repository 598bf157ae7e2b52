// Reading a `.kime` file: mapping, container and signature checks, then the manifest
// (manifest_reader.cpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kime/kime.h"
#include "model_impl.h"

namespace kime {

namespace {

std::string hexAddress(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

}  // namespace

ModelImpl::~ModelImpl() {
  if (code) {
    // The kernels' thread pool lives in their code: stop it before unloading it.
    if (auto stop = reinterpret_cast<void (*)()>(code->symbol("halide_shutdown_thread_pool"))) stop();
    code.reset();
  }
  if (map && ownsMap) munmap(const_cast<uint8_t*>(map), mapSize);
}

const SectionInfo* ModelImpl::section(const std::string& n) const {
  for (const SectionInfo& s : sections)
    if (s.name == n) return &s;
  return nullptr;
}

std::vector<std::string> ModelImpl::sectionsUnder(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const SectionInfo& s : sections)
    if (s.name.compare(0, prefix.size(), prefix) == 0) out.push_back(s.name.substr(prefix.size()));
  return out;
}

namespace {

// The container (readContainer), then the manifest of the bytes at m.map.
std::optional<Error> checkArtifact(ModelImpl& m) {
  auto fail = [&](const std::string& msg) { return std::optional<Error>(Error::unsupported(m.path + ": " + msg)); };
  if (auto why = readContainer(m.map, m.mapSize, m.sections)) return fail(*why);
  if (!m.trusted.empty())
    if (auto why = checkSignature(m.map, m.sections, m.trusted)) return fail(*why);
  const SectionInfo* manifest = m.section(KIME_SECTION_MANIFEST);
  const SectionInfo* weights = m.section(KIME_SECTION_WEIGHTS_CPU);
  if (!manifest || !weights)
    return fail(std::string("a ") + KIME_SECTION_MANIFEST + " and a " + KIME_SECTION_WEIGHTS_CPU +
                " section are required");
  m.weightData = reinterpret_cast<const float*>(m.map + weights->offset);
  m.weightBytes = weights->size;
  if (auto why = readManifest(m.map + manifest->offset, manifest->size, m)) return fail("bad manifest: " + *why);
  return std::nullopt;
}

// The `size` bytes of `fd` in anonymous memory, read-only once read (MAP_FAILED, errno set, on
// failure). A MAP_PRIVATE file mapping would show later writes to the file in the pages not yet
// touched: a signature checked on it could be undone before the code is loaded.
void* readPrivately(int fd, size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return p;
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, static_cast<uint8_t*>(p) + got, size - got, off_t(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int why = n < 0 ? errno : EIO;  // shorter than fstat said: changed while read
      munmap(p, size);
      errno = why;
      return MAP_FAILED;
    }
    got += size_t(n);
  }
  mprotect(p, size, PROT_READ);
  return p;
}

}  // namespace

std::optional<Error> loadArtifact(const std::string& path, ModelImpl& m) {
  auto fail = [&](const std::string& msg) { return std::optional<Error>(Error::unsupported(path + ": " + msg)); };
  m.path = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  if (size_t(st.st_size) < sizeof(kime_file_header)) {
    ::close(fd);
    return fail("not a kime artifact (" + std::to_string(st.st_size) + " bytes is shorter than a header)");
  }
  void* p = m.trusted.empty() ? mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                              : readPrivately(fd, size_t(st.st_size));
  ::close(fd);
  if (p == MAP_FAILED) return fail(std::string("cannot map: ") + std::strerror(errno));
  m.map = static_cast<const uint8_t*>(p);
  m.mapSize = size_t(st.st_size);
  m.ownsMap = true;
  return checkArtifact(m);
}

std::optional<Error> loadArtifactMemory(const void* data, size_t size, const std::string& name, ModelImpl& m) {
  m.path = name;
  auto fail = [&](const std::string& msg) { return std::optional<Error>(Error::unsupported(name + ": " + msg)); };
  if (!data) return fail("no buffer (NULL)");
  if (reinterpret_cast<uintptr_t>(data) % KIME_MEMORY_ALIGN)
    return fail("the buffer at " + hexAddress(data) + " is not " + std::to_string(KIME_MEMORY_ALIGN) +
                "-byte aligned (its sections are used in place)");
  m.map = static_cast<const uint8_t*>(data);
  m.mapSize = size;
  m.ownsMap = false;  // the caller's, kept alive by the caller
  return checkArtifact(m);
}

}  // namespace kime
