// Running the external programs the compiler needs (ld.lld, ptxas) and scratch directories.
#ifndef KIME_SUPPORT_PROCESS_H
#define KIME_SUPPORT_PROCESS_H

#include <filesystem>
#include <string>
#include <vector>

namespace kime {

// A temporary directory, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs argv (no shell) with its output going to `out`; returns the exit status (128 for a
// signal, 127 when it cannot start).
int runProgram(const std::vector<std::string>& argv, std::string& out);

}  // namespace kime

#endif  // KIME_SUPPORT_PROCESS_H
