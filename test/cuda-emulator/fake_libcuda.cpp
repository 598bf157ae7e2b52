// A stand-in for libcuda.so.1 (loaded by the runtime through KIME_LIBCUDA) that lets the CUDA
// backend run without a GPU: "device" memory is host memory, streams capture into graphs that
// replay in order, and kernels run on the CPU from the same CUDA C++ the artifact's PTX came
// from, built as host code (cuda_emulation.h, emulator.cpp) into the library named by
// KIME_EMULATED_KERNELS.
//
// It checks what a real driver would reject or what would fault on a GPU: every device pointer
// a copy or a kernel argument uses must lie in a live allocation, captured host copies must use
// pinned memory, and every PTX entry must have its emulated kernel. A failure returns
// CUDA_ERROR_INVALID_VALUE (or the like) and says why on stderr.
#include <dlfcn.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

using Result = int;
constexpr Result kSuccess = 0, kInvalidValue = 1, kNotFound = 500, kInvalidPtx = 218, kLaunchFailed = 719;

struct Allocation {
  size_t bytes;
  bool pinned;
};
std::map<uintptr_t, Allocation> allocations;

// True when [p, p + n) lies inside one allocation (of the kind asked for).
bool inside(uintptr_t p, size_t n, bool pinned) {
  auto it = allocations.upper_bound(p);
  if (it == allocations.begin()) return false;
  --it;
  return it->second.pinned == pinned && p >= it->first && p + n <= it->first + it->second.bytes;
}

Result complain(Result r, const std::string& why) {
  std::fprintf(stderr, "fake libcuda: %s\n", why.c_str());
  return r;
}

struct Function {
  std::string name;
  int params = 0;
  void* host = nullptr;    // the emulated kernel
  void* launch = nullptr;  // the emulator's kime_emu_launch
};

struct Module {
  void* library = nullptr;
  std::map<std::string, Function> functions;
};

struct Op {
  enum Kind { CopyIn, CopyOut, Launch } kind = CopyIn;
  uintptr_t dst = 0, src = 0;
  size_t bytes = 0;
  Function* fn = nullptr;
  unsigned grid[3] = {}, block[3] = {};
  std::vector<void*> args;
};

Op copy(Op::Kind kind, uintptr_t dst, uintptr_t src, size_t bytes) {
  Op op;
  op.kind = kind, op.dst = dst, op.src = src, op.bytes = bytes;
  return op;
}

struct Stream {
  bool capturing = false;
  std::vector<Op> captured;
};

struct Graph {
  std::vector<Op> ops;
};

Result run(const Op& op) {
  switch (op.kind) {
    case Op::CopyIn:
    case Op::CopyOut:
      std::memcpy(reinterpret_cast<void*>(op.dst), reinterpret_cast<const void*>(op.src), op.bytes);
      return kSuccess;
    case Op::Launch: {
      using Launch = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void**, int);
      auto launch = reinterpret_cast<Launch>(op.fn->launch);
      // No allocation here: the runtime's warm runs are counted, the driver's replay with them.
      void* args[16];
      void* params[16];
      const size_t n = std::min<size_t>(op.args.size(), 16);
      for (size_t i = 0; i < n; ++i) args[i] = op.args[i], params[i] = &args[i];
      int rc = launch(op.fn->host, op.grid[0], op.grid[1], op.grid[2], op.block[0], op.block[1], op.block[2], params,
                      int(n));
      return rc ? complain(kLaunchFailed, "kernel " + op.fn->name + " failed under emulation") : kSuccess;
    }
  }
  return kInvalidValue;
}

Result submit(Stream* s, Op op) {
  if (s && s->capturing) {
    s->captured.push_back(std::move(op));
    return kSuccess;
  }
  return run(op);
}

}  // namespace

