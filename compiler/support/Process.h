// Running the external programs the compiler needs (ld.lld, ptxas) and scratch directories.
#ifndef KIME_SUPPORT_PROCESS_H
#define KIME_SUPPORT_PROCESS_H

#include <filesystem>
#include <functional>
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

// Runs work(0) .. work(count - 1), each in a child process forked from this one (at most `jobs`
// at once), so that each starts from this process's state as it is now and none sees what
// another did. done(i, error) is called here as each ends: error is empty on success, else the
// exception's message from the child, or how it died. The child exits without running this
// process's destructors or flushing its streams.
void forEachInChild(size_t count, int jobs, const std::function<void(size_t)>& work,
                    const std::function<void(size_t, const std::string&)>& done);

// forEachInChild for work that makes bytes: each child's work(i) comes back here through a file
// to done(i, bytes) as it ends. Once all have ended, the first failure is thrown as a CompileError
// led by what(i).
void mapInChildren(size_t count, int jobs, const std::function<std::string(size_t)>& work,
                   const std::function<void(size_t, std::string)>& done,
                   const std::function<std::string(size_t)>& what);

}  // namespace kime

#endif  // KIME_SUPPORT_PROCESS_H
