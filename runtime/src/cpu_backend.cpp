// The CPU backend: per bucket one arena, the staged index arrays and every kernel argument's
// buffer descriptor, made once; a run points the inputs at the batch, sets each argument's rows
// and calls the artifact's Halide kernels in plan order on the spin pool.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "backend.h"
#include "spin_pool.h"

namespace kime {

const char* takeKernelError();

namespace {

// One bucket's plan, ready to run: the arena, the staging arrays and every kernel argument's
// buffer descriptor, all allocated here once.
struct Prepared {
  const BucketInfo* info = nullptr;
  void* arena = nullptr;
  std::vector<int32_t> staged[kStagedInputs];  // by stagedIndex
  int32_t* stagedAt[kStagedInputs] = {};
  std::vector<kime_kernel_buffer> buffers;
  std::vector<kime_kernel_dimension> dims;  // two per buffer
  std::vector<void*> argv;                  // per step, its buffers; steps back to back
  std::vector<size_t> argStart;
  std::vector<const ArgInfo*> argInfo;  // parallel to buffers
  std::vector<double> stepSeconds;      // per step, summed over runs while profiling

  ~Prepared() { std::free(arena); }
};

// A valid address for empty inputs: kernels never read it, but Halide wants a host pointer.
alignas(64) const uint32_t kEmpty[16] = {};

class CpuBackend final : public Backend {
 public:
  CpuBackend(ModelImpl& m, const StageInfo& stage, size_t threads)
      : m_(m), stage_(stage), threads_(threads), plans_(stage.buckets.size()) {
    SpinPool::instance().reserve(threads_);  // the kernels' workers
  }

  std::optional<Error> prepare(size_t index) override {
    if (plans_[index]) return std::nullopt;
    auto p = std::make_unique<Prepared>();
    const BucketInfo& b = m_.buckets[stage_.buckets[index]];
    p->info = &b;
    p->arena = std::aligned_alloc(64, size_t((std::max<int64_t>(b.arena, 64) + 63) / 64 * 64));
    if (!p->arena) return Error::device("cannot allocate an arena of " + std::to_string(b.arena) + " bytes");
    std::memset(p->arena, 0, size_t(b.arena));
    for (size_t s = 0; s < kStagedInputs; ++s) {
      p->staged[s].resize(std::max<size_t>(stagedRows(s, b.bucket), 1));
      p->stagedAt[s] = p->staged[s].data();
    }
    size_t count = 0;
    for (const StepInfo& s : b.steps) count += s.args.size();
    p->buffers.resize(count);
    p->dims.resize(2 * count);
    p->argv.resize(count);
    p->argInfo.resize(count);
    size_t i = 0;
    for (const StepInfo& s : b.steps) {
      p->argStart.push_back(i);
      for (const ArgInfo& a : s.args) {
        kime_kernel_buffer& buf = p->buffers[i];
        std::memset(&buf, 0, sizeof buf);
        buf.type = a.type;
        buf.dim = &p->dims[2 * i];
        buf.dimensions = a.cols ? 2 : 1;
        if (a.cols) {
          buf.dim[0] = {0, int32_t(a.cols), 1, 0};
          buf.dim[1] = {0, int32_t(a.rowCount), int32_t(a.cols), 0};
        } else {
          buf.dim[0] = {0, int32_t(a.rowCount), 1, 0};
        }
        if (a.source == ArgInfo::Source::Arena)
          buf.host = static_cast<uint8_t*>(p->arena) + a.offset;
        else if (a.source == ArgInfo::Source::Weight)
          buf.host = const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(m_.weightData)) +
                     m_.weights[size_t(a.weight)].offset;
        p->argv[i] = &buf;
        p->argInfo[i] = &a;
        ++i;
      }
    }
    p->argStart.push_back(i);
    p->stepSeconds.assign(b.steps.size(), 0.0);
    plans_[index] = std::move(p);
    return std::nullopt;
  }

  bool prepared(size_t index) const override { return plans_[index] != nullptr; }

  std::optional<Error> run(size_t index, const Batch& b, Outputs& out) override {
    SpinPool::instance().use(threads_);
    return runPlan(*plans_[index], b, out);
  }

  std::string description() const override {
    return "cpu " + m_.cpuTarget + ", " + std::to_string(threads_) + " threads";
  }

  Caps caps() const override { return {"cpu", threads_, false, true}; }

  void setProfiling(bool on) override {
    profiling_ = on;
    for (auto& p : plans_)
      if (p) std::fill(p->stepSeconds.begin(), p->stepSeconds.end(), 0.0);
  }

