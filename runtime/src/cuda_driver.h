// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"): the runtime has no
// link-time CUDA dependency and runs (CPU only) where there is no driver.
//
// Only the handful of entry points the CUDA backend uses are declared, with the driver's stable
// C ABI (opaque handles, int results), so building the runtime needs no CUDA headers either.
#ifndef KIME_RUNTIME_CUDA_DRIVER_H
#define KIME_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <string>

namespace kime::cu {

using Result = int;  // CUresult; 0 is CUDA_SUCCESS
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct CUctx_st*;
using Module = struct CUmod_st*;
using Function = struct CUfunc_st*;
using Stream = struct CUstream_st*;
using Graph = struct CUgraph_st*;
using GraphExec = struct CUgraphExec_st*;

constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kCaptureModeThreadLocal = 1;

struct Driver {
  Result (*init)(unsigned);
  Result (*driverGetVersion)(int*);
  Result (*deviceGetCount)(int*);
  Result (*deviceGet)(Device*, int);
  Result (*deviceGetName)(char*, int, Device);
  Result (*deviceGetAttribute)(int*, int, Device);
  Result (*primaryCtxRetain)(Context*, Device);
  Result (*primaryCtxRelease)(Device);
  Result (*ctxSetCurrent)(Context);
  Result (*moduleLoadData)(Module*, const void*);
  Result (*moduleGetFunction)(Function*, Module, const char*);
  Result (*moduleUnload)(Module);
  Result (*memAlloc)(DevicePtr*, size_t);
  Result (*memFree)(DevicePtr);
  Result (*memHostAlloc)(void**, size_t, unsigned);
  Result (*memFreeHost)(void*);
  Result (*memcpyHtoD)(DevicePtr, const void*, size_t);
  Result (*memcpyHtoDAsync)(DevicePtr, const void*, size_t, Stream);
  Result (*memcpyDtoHAsync)(void*, DevicePtr, size_t, Stream);
  Result (*memsetD8)(DevicePtr, unsigned char, size_t);
  Result (*streamCreate)(Stream*, unsigned);
  Result (*streamDestroy)(Stream);
  Result (*streamSynchronize)(Stream);
  Result (*streamBeginCapture)(Stream, int);
  Result (*streamEndCapture)(Stream, Graph*);
  Result (*graphInstantiate)(GraphExec*, Graph, unsigned long long);
  Result (*graphLaunch)(GraphExec, Stream);
  Result (*graphExecDestroy)(GraphExec);
  Result (*graphDestroy)(Graph);
  Result (*launchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void**,
                         void**);
  Result (*getErrorName)(Result, const char**);
  Result (*getErrorString)(Result, const char**);

  // "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string failure(const char* call, Result r) const;
};

// The driver, loaded and initialized once per process; null with `error` set when there is none
// ("no CUDA driver: ...") or it does not start (cuInit's error). KIME_LIBCUDA names another
// library to load instead of libcuda.so.1 (tests use CUDA's stub library).
const Driver* driver(std::string& error);

}  // namespace kime::cu

#endif  // KIME_RUNTIME_CUDA_DRIVER_H
