#include "cuda_backend.h"

#include "backend.h"

#include <algorithm>
#include <cstring>

namespace kime {

namespace {

// Where each staged array lies in the staging buffer (the same layout on host and device).
struct StagingLayout {
  size_t counts = 0, ids = 0, qtype = 0, cu = 0, markers = 0, mcu = 0;
  size_t staged[kStagedInputs] = {};  // by stagedIndex
  size_t bytes = 0;
};

StagingLayout stagingFor(const Bucket& b) {
  StagingLayout l;
  size_t at = 0;
  auto take = [&](size_t n) {  // n bytes, 64-byte aligned, never empty
    size_t o = at;
    at += (std::max<size_t>(n, 1) + 63) / 64 * 64;
    return o;
  };
  l.counts = take(KIME_COUNT_SLOTS * sizeof(int32_t));
  l.ids = take(b.tokens * 4);
  l.qtype = take(b.seqs);
  l.cu = take((b.seqs + 1) * 4);
  l.markers = take(b.markers * 4);
  l.mcu = take((b.seqs + 1) * 4);
  for (size_t s = 0; s < kStagedInputs; ++s) l.staged[s] = take(stagedRows(s, b) * 4);
  l.bytes = at;
  return l;
}

// "sm_90" -> 90; 0 when the name is not of that form.
int smNumber(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  int v = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9') return 0;
    v = v * 10 + (arch[i] - '0');
  }
  return v;
}

}  // namespace

struct CudaPlan {
  const cu::Driver* d = nullptr;
  const BucketInfo* info = nullptr;
  StagingLayout layout;
  cu::DevicePtr arena = 0, staging = 0;
  uint8_t* hostStaging = nullptr;  // pinned
  float* hostOut = nullptr;        // pinned: logits (markers bound), then act (seqs bound x 2)
  cu::Stream stream = nullptr;
  cu::Graph graph = nullptr;
  cu::GraphExec exec = nullptr;
};

void CudaPlanDeleter::operator()(CudaPlan* p) const {
  if (p->exec) p->d->graphExecDestroy(p->exec);
  if (p->graph) p->d->graphDestroy(p->graph);
  if (p->stream) p->d->streamDestroy(p->stream);
  if (p->hostOut) p->d->memFreeHost(p->hostOut);
  if (p->hostStaging) p->d->memFreeHost(p->hostStaging);
  if (p->staging) p->d->memFree(p->staging);
  if (p->arena) p->d->memFree(p->arena);
  delete p;
}

CudaModel::~CudaModel() {
  if (!d) return;
  if (ctx) d->ctxSetCurrent(ctx);
  if (weights) d->memFree(weights);
  if (module) d->moduleUnload(module);
  if (ctx) d->primaryCtxRelease(device);
}

namespace {

// The newest PTX of this arithmetic a device of compute capability `sm` can run (the driver
// compiles PTX forward, never back); sections are named code.ptx.MATH.ARCH. Sets cm.arch.
Expected<const SectionInfo*> newestPtx(const ModelImpl& m, CudaMath math, int sm, CudaModel& cm) {
  const std::string mathDot = std::string(cudaMathName(math)) + ".";
  const SectionInfo* ptx = nullptr;
  int best = 0;
  std::string have;
  for (const std::string& name : m.sectionsUnder(KIME_SECTION_PTX_CODE)) {
    have += (have.empty() ? "" : ", ") + name;
    if (name.compare(0, mathDot.size(), mathDot) != 0) continue;
    std::string arch = name.substr(mathDot.size());
    int n = smNumber(arch);
    if (n && n <= sm && n > best) best = n, ptx = m.section(KIME_SECTION_PTX_CODE + name), cm.arch = arch;
  }
  if (ptx) return ptx;
  return Error::unsupported(m.path + ": " +
                            (have.empty()
                                 ? std::string("the artifact has no CUDA code (compiled with --cuda-arch none)")
                                 : "the artifact has PTX for " + have) +
                            ", but " + cm.deviceName + " (sm_" + std::to_string(sm) + ") needs " + mathDot + "sm_" +
                            std::to_string(sm) + " or older");
}

}  // namespace

