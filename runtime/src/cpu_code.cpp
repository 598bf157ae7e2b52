// Loading the CPU kernels: the best code section this CPU runs, from memory, by the system's
// loader (memfd + dlopen) or by kime's own (static executables; KIME_KERNEL_LOADER=kime).
#include <dlfcn.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <variant>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#endif

#include "elf_image.h"
#include "model_impl.h"
#include "spin_pool.h"

namespace kime {

std::vector<std::string> hostCpuTargets() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  std::vector<std::string> t;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("fma");
  // bf16 artifacts' kernels (Halide's Sapphire Rapids set, of which they use the BF16 dot
  // products and conversions, VNNI, VBMI and IFMA at most).
  // int8 artifacts' kernels: the same set (Halide 14 has VNNI only there), of which they use VNNI.
  if (avx512 && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni") &&
      __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512ifma")) {
    t.push_back(kime_cpu_target_names[KIME_CPU_X86_64_AVX512VNNI]);
    t.push_back(kime_cpu_target_names[KIME_CPU_X86_64_AVX512BF16]);
  }
  if (avx512) t.push_back(kime_cpu_target_names[KIME_CPU_X86_64_AVX512]);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
    t.push_back(kime_cpu_target_names[KIME_CPU_X86_64_AVX2]);
  return t;
#elif defined(__aarch64__)
  // int8 artifacts' kernels for the dot-product extension (sdot), where the kernel says it has it.
  if (getauxval(AT_HWCAP) & HWCAP_ASIMDDP)
    return {kime_cpu_target_names[KIME_CPU_ARM_64_DOTPROD], kime_cpu_target_names[KIME_CPU_ARM_64]};
  return {kime_cpu_target_names[KIME_CPU_ARM_64]};
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

namespace {

#ifndef KIME_STATIC_RUNTIME
// The system's loader: the kernels become a file in memory (memfd) that dlopen maps. Debuggers
// and profilers see their symbols.
// glibc's dlopen hands out an object already loaded under the same name without reading the file:
// the memfd, whose number makes the name, stays open while its object is loaded, so that no other
// model's kernels get that name meanwhile. An object that outlives dlclose (a loader may keep one)
// keeps its memfd for the process's life.
class DlopenedCode : public LoadedCode {
 public:
  DlopenedCode(void* handle, int fd, std::string path) : handle_(handle), fd_(fd), path_(std::move(path)) {}
  ~DlopenedCode() override {
    dlclose(handle_);
    if (void* still = dlopen(path_.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(still);
      return;
    }
    close(fd_);
  }
  void* symbol(const std::string& name) const override { return dlsym(handle_, name.c_str()); }

 private:
  void* handle_;
  int fd_;
  std::string path_;
};
#endif

// kime's own loader (elf_image.h): the only one a static executable has.
class BuiltinLoadedCode : public LoadedCode {
 public:
  explicit BuiltinLoadedCode(std::unique_ptr<ElfImage> image) : image_(std::move(image)) {}
  void* symbol(const std::string& name) const override { return image_->symbol(name); }

