// CUDA C++ -> PTX with NVRTC, then ptxas for the same arch as proof that the PTX assembles.
#include <nvrtc.h>
#include <sys/stat.h>

#include <fstream>

#include "CudaKernels.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace kime::cuda {

bool canMakePtx() { return true; }

std::string compileToPtx(const std::string& source, const std::string& arch) {
  checkArch(arch);
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "kime_kernels.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw CompileError("NVRTC cannot create a program");
  const std::string archOpt = "--gpu-architecture=compute_" + arch.substr(3);
  const char* opts[] = {archOpt.c_str(), "--std=c++17", "-default-device", "--fmad=true"};
  nvrtcResult rc = nvrtcCompileProgram(prog, 4, opts);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) nvrtcGetProgramLog(prog, log.data());
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw CompileError("NVRTC failed for " + arch + ": " + nvrtcGetErrorString(rc) + "\n" + log);
  }
  size_t ptxSize = 0;
  nvrtcGetPTXSize(prog, &ptxSize);
  std::string ptx(ptxSize, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();

  TempDir dir;
  const std::string in = (dir.path() / "kernels.ptx").string(), out = (dir.path() / "kernels.cubin").string();
  json::writeFileAtomic(in, ptx);
  std::string ptxasLog;
  if (runProgram({KIME_PTXAS, "-arch=" + arch, "-o", out, in}, ptxasLog) != 0)
    throw CompileError("ptxas rejected the " + arch + " PTX: " + ptxasLog);
  return ptx;
}

std::string ptxToolchain() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  struct stat st{};
  stat(KIME_PTXAS, &st);
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + ", " + KIME_PTXAS + " " +
         std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace kime::cuda