Expected<std::shared_ptr<CudaModel>> cudaModel(ModelImpl& m, CudaMath math) {
  std::lock_guard<std::mutex> hold(m.cudaLock);
  if (m.cuda[math]) return m.cuda[math];
  std::string why;
  const cu::Driver* d = cu::driver(why);
  if (!d) return Error::device(why);
  auto cm = std::make_shared<CudaModel>();
  cm->d = d;
  cm->math = math;
  auto check = [&](const char* call, cu::Result r) -> std::optional<Error> {
    if (r == 0) return std::nullopt;
    return Error::device(d->failure(call, r));
  };
  int count = 0;
  if (auto e = check("cuDeviceGetCount", d->deviceGetCount(&count))) return *e;
  if (count == 0) return Error::device("the CUDA driver sees no device");
  if (auto e = check("cuDeviceGet", d->deviceGet(&cm->device, 0))) return *e;
  char name[256] = {};
  if (auto e = check("cuDeviceGetName", d->deviceGetName(name, sizeof name - 1, cm->device))) return *e;
  cm->deviceName = name;
  int major = 0, minor = 0;
  if (auto e =
          check("cuDeviceGetAttribute", d->deviceGetAttribute(&major, cu::kAttrComputeCapabilityMajor, cm->device)))
    return *e;
  if (auto e =
          check("cuDeviceGetAttribute", d->deviceGetAttribute(&minor, cu::kAttrComputeCapabilityMinor, cm->device)))
    return *e;
  const int sm = major * 10 + minor;

  auto ptx = newestPtx(m, math, sm, *cm);
  if (!ptx) return ptx.error();

  if (auto e = check("cuDevicePrimaryCtxRetain", d->primaryCtxRetain(&cm->ctx, cm->device))) return *e;
  if (auto e = check("cuCtxSetCurrent", d->ctxSetCurrent(cm->ctx))) return *e;
  // The driver wants the PTX text NUL-terminated; the section is not.
  std::string text(reinterpret_cast<const char*>(m.map + (*ptx)->offset), size_t((*ptx)->size));
  if (auto e = check("cuModuleLoadData", d->moduleLoadData(&cm->module, text.c_str()))) return *e;
  for (const std::string& k : m.kernelNames) {
    cu::Function f = nullptr;
    if (d->moduleGetFunction(&f, cm->module, k.c_str()) != 0)
      return Error::unsupported(m.path + ": its " + cm->arch + " PTX lacks kernel " + k);
    cm->functions.push_back(f);
  }
  for (const WeightInfo& w : m.weights) cm->weightOffsets.push_back(w.offset);
  if (auto e = check("cuMemAlloc (weights)", d->memAlloc(&cm->weights, std::max<size_t>(m.weightBytes, 1)))) return *e;
  if (auto e = check("cuMemcpyHtoD (weights)", d->memcpyHtoD(cm->weights, m.weightData, size_t(m.weightBytes))))
    return *e;
  m.cuda[math] = cm;
  return cm;
}