 private:
  std::unique_ptr<ElfImage> image_;
};

#ifndef KIME_STATIC_RUNTIME
std::variant<std::unique_ptr<LoadedCode>, std::string> loadWithDlopen(const uint8_t* bytes, uint64_t size) {
  int fd = memfd_create("kime-kernels", MFD_CLOEXEC);
  if (fd < 0) return std::string("memfd_create: ") + std::strerror(errno);
  for (uint64_t done = 0; done < size;) {
    ssize_t n = write(fd, bytes + done, size - done);
    if (n <= 0) {
      std::string why = std::string("writing the kernels to memory: ") + std::strerror(errno);
      close(fd);
      return why;
    }
    done += uint64_t(n);
  }
  std::string procPath = "/proc/self/fd/" + std::to_string(fd);
  void* handle = dlopen(procPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    close(fd);
    return std::string(dlerror());
  }
  return std::unique_ptr<LoadedCode>(new DlopenedCode(handle, fd, procPath));
}
#endif

std::variant<std::unique_ptr<LoadedCode>, std::string> loadBuiltin(const uint8_t* bytes, uint64_t size) {
  std::string why;
  std::unique_ptr<ElfImage> image = ElfImage::load(bytes, size, why);
  if (!image) return why;
  return std::unique_ptr<LoadedCode>(new BuiltinLoadedCode(std::move(image)));
}

}  // namespace

namespace {

std::string joined(const std::vector<std::string>& names, const char* sep) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : sep) + n;
  return s;
}

// The code section to load: `pick`'s, or the first of this CPU's targets (best first) that the
// artifact has; sets m.cpuTarget.
std::variant<const SectionInfo*, Error> chooseCpuCode(ModelImpl& m, const std::string& pick) {
  const std::vector<std::string> have = m.sectionsUnder(KIME_SECTION_CPU_CODE), host = hostCpuTargets();
  const std::vector<std::string> wanted = pick.empty() ? host : std::vector<std::string>{pick};
  if (!pick.empty() && std::find(host.begin(), host.end(), pick) == host.end())
    return Error::unsupported("CPU target " + pick + " was asked for, but this CPU runs " +
                              (host.empty() ? "no target kime knows" : joined(host, ", ")));
  for (const std::string& t : wanted)
    if (const SectionInfo* code = m.section(KIME_SECTION_CPU_CODE + t)) {
      m.cpuTarget = t;
      return code;
    }
  const std::string has = have.empty() ? "no target" : joined(have, ", ");
  if (!pick.empty())
    return Error::unsupported(m.path + ": the artifact has no " + pick + " code (it has CPU code for " + has + ")");
  return Error::unsupported(m.path + ": the artifact has CPU code for " + has + ", but this machine needs " +
                            (host.empty() ? "a target kime does not know" : joined(host, " or ")));
}

}  // namespace

std::optional<Error> loadCpuCode(ModelImpl& m, const std::string& target) {
#ifdef KIME_STATIC_RUNTIME
  m.loader = "kime";  // glibc's dlopen cannot serve a static executable
#else
  const char* pick = std::getenv("KIME_KERNEL_LOADER");
  m.loader = pick && *pick ? pick : "dlopen";
  if (m.loader != "dlopen" && m.loader != "kime")
    return Error::unsupported("KIME_KERNEL_LOADER is \"" + m.loader + "\"; it may be \"dlopen\" or \"kime\"");
#endif
  auto chosen = chooseCpuCode(m, target);
  if (auto* err = std::get_if<Error>(&chosen)) return *err;
  const SectionInfo* code = std::get<const SectionInfo*>(chosen);
#ifdef KIME_STATIC_RUNTIME
  auto loaded = loadBuiltin(m.map + code->offset, code->size);
#else
  auto loaded = m.loader == "kime" ? loadBuiltin(m.map + code->offset, code->size)
                                   : loadWithDlopen(m.map + code->offset, code->size);
#endif
  if (auto* why = std::get_if<std::string>(&loaded))
    return Error::unsupported(m.path + ": cannot load its " + m.cpuTarget + " code (" + m.loader + " loader): " + *why);
  m.code = std::move(std::get<std::unique_ptr<LoadedCode>>(loaded));
  for (const std::string& k : m.kernelNames) {
    void* f = m.code->symbol(k + KIME_KERNEL_ENTRY_SUFFIX);
    if (!f) return Error::unsupported(m.path + ": its " + m.cpuTarget + " code lacks kernel " + k);
    m.kernels.push_back(reinterpret_cast<kime_kernel_argv_fn>(f));
  }
  using SetHandler = void* (*)(void (*)(void*, const char*));
  auto setHandler = reinterpret_cast<SetHandler>(m.code->symbol("halide_set_error_handler"));
  using SetParFor = ParFor (*)(ParFor);
  auto setParFor = reinterpret_cast<SetParFor>(m.code->symbol("halide_set_custom_do_par_for"));
  if (!setHandler || !setParFor)
    return Error::unsupported(m.path + ": its " + m.cpuTarget + " code lacks the Halide runtime");
  setHandler(onKernelError);
  setParFor(&SpinPool::hook);  // the kernels' parallel loops run on kime's pool
  return std::nullopt;
}

}  // namespace kime