extern "C" {

Result cuGetErrorName(Result r, const char** s) {
  static const std::map<Result, const char*> names = {{kSuccess, "CUDA_SUCCESS"},
                                                      {kInvalidValue, "CUDA_ERROR_INVALID_VALUE"},
                                                      {kNotFound, "CUDA_ERROR_NOT_FOUND"},
                                                      {kInvalidPtx, "CUDA_ERROR_INVALID_PTX"},
                                                      {kLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED"}};
  auto it = names.find(r);
  if (it == names.end()) return kInvalidValue;
  *s = it->second;
  return kSuccess;
}
Result cuGetErrorString(Result r, const char** s) {
  *s = r == kSuccess ? "no error" : "reported by kime's fake libcuda (its message is above)";
  return kSuccess;
}
Result cuInit(unsigned) { return kSuccess; }
Result cuDriverGetVersion(int* v) { return *v = 13000, kSuccess; }
Result cuDeviceGetCount(int* n) { return *n = 1, kSuccess; }
Result cuDeviceGet(int* d, int i) { return i == 0 ? (*d = 0, kSuccess) : kInvalidValue; }
Result cuDeviceGetName(char* s, int n, int) {
  std::snprintf(s, size_t(n), "kime CUDA emulator");
  return kSuccess;
}
Result cuDeviceGetAttribute(int* v, int attr, int) {
  if (attr == 75) return *v = 9, kSuccess;  // compute capability 9.0
  if (attr == 76) return *v = 0, kSuccess;
  return kInvalidValue;
}
Result cuDevicePrimaryCtxRetain(void** ctx, int) {
  static int context;
  *ctx = &context;
  return kSuccess;
}
Result cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
Result cuCtxSetCurrent(void* ctx) { return ctx ? kSuccess : kInvalidValue; }

// Reads the entry points and their parameter counts from the PTX, and finds each one in the
// emulated kernels.
Result cuModuleLoadData(Module** out, const void* image) {
  const char* path = std::getenv("KIME_EMULATED_KERNELS");
  if (!path) return complain(kInvalidValue, "KIME_EMULATED_KERNELS is not set");
  auto* m = new Module;
  m->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!m->library) return complain(kInvalidValue, dlerror());
  void* launch = dlsym(m->library, "kime_emu_launch");
  if (!launch) return complain(kInvalidValue, std::string(path) + " lacks kime_emu_launch");
  std::string ptx(static_cast<const char*>(image));
  for (size_t at = ptx.find(".entry "); at != std::string::npos; at = ptx.find(".entry ", at + 1)) {
    size_t open = ptx.find('(', at), close = ptx.find(')', open);
    if (open == std::string::npos || close == std::string::npos) return complain(kInvalidPtx, "malformed .entry");
    Function f;
    f.name = ptx.substr(at + 7, open - at - 7);
    while (!f.name.empty() && f.name.back() == ' ') f.name.pop_back();
    for (size_t p = ptx.find(".param", open); p < close; p = ptx.find(".param", p + 1)) ++f.params;
    f.host = dlsym(m->library, f.name.c_str());
    if (!f.host) return complain(kInvalidPtx, "no emulated kernel for PTX entry " + f.name);
    f.launch = launch;
    m->functions[f.name] = f;
  }
  *out = m;
  return kSuccess;
}
Result cuModuleGetFunction(Function** f, Module* m, const char* name) {
  auto it = m->functions.find(name);
  if (it == m->functions.end()) return complain(kNotFound, std::string("no PTX entry ") + name);
  *f = &it->second;
  return kSuccess;
}
Result cuModuleUnload(Module* m) {
  dlclose(m->library);
  delete m;
  return kSuccess;
}

Result cuMemAlloc_v2(uintptr_t* p, size_t n) {
  if (n == 0) return complain(kInvalidValue, "cuMemAlloc of 0 bytes");
  *p = reinterpret_cast<uintptr_t>(std::aligned_alloc(256, (n + 255) / 256 * 256));
  allocations[*p] = {n, false};
  return kSuccess;
}
Result cuMemFree_v2(uintptr_t p) {
  if (!allocations.count(p) || allocations[p].pinned) return complain(kInvalidValue, "cuMemFree of an unknown pointer");
  allocations.erase(p);
  std::free(reinterpret_cast<void*>(p));
  return kSuccess;
}
Result cuMemHostAlloc(void** p, size_t n, unsigned) {
  *p = std::aligned_alloc(256, (std::max<size_t>(n, 1) + 255) / 256 * 256);
  allocations[reinterpret_cast<uintptr_t>(*p)] = {n, true};
  return kSuccess;
}
Result cuMemFreeHost(void* p) {
  auto it = allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == allocations.end() || !it->second.pinned)
    return complain(kInvalidValue, "cuMemFreeHost of an unknown pointer");
  allocations.erase(it);
  std::free(p);
  return kSuccess;
}
Result cuMemcpyHtoD_v2(uintptr_t dst, const void* src, size_t n) {
  if (!inside(dst, n, false)) return complain(kInvalidValue, "cuMemcpyHtoD outside a device allocation");
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return kSuccess;
}
Result cuMemsetD8_v2(uintptr_t dst, unsigned char v, size_t n) {
  if (!inside(dst, n, false)) return complain(kInvalidValue, "cuMemsetD8 outside a device allocation");
  std::memset(reinterpret_cast<void*>(dst), v, n);
  return kSuccess;
}
Result cuMemcpyHtoDAsync_v2(uintptr_t dst, const void* src, size_t n, Stream* s) {
  if (!inside(dst, n, false)) return complain(kInvalidValue, "cuMemcpyHtoDAsync outside a device allocation");
  if (s && s->capturing && !inside(reinterpret_cast<uintptr_t>(src), n, true))
    return complain(kInvalidValue, "a captured cuMemcpyHtoDAsync from memory that is not pinned");
  return submit(s, copy(Op::CopyIn, dst, reinterpret_cast<uintptr_t>(src), n));
}
Result cuMemcpyDtoHAsync_v2(void* dst, uintptr_t src, size_t n, Stream* s) {
  if (!inside(src, n, false)) return complain(kInvalidValue, "cuMemcpyDtoHAsync outside a device allocation");
  if (s && s->capturing && !inside(reinterpret_cast<uintptr_t>(dst), n, true))
    return complain(kInvalidValue, "a captured cuMemcpyDtoHAsync to memory that is not pinned");
  return submit(s, copy(Op::CopyOut, reinterpret_cast<uintptr_t>(dst), src, n));
}

Result cuStreamCreate(Stream** s, unsigned) { return *s = new Stream, kSuccess; }
Result cuStreamDestroy_v2(Stream* s) { return delete s, kSuccess; }
Result cuStreamSynchronize(Stream*) { return kSuccess; }
Result cuStreamBeginCapture_v2(Stream* s, int) {
  if (!s || s->capturing) return complain(kInvalidValue, "cuStreamBeginCapture on a capturing stream");
  s->capturing = true;
  s->captured.clear();
  return kSuccess;
}
Result cuStreamEndCapture(Stream* s, Graph** g) {
  if (!s || !s->capturing) return complain(kInvalidValue, "cuStreamEndCapture without a capture");
  s->capturing = false;
  *g = new Graph{std::move(s->captured)};
  return kSuccess;
}
Result cuGraphInstantiateWithFlags(Graph** exec, Graph* g, unsigned long long) {
  return *exec = new Graph(*g), kSuccess;
}
Result cuGraphLaunch(Graph* exec, Stream*) {
  for (const Op& op : exec->ops)
    if (Result r = run(op)) return r;
  return kSuccess;
}
Result cuGraphExecDestroy(Graph* g) { return delete g, kSuccess; }
Result cuGraphDestroy(Graph* g) { return delete g, kSuccess; }

Result cuLaunchKernel(Function* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, Stream* s, void** params, void** extra) {
  if (!f || extra || shared) return complain(kInvalidValue, "cuLaunchKernel: unexpected arguments");
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
    return complain(kInvalidValue, "cuLaunchKernel " + f->name + ": bad launch dimensions");
  Op op;
  op.kind = Op::Launch;
  op.fn = f;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  std::memcpy(op.grid, grid, sizeof grid);
  std::memcpy(op.block, block, sizeof block);
  if (f->params > 16) return complain(kInvalidValue, "cuLaunchKernel " + f->name + ": over 16 parameters");
  for (int i = 0; i < f->params; ++i) {
    void* v = *static_cast<void**>(params[i]);  // every kime kernel parameter is a device pointer
    if (!inside(reinterpret_cast<uintptr_t>(v), 1, false))
      return complain(kInvalidValue,
                      "cuLaunchKernel " + f->name + ": parameter " + std::to_string(i) + " is not a device pointer");
    op.args.push_back(v);
  }
  return submit(s, std::move(op));
}

}  // extern "C"