namespace {

// An output's values a row, and all of them at its bucket's bound.
size_t colsOf(const ArgInfo& o) { return size_t(std::max<int64_t>(o.cols, 1)); }
size_t boundFloats(const ArgInfo& o) { return size_t(o.rowCount) * colsOf(o); }

// Records a run of `p`'s bucket on its stream, which is capturing: copy in, the plan's kernels,
// copy out (launch parameters are copied at capture). The first failure's call goes to `failed`.
cu::Result captureRun(const CudaModel& cm, CudaPlan& p, const char*& failed) {
  // Every kernel argument's device address: arena offsets, weights, staged inputs.
  const StagingLayout& l = p.layout;
  const BucketInfo& b = *p.info;
  const cu::Driver* d = cm.d;
  auto inputAt = [&](InputId id) -> cu::DevicePtr {
    switch (id) {
      case KIME_INPUT_IDS:
        return p.staging + l.ids;
      case KIME_INPUT_QTYPE:
        return p.staging + l.qtype;
      case KIME_INPUT_CU:
        return p.staging + l.cu;
      case KIME_INPUT_MARKERS:
        return p.staging + l.markers;
      case KIME_INPUT_MCU:
        return p.staging + l.mcu;
      default:
        return p.staging + l.staged[stagedIndex(id)];
    }
  };
  std::vector<cu::DevicePtr> values;
  std::vector<void*> params;

  cu::Result r = d->memcpyHtoDAsync(p.staging, p.hostStaging, l.bytes, p.stream);
  failed = r ? "cuMemcpyHtoDAsync (capture)" : nullptr;
  for (const StepInfo& s : b.steps) {
    if (r) break;
    values.assign(1, p.staging + l.counts);
    for (const ArgInfo& a : s.args) {
      if (a.source == ArgInfo::Source::Arena)
        values.push_back(p.arena + uint64_t(a.offset));
      else if (a.source == ArgInfo::Source::Weight)
        values.push_back(cm.weights + cm.weightOffsets[size_t(a.weight)]);
      else
        values.push_back(inputAt(a.input));
    }
    params.clear();
    for (cu::DevicePtr& v : values) params.push_back(&v);
    const StepInfo::Launch& l = s.launch[cm.math];
    r = d->launchKernel(cm.functions[s.kernel], l.gridX, l.gridY, 1, l.block, 1, 1, 0, p.stream, params.data(),
                        nullptr);
    if (r) failed = "cuLaunchKernel (capture)";
  }
  if (!r) {
    size_t at = 0;  // each output at its bound, one after another
    for (const ArgInfo& o : b.outputs) {
      const size_t floats = boundFloats(o);
      if (floats && !r) r = d->memcpyDtoHAsync(p.hostOut + at, p.arena + uint64_t(o.offset), floats * 4, p.stream);
      at += floats;
    }
    if (r) failed = "cuMemcpyDtoHAsync (capture)";
  }
  return r;
}

}  // namespace

std::optional<Error> prepareCudaPlan(CudaModel& cm, const BucketInfo& b, CudaPlanPtr& out) {
  const cu::Driver* d = cm.d;
  CudaPlanPtr p(new CudaPlan);
  p->d = d;
  p->info = &b;
  p->layout = stagingFor(b.bucket);
  auto check = [&](const char* call, cu::Result r) -> std::optional<Error> {
    if (r == 0) return std::nullopt;
    return Error::device(d->failure(call, r) + " (preparing bucket " + describe(b.bucket) + ")");
  };
  const size_t arenaBytes = size_t(std::max<int64_t>(b.arena, 64));
  size_t outFloats = 0;
  for (const ArgInfo& o : b.outputs) outFloats += boundFloats(o);
  if (auto e = check("cuCtxSetCurrent", d->ctxSetCurrent(cm.ctx))) return e;
  if (auto e = check("cuMemAlloc (arena)", d->memAlloc(&p->arena, arenaBytes))) return e;
  if (auto e = check("cuMemsetD8 (arena)", d->memsetD8(p->arena, 0, arenaBytes))) return e;
  if (auto e = check("cuMemAlloc (staging)", d->memAlloc(&p->staging, p->layout.bytes))) return e;
  if (auto e = check("cuMemsetD8 (staging)", d->memsetD8(p->staging, 0, p->layout.bytes))) return e;
  void* host = nullptr;
  if (auto e = check("cuMemHostAlloc (staging)", d->memHostAlloc(&host, p->layout.bytes, 0))) return e;
  p->hostStaging = static_cast<uint8_t*>(host);
  std::memset(p->hostStaging, 0, p->layout.bytes);
  if (auto e = check("cuMemHostAlloc (outputs)", d->memHostAlloc(&host, std::max<size_t>(outFloats, 1) * 4, 0)))
    return e;
  p->hostOut = static_cast<float*>(host);
  if (auto e = check("cuStreamCreate", d->streamCreate(&p->stream, cu::kStreamNonBlocking))) return e;

  if (auto e = check("cuStreamBeginCapture", d->streamBeginCapture(p->stream, cu::kCaptureModeThreadLocal))) return e;
  const char* failed = nullptr;
  cu::Result r = captureRun(cm, *p, failed);
  cu::Result endR = d->streamEndCapture(p->stream, &p->graph);
  if (r) return check(failed, r);
  if (auto e = check("cuStreamEndCapture", endR)) return e;
  if (auto e = check("cuGraphInstantiate", d->graphInstantiate(&p->exec, p->graph, 0))) return e;
  out = std::move(p);
  return std::nullopt;
}