  std::vector<std::pair<std::string, double>> profile(size_t index, bool perKernel) const override {
    const auto& p = plans_.at(index);
    if (!p) return {};
    std::map<std::string, double> byKind;
    for (size_t s = 0; s < p->info->steps.size(); ++s) {
      const size_t k = p->info->steps[s].kernel;
      byKind[perKernel ? m_.kernelNames[k] : kime_kernel_class_names[m_.kernelClasses[k]]] += p->stepSeconds[s];
    }
    return {byKind.begin(), byKind.end()};
  }

 private:
  // Replays a CPU plan: the staged indices, each argument's extents from the batch's counts,
  // then the kernels in order; the outputs copied out of the arena.
  std::optional<Error> runPlan(Prepared& p, const Batch& b, Outputs& out) const {
    const int64_t T = int64_t(b.tokens()), S = int64_t(b.seqs()), M = int64_t(b.markerCount());
    stageIndices(b, p.stagedAt);
    auto count = [&](RowSym r, int64_t fixed) { return rowsOf(r, T, S, M, fixed); };
    auto hostOf = [&](const void* user) {
      return const_cast<uint8_t*>(static_cast<const uint8_t*>(user ? user : kEmpty));
    };
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const ArgInfo& a = *p.argInfo[i];
      kime_kernel_buffer& buf = p.buffers[i];
      // An input keeps at least one row (its memory always has one): a kernel whose output has
      // rows may still read, under a mask, a row of an input that has none (the first row of an
      // empty sequence). Outputs are set to their exact rows below.
      buf.dim[buf.dimensions - 1].extent = int32_t(std::max<int64_t>(count(a.rows, a.rowCount), 1));
      if (a.source != ArgInfo::Source::Input) continue;
      switch (a.input) {
        case KIME_INPUT_IDS:
          buf.host = hostOf(b.ids.data);
          break;
        case KIME_INPUT_QTYPE:
          buf.host = hostOf(b.qtype.data);
          break;
        case KIME_INPUT_CU:
          buf.host = hostOf(b.cu.data);
          break;
        case KIME_INPUT_MARKERS:
          buf.host = hostOf(b.markers.data);
          break;
        case KIME_INPUT_MCU:
          buf.host = hostOf(b.mcu.data);
          break;
        default:
          buf.host = reinterpret_cast<uint8_t*>(p.stagedAt[stagedIndex(a.input)]);
          break;
      }
    }
    const std::vector<StepInfo>& steps = p.info->steps;
    for (size_t s = 0; s < steps.size(); ++s) {
      // A step's output is its last argument: exactly the batch's rows, and nothing to compute
      // when there are none.
      const size_t last = p.argStart[s + 1] - 1;
      kime_kernel_buffer& outBuf = p.buffers[last];
      const int64_t rows = count(p.argInfo[last]->rows, p.argInfo[last]->rowCount);
      outBuf.dim[outBuf.dimensions - 1].extent = int32_t(rows);
      if (rows == 0) continue;
      auto t0 = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      int rc = m_.kernels[steps[s].kernel](&p.argv[p.argStart[s]]);
      if (profiling_) p.stepSeconds[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (rc != 0)
        return Error::device("kernel " + m_.kernelNames[steps[s].kernel] + " (node \"" + steps[s].node +
                             "\") failed with " + std::to_string(rc) + ": " + takeKernelError());
    }
    copyOutputs(p, b, out);
    return std::nullopt;
  }

  // Each output's rows out of the arena. Copies, not memcpy: an empty output's data() may be
  // null, which memcpy may not be given even for 0 bytes (UBSan found it through the batch fuzzer).
  void copyOutputs(const Prepared& p, const Batch& b, Outputs& out) const {
    const float* arena = static_cast<const float*>(p.arena);
    out.values.resize(m_.outputs.size());
    for (size_t i = 0; i < m_.outputs.size(); ++i) {
      const OutputDesc& o = m_.outputs[i];
      const size_t n = o.rows(b.seqs(), b.markerCount()) * o.width;
      out.values[i].resize(n);
      std::copy_n(arena + p.info->outputs[i].offset / 4, n, out.values[i].data());
    }
  }

  ModelImpl& m_;
  const StageInfo& stage_;
  size_t threads_;
  bool profiling_ = false;
  std::vector<std::unique_ptr<Prepared>> plans_;  // by bucket index within the stage
};

}  // namespace

std::unique_ptr<Backend> cpuBackend(ModelImpl& m, const StageInfo& stage, size_t threads) {
  return std::make_unique<CpuBackend>(m, stage, threads);
}

}  // namespace kime
