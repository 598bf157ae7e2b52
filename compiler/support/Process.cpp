#include "support/Process.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "support/Diagnostic.h"
#include "support/JsonFields.h"

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

namespace {

struct Child {
  pid_t pid;
  int fd;  // the read end of the pipe it reports a failure through
  std::string report;
};

Child startChild(size_t i, const std::function<void(size_t)>& work) {
  int fds[2];
  if (pipe(fds) != 0) throw CompileError(std::string("cannot make a pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw CompileError(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string failure;
    try {
      work(i);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception";
    }
    if (failure.empty()) _exit(0);
    if (write(fds[1], failure.data(), failure.size()) < 0) _exit(2);
    _exit(1);
  }
  close(fds[1]);
  return {pid, fds[0], {}};
}

// Reads what the child wrote; at the end of its pipe, waits for it and says how it ended.
bool drain(Child& c, std::string& error) {
  char buf[4096];
  const ssize_t n = read(c.fd, buf, sizeof buf);
  if (n > 0) return c.report.append(buf, size_t(n)), false;
  if (n < 0 && errno == EINTR) return false;
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    error.clear();
  else if (WIFSIGNALED(status))
    error = "the compiler process died of signal " + std::to_string(WTERMSIG(status));
  else
    error = c.report.empty() ? "the compiler process failed" : c.report;
  return true;
}

// Starts the children, at most `jobs` at once, and reports each as it ends.
void runAll(size_t count, int jobs, const std::function<void(size_t)>& work,
            const std::function<void(size_t, const std::string&)>& done, std::map<size_t, Child>& running) {
  size_t next = 0;
  while (next < count || !running.empty()) {
    while (next < count && running.size() < size_t(std::max(1, jobs))) {
      running.emplace(next, startChild(next, work));
      ++next;
    }
    std::vector<pollfd> fds;
    for (auto& entry : running) fds.push_back({entry.second.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw CompileError(std::string("poll: ") + std::strerror(errno));
    size_t k = 0;
    for (auto it = running.begin(); it != running.end(); ++k) {
      std::string error;
      if (fds[k].revents && drain(it->second, error)) {
        done(it->first, error);
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace

void forEachInChild(size_t count, int jobs, const std::function<void(size_t)>& work,
                    const std::function<void(size_t, const std::string&)>& done) {
  std::map<size_t, Child> running;
  try {
    runAll(count, jobs, work, done, running);
  } catch (...) {
    for (auto& entry : running) {  // none left behind
      kill(entry.second.pid, SIGKILL);
      close(entry.second.fd);
      waitpid(entry.second.pid, nullptr, 0);
    }
    throw;
  }
}

void mapInChildren(size_t count, int jobs, const std::function<std::string(size_t)>& work,
                   const std::function<void(size_t, std::string)>& done,
                   const std::function<std::string(size_t)>& what) {
  TempDir dir;
  auto file = [&](size_t i) { return (dir.path() / std::to_string(i)).string(); };
  std::string error;
  forEachInChild(
      count, jobs, [&](size_t i) { json::writeFileAtomic(file(i), work(i)); },
      [&](size_t i, const std::string& e) {
        if (e.empty())
          done(i, json::readFile(file(i)));
        else if (error.empty())
          error = what(i) + e;
      });
  if (!error.empty()) throw CompileError(error);
}

}  // namespace kime