std::optional<Error> runCudaPlan(CudaModel& cm, CudaPlan& p, const Batch& b, Outputs& out) {
  const cu::Driver* d = cm.d;
  const StagingLayout& l = p.layout;
  const size_t T = b.tokens(), S = b.seqs(), M = b.markerCount();
  uint8_t* h = p.hostStaging;
  auto at = [&](size_t offset) { return reinterpret_cast<int32_t*>(h + offset); };
  at(l.counts)[KIME_COUNT_T] = int32_t(T), at(l.counts)[KIME_COUNT_S] = int32_t(S),
  at(l.counts)[KIME_COUNT_M] = int32_t(M);
  at(l.counts)[KIME_COUNT_R] = int32_t(S + M);  // kime-prune-rows' output rows
  if (T) std::memcpy(h + l.ids, b.ids.data, T * 4);
  if (S) std::memcpy(h + l.qtype, b.qtype.data, S);
  std::memcpy(h + l.cu, b.cu.data, (S + 1) * 4);
  if (M) std::memcpy(h + l.markers, b.markers.data, M * 4);
  std::memcpy(h + l.mcu, b.mcu.data, (S + 1) * 4);
  int32_t* staged[kStagedInputs];
  for (size_t s = 0; s < kStagedInputs; ++s) staged[s] = at(l.staged[s]);
  stageIndices(b, staged);
  if (cu::Result r = d->ctxSetCurrent(cm.ctx)) return Error::device(d->failure("cuCtxSetCurrent", r));
  if (cu::Result r = d->graphLaunch(p.exec, p.stream)) return Error::device(d->failure("cuGraphLaunch", r));
  if (cu::Result r = d->streamSynchronize(p.stream)) return Error::device(d->failure("cuStreamSynchronize", r));
  const std::vector<ArgInfo>& outs = p.info->outputs;
  out.values.resize(outs.size());
  size_t from = 0;  // each output at its bound, as captureRun copied them
  for (size_t i = 0; i < outs.size(); ++i) {
    const size_t n = size_t(rowsOf(outs[i].rows, int64_t(T), int64_t(S), int64_t(M), 0)) * colsOf(outs[i]);
    out.values[i].resize(n);
    std::copy_n(p.hostOut + from, n, out.values[i].data());
    from += boundFloats(outs[i]);
  }
  return std::nullopt;
}

namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::shared_ptr<CudaModel> cm, const ModelImpl& m, const StageInfo& stage)
      : cm_(std::move(cm)), m_(m), stage_(stage), plans_(stage.buckets.size()) {}

  std::optional<Error> prepare(size_t index) override {
    if (plans_[index]) return std::nullopt;
    return prepareCudaPlan(*cm_, m_.buckets[stage_.buckets[index]], plans_[index]);
  }
  bool prepared(size_t index) const override { return plans_[index] != nullptr; }
  std::optional<Error> run(size_t index, const Batch& b, Outputs& out) override {
    return runCudaPlan(*cm_, *plans_[index], b, out);
  }
  std::string description() const override {
    return "cuda " + cm_->deviceName + " (" + cm_->arch + " PTX, " +
           (cm_->math == kTf32 ? "tf32 tensor cores" : "f32") + ")";
  }
  Caps caps() const override { return {"cuda", 1, true, false}; }

 private:
  std::shared_ptr<CudaModel> cm_;
  const ModelImpl& m_;
  const StageInfo& stage_;
  std::vector<CudaPlanPtr> plans_;  // by bucket index; destroyed before `cm_`
};

}  // namespace

Expected<std::unique_ptr<Backend>> cudaBackend(ModelImpl& m, const StageInfo& stage, CudaMath math) {
  auto cm = cudaModel(m, math);
  if (!cm) return cm.error();
  return std::unique_ptr<Backend>(new CudaBackend(*cm, m, stage));
}

}  // namespace kime
