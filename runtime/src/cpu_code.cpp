// Loading the CPU kernels: the best code section this CPU runs, from memory (memfd + dlopen).
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model_impl.h"

namespace kime {

std::vector<std::string> hostCpuTargets() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  std::vector<std::string> t;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("fma"))
    t.push_back("x86-64-avx512");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c"))
    t.push_back("x86-64-avx2");
  return t;
#elif defined(__aarch64__)
  return {"arm-64"};
#else
  return {};
#endif
}

namespace {

// Halide calls this from a kernel that fails; the message waits for the executor to read it.
thread_local char lastKernelError[512];

void onKernelError(void*, const char* msg) {
  std::strncpy(lastKernelError, msg, sizeof lastKernelError - 1);
  lastKernelError[sizeof lastKernelError - 1] = '\0';
}

}  // namespace

const char* takeKernelError() { return lastKernelError; }

std::optional<Error> loadCpuCode(ModelImpl& m) {
#ifdef KIME_STATIC_RUNTIME
  // glibc cannot give a shared object loaded into a static executable the C library it needs.
  return Error::unsupported(m.path + ": this kime runtime is statically linked and cannot load the artifact's "
                            "kernels (they need the machine's glibc); use the dynamically linked kime-run");
#endif
  std::vector<std::string> have;
  for (const SectionInfo& s : m.sections)
    if (s.name.rfind("code.cpu.", 0) == 0) have.push_back(s.name.substr(9));
  std::vector<std::string> host = hostCpuTargets();
  const SectionInfo* code = nullptr;
  for (const std::string& t : host)
    if ((code = m.section("code.cpu." + t))) {
      m.cpuTarget = t;
      break;
    }
  if (!code) {
    std::string a, b;
    for (const std::string& t : have) a += (a.empty() ? "" : ", ") + t;
    for (const std::string& t : host) b += (b.empty() ? "" : " or ") + t;
    return Error::unsupported(m.path + ": the artifact has CPU code for " + (a.empty() ? "no target" : a) +
                              ", but this machine needs " + (b.empty() ? "a target kime does not know" : b));
  }
  // dlopen wants a file: a memfd is one that never touches the disk.
  int fd = memfd_create("kime-kernels", MFD_CLOEXEC);
  if (fd < 0) return Error::device(std::string("memfd_create: ") + std::strerror(errno));
  const uint8_t* p = m.map + code->offset;
  for (uint64_t done = 0; done < code->size;) {
    ssize_t n = write(fd, p + done, code->size - done);
    if (n <= 0) {
      close(fd);
      return Error::device(std::string("writing the kernels to memory: ") + std::strerror(errno));
    }
    done += uint64_t(n);
  }
  std::string procPath = "/proc/self/fd/" + std::to_string(fd);
  m.library = dlopen(procPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  close(fd);
  if (!m.library)
    return Error::unsupported(m.path + ": cannot load its " + m.cpuTarget + " code: " + dlerror());
  for (const std::string& k : m.kernelNames) {
    void* f = dlsym(m.library, (k + "_argv").c_str());
    if (!f) return Error::unsupported(m.path + ": its " + m.cpuTarget + " code lacks kernel " + k);
    m.kernels.push_back(reinterpret_cast<kime_kernel_argv_fn>(f));
  }
  using SetHandler = void* (*)(void (*)(void*, const char*));
  auto setHandler = reinterpret_cast<SetHandler>(dlsym(m.library, "halide_set_error_handler"));
  m.setThreads = reinterpret_cast<int (*)(int)>(dlsym(m.library, "halide_set_num_threads"));
  if (!setHandler || !m.setThreads)
    return Error::unsupported(m.path + ": its " + m.cpuTarget + " code lacks the Halide runtime");
  setHandler(onKernelError);
  return std::nullopt;
}

}  // namespace kime
