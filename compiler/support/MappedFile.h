// A regular file mapped read-only: large inputs (checkpoints, artifacts) read without a copy, so
// that their pages come from the page cache instead of being faulted in and filled again.
#ifndef KIME_SUPPORT_MAPPEDFILE_H
#define KIME_SUPPORT_MAPPEDFILE_H

#include <cstddef>
#include <string>
#include <string_view>

namespace kime {

class MappedFile {
 public:
  // Maps `path`; throws CompileError ("PATH: cannot open: why", "PATH: not a regular file",
  // "PATH: cannot map: why"). An empty file maps to no bytes.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(map_), size_}; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kime

#endif  // KIME_SUPPORT_MAPPEDFILE_H
