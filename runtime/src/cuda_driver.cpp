#include "cuda_driver.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <type_traits>

#ifndef KIME_STATIC_RUNTIME
#include <dlfcn.h>
#endif

namespace kime::cu {

namespace {

// Names for the results a driver that cannot name them (CUDA's stub library) gives most often.
const char* knownName(Result r) {
  switch (r) {
    case 1:
      return "CUDA_ERROR_INVALID_VALUE";
    case 2:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY (this is CUDA's stub libcuda, not a driver)";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    case 218:
      return "CUDA_ERROR_INVALID_PTX";
    case 222:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    default:
      return nullptr;
  }
}

}  // namespace

std::string Driver::failure(const char* call, Result r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  std::string s = std::string(call) + " failed: ";
  if (getErrorName && getErrorName(r, &name) == 0 && name)
    s += name;
  else if (const char* known = knownName(r))
    s += known;
  else
    s += "CUDA error " + std::to_string(r);
  if (getErrorString && getErrorString(r, &text) == 0 && text) s += std::string(" (") + text + ")";
  return s;
}

namespace {

struct Loaded {
  Driver driver{};
  std::string error;  // empty: loaded and initialized
};

#ifdef KIME_STATIC_RUNTIME
Loaded load(const char*) { return {{}, "no CUDA driver: a statically linked kime runtime cannot load libcuda.so.1"}; }
#else
Loaded load(const char* path) {
  Loaded l;
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.error = std::string("no CUDA driver: ") + dlerror();
    return l;
  }
  // Each entry point by the name the driver exports for the ABI declared in cuda_driver.h.
  bool ok = true;
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)> >(dlsym(lib, name));
    if (!fn && ok) {
      l.error = std::string("the CUDA driver ") + path + " lacks " + name;
      ok = false;
    }
  };
  Driver& d = l.driver;
  bind(d.getErrorName, "cuGetErrorName");
  bind(d.getErrorString, "cuGetErrorString");
  bind(d.init, "cuInit");
  bind(d.driverGetVersion, "cuDriverGetVersion");
  bind(d.deviceGetCount, "cuDeviceGetCount");
  bind(d.deviceGet, "cuDeviceGet");
  bind(d.deviceGetName, "cuDeviceGetName");
  bind(d.deviceGetAttribute, "cuDeviceGetAttribute");
  bind(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(d.ctxSetCurrent, "cuCtxSetCurrent");
  bind(d.moduleLoadData, "cuModuleLoadData");
  bind(d.moduleGetFunction, "cuModuleGetFunction");
  bind(d.moduleUnload, "cuModuleUnload");
  bind(d.memAlloc, "cuMemAlloc_v2");
  bind(d.memFree, "cuMemFree_v2");
  bind(d.memHostAlloc, "cuMemHostAlloc");
  bind(d.memFreeHost, "cuMemFreeHost");
  bind(d.memcpyHtoD, "cuMemcpyHtoD_v2");
  bind(d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(d.memsetD8, "cuMemsetD8_v2");
  bind(d.streamCreate, "cuStreamCreate");
  bind(d.streamDestroy, "cuStreamDestroy_v2");
  bind(d.streamSynchronize, "cuStreamSynchronize");
  bind(d.streamBeginCapture, "cuStreamBeginCapture_v2");
  bind(d.streamEndCapture, "cuStreamEndCapture");
  bind(d.graphInstantiate, "cuGraphInstantiateWithFlags");
  bind(d.graphLaunch, "cuGraphLaunch");
  bind(d.graphExecDestroy, "cuGraphExecDestroy");
  bind(d.graphDestroy, "cuGraphDestroy");
  bind(d.launchKernel, "cuLaunchKernel");
  if (ok)
    if (Result r = d.init(0)) l.error = "the CUDA driver does not start: " + d.failure("cuInit", r);
  // A working driver stays loaded for the life of the process, as the driver expects.
  if (!l.error.empty()) dlclose(lib);
  return l;
}
#endif

}  // namespace

const Driver* driver(std::string& error) {
  // Kept once it works, per library path; a failure is tried again on the next call (a driver
  // may be installed, or KIME_LIBCUDA changed, in between).
  static std::mutex lock;
  static std::map<std::string, Driver> loaded;
  const char* env = std::getenv("KIME_LIBCUDA");
  const std::string path = env && *env ? env : "libcuda.so.1";
  std::lock_guard<std::mutex> hold(lock);
  auto it = loaded.find(path);
  if (it == loaded.end()) {
    Loaded l = load(path.c_str());
    if (!l.error.empty()) {
      error = l.error;
      return nullptr;
    }
    it = loaded.emplace(path, l.driver).first;
  }
  error.clear();
  return &it->second;
}

}  // namespace kime::cu
