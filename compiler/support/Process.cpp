#include "support/Process.h"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/Diagnostic.h"

namespace kime {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "kime-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw CompileError("cannot make a temporary directory");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

int runProgram(const std::vector<std::string>& argv, std::string& out) {
  TempDir dir;
  const fs::path logFile = dir.path() / "output.log";
  pid_t pid = fork();
  if (pid < 0) throw CompileError("cannot start " + argv[0]);
  if (pid == 0) {
    FILE* log = std::fopen(logFile.c_str(), "w");
    if (log) {
      dup2(fileno(log), 1);
      dup2(fileno(log), 2);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(logFile);
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace kime
