// Model and Executor: bucket choice, plan preparation, and the allocation-free run.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "cuda_backend.h"
#include "model_impl.h"
#include "shape_stats.h"
#include "spin_pool.h"

namespace kime {

const char* takeKernelError();

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

Model::Model(std::unique_ptr<ModelImpl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

namespace {

// ModelOptions::trustedKeys parsed into `m`, or the first that is no key.
std::optional<Error> trustKeys(const ModelOptions& options, ModelImpl& m) {
  for (size_t i = 0; i < options.trustedKeys.size(); ++i) {
    PublicKey k;
    if (auto why = parsePublicKey(options.trustedKeys[i], k))
      return Error::unsupported("trusted key " + std::to_string(i + 1) + ": " + *why);
    m.trusted.push_back(k);
  }
  return std::nullopt;
}

}  // namespace

Expected<std::shared_ptr<Model>> Model::open(const std::string& path, const ModelOptions& options) {
  auto impl = std::make_unique<ModelImpl>();
  if (auto err = trustKeys(options, *impl)) return *err;
  if (auto err = loadArtifact(path, *impl)) return *err;
  if (auto err = loadCpuCode(*impl, options.cpuTarget)) return *err;
  return std::shared_ptr<Model>(new Model(std::move(impl)));
}

Expected<std::shared_ptr<Model>> Model::openMemory(const void* data, size_t size, const ModelOptions& options) {
  auto impl = std::make_unique<ModelImpl>();
  const std::string name = options.sourceName.empty() ? "artifact in memory" : options.sourceName;
  if (auto err = trustKeys(options, *impl)) return *err;
  if (auto err = loadArtifactMemory(data, size, name, *impl)) return *err;
  if (auto err = loadCpuCode(*impl, options.cpuTarget)) return *err;
  return std::shared_ptr<Model>(new Model(std::move(impl)));
}

const std::string& Model::name() const { return impl_->name; }
size_t Model::vocab() const { return impl_->vocab; }
size_t Model::types() const { return impl_->types; }
const std::string& Model::cpuTarget() const { return impl_->cpuTarget; }

std::vector<std::string> Model::stages() const {
  std::vector<std::string> out;
  for (const StageInfo& s : impl_->stages) out.push_back(s.name);
  return out;
}

std::string Model::defaultStage() const {
  for (const StageInfo& s : impl_->stages)
    if (s.name == "serve") return s.name;
  return impl_->stages.empty() ? "" : impl_->stages.front().name;
}

std::vector<Bucket> Model::buckets(const std::string& stage) const {
  std::vector<Bucket> out;
  for (const StageInfo& s : impl_->stages)
    if (s.name == stage)
      for (size_t b : s.buckets) out.push_back(impl_->buckets[b].bucket);
  return out;
}

namespace {

// The arithmetic of a step, from its first weight's type (a linear's or head's weights, an embed's
// or gather's table): its weights' bytes too.
std::string weightArithmetic(const ModelImpl& m, const StepInfo& step) {
  const char* arithmetic = nullptr;
  uint64_t bytes = 0;
  for (const ArgInfo& a : step.args) {
    if (a.source != ArgInfo::Source::Weight) continue;
    const WeightInfo& w = m.weights[size_t(a.weight)];
    bytes += w.bytes();
    if (arithmetic) continue;
    const bool int8 = w.type.code == 0 && w.type.bits == 8, bf16 = w.type.code == 4 && w.type.bits == 16;
    arithmetic = int8 ? "int8" : bf16 ? "bf16" : "f32";
  }
  return std::string(arithmetic ? arithmetic : "f32") + ", " + std::to_string(bytes) + " bytes of the weights section";
}

// Each step of the plans of one of `classes` (that reads weights, with `readingWeights`), once, in
// the order of first use, with its arithmetic, under `title`.
std::string describeWeightSteps(const ModelImpl& m, std::initializer_list<kime_kernel_class> classes,
                                bool readingWeights, const char* title) {
  std::vector<std::string> seen;
  std::string s;
  for (const BucketInfo& b : m.buckets)
    for (const StepInfo& step : b.steps) {
      const kime_kernel_class c = m.kernelClasses[step.kernel];
      const bool readsWeights = std::any_of(step.args.begin(), step.args.end(),
                                            [](const ArgInfo& a) { return a.source == ArgInfo::Source::Weight; });
      if (std::find(classes.begin(), classes.end(), c) == classes.end() || (readingWeights && !readsWeights) ||
          std::find(seen.begin(), seen.end(), step.node) != seen.end())
        continue;
      seen.push_back(step.node);
      s += "  " + step.node + ": " + weightArithmetic(m, step) + "\n";
    }
  return std::string(title) + " (" + std::to_string(seen.size()) + "):\n" + s;
}

}  // namespace

std::string Model::inspect() const {
  const ModelImpl& m = *impl_;
  std::string s = "model " + m.name + " (vocab " + std::to_string(m.vocab) + ", types " + std::to_string(m.types) +
                  ")\nfile " + m.path + " (" + std::to_string(m.mapSize) + " bytes)\nsections:\n";
  for (const SectionInfo& sec : m.sections)
    s += "  " + sec.name + std::string(sec.name.size() < 24 ? 24 - sec.name.size() : 1, ' ') +
         std::to_string(sec.size) + " bytes at " + std::to_string(sec.offset) + "\n";
  s += describeSource(m);
  const std::optional<PublicKey> signer = signerOf(m.map, m.sections);
  s += signer ? "signed by key " + keyId(*signer) +
                    (m.trusted.empty() ? " (not checked: no trusted keys given)\n" : " (checked: trusted)\n")
       : m.section(KIME_SECTION_SIGNATURE) ? std::string("signature: malformed (no key can be read from it)\n")
                                           : std::string("signature: none\n");
  s += "cpu code loaded: " + m.cpuTarget + " (" + m.loader + " loader)\nstages:\n";
  for (const StageInfo& st : m.stages) {
    s += "  " + st.name + ":\n";
    for (size_t b : st.buckets) {
      const BucketInfo& bi = m.buckets[b];
      s += "    bucket " + describe(bi.bucket) + ": arena " + std::to_string(bi.arena) + " bytes, " +
           std::to_string(bi.steps.size()) + " kernel calls\n";
    }
  }
  const size_t generic = size_t(std::count_if(m.kernelClasses.begin(), m.kernelClasses.end(), kime_class_is_generic));
  s += "kernels (" + std::to_string(m.kernelNames.size()) + ", " + std::to_string(generic) + " of them generic):";
  for (const std::string& k : m.kernelNames) s += " " + k;
  s += "\n" + describeWeightSteps(m, {KIME_CLASS_EMBED, KIME_CLASS_GATHER}, true, "tables");
  s += describeWeightSteps(m, {KIME_CLASS_LINEAR, KIME_CLASS_HEAD}, false, "linears");
  s += "weights: " + std::to_string(m.weights.size()) + " tensors, " + std::to_string(m.weightBytes) +
       " bytes, used in place\n";
  return s;
}

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

size_t stagedRows(size_t i, const Bucket& b) {
  switch (InputId(i + size_t(KIME_INPUT_TOKSEQ))) {
    case KIME_INPUT_TOKSEQ:
    case KIME_INPUT_TOKPOS:
      return b.tokens;
    case KIME_INPUT_MARKER_ROWS:
    case KIME_INPUT_OUT_MARKER_ROWS:
      return b.markers;
    case KIME_INPUT_FIRST_ROWS:
    case KIME_INPUT_OUT_FIRST_ROWS:
      return b.seqs;
    default:
      return b.seqs + b.markers;  // the output rows
  }
}

void stageIndices(const Batch& b, int32_t* const* arrays) {
  auto a = [&](InputId id) { return arrays[stagedIndex(id)]; };
  int32_t *tokseq = a(KIME_INPUT_TOKSEQ), *tokpos = a(KIME_INPUT_TOKPOS), *markerRows = a(KIME_INPUT_MARKER_ROWS),
          *firstRows = a(KIME_INPUT_FIRST_ROWS), *outRows = a(KIME_INPUT_OUT_ROWS), *outSeq = a(KIME_INPUT_OUT_SEQ),
          *outPos = a(KIME_INPUT_OUT_POS), *outFirst = a(KIME_INPUT_OUT_FIRST_ROWS),
          *outMarkers = a(KIME_INPUT_OUT_MARKER_ROWS);
  const size_t S = b.seqs();
  for (size_t i = 0; i < S; ++i) {
    for (uint32_t t = b.cu[i]; t < b.cu[i + 1]; ++t) {
      tokseq[t] = int32_t(i);
      tokpos[t] = int32_t(t - b.cu[i]);
    }
    const bool empty = b.cu[i + 1] == b.cu[i];
    firstRows[i] = outRows[i] = empty ? -1 : int32_t(b.cu[i]);
    outSeq[i] = int32_t(i);
    outPos[i] = 0;
    outFirst[i] = empty ? -1 : int32_t(i);
    for (uint32_t j = b.mcu[i]; j < b.mcu[i + 1]; ++j) {
      markerRows[j] = outRows[S + j] = int32_t(b.cu[i] + b.markers[j]);
      outSeq[S + j] = int32_t(i);
      outPos[S + j] = int32_t(b.markers[j]);
      outMarkers[j] = int32_t(S + j);
    }
  }
}

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

}  // namespace

struct ExecutorImpl {
  std::shared_ptr<Model> model;
  const StageInfo* stage = nullptr;
  size_t threads = 1;
  bool profiling = false;
  std::vector<std::unique_ptr<Prepared>> plans;  // by bucket index within the stage
  std::shared_ptr<CudaModel> cuda;               // set when the executor runs on the GPU
  std::vector<CudaPlanPtr> cudaPlans;            // by bucket index; destroyed before `cuda`
  std::unique_ptr<ShapeStats> stats;             // sized at creation; counting allocates nothing

  ModelImpl& m() { return model->impl(); }

  std::optional<Error> prepare(size_t index) {
    if (index >= stage->buckets.size())
      return Error::unsupported("stage " + stage->name + " has " + std::to_string(stage->buckets.size()) +
                                " buckets, not " + std::to_string(index + 1));
    if (cuda)
      return cudaPlans[index] ? std::nullopt
                              : prepareCudaPlan(*cuda, m().buckets[stage->buckets[index]], cudaPlans[index]);
    if (plans[index]) return std::nullopt;
    auto p = std::make_unique<Prepared>();
    const BucketInfo& b = m().buckets[stage->buckets[index]];
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
          buf.host = const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(m().weightData)) +
                     m().weights[size_t(a.weight)].offset;
        p->argv[i] = &buf;
        p->argInfo[i] = &a;
        ++i;
      }
    }
    p->argStart.push_back(i);
    p->stepSeconds.assign(b.steps.size(), 0.0);
    plans[index] = std::move(p);
    return std::nullopt;
  }

  // Runs a checked batch in bucket `index` of the stage (which holds it), preparing it first.
  std::optional<Error> runIn(size_t index, const Batch& b, Outputs& out) {
    if (auto err = prepare(index)) return err;
    if (cuda) return runCudaPlan(*cuda, *cudaPlans[index], b, out);
    SpinPool::instance().use(threads);
    return runPlan(*plans[index], b, out);
  }

  // Replays a CPU plan: the staged indices, each argument's extents from the batch's counts,
  // then the kernels in order; the outputs copied out of the arena.
  std::optional<Error> runPlan(Prepared& p, const Batch& b, Outputs& out) {
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
      auto t0 = profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      int rc = m().kernels[steps[s].kernel](&p.argv[p.argStart[s]]);
      if (profiling) p.stepSeconds[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (rc != 0)
        return Error::device("kernel " + m().kernelNames[steps[s].kernel] + " (node \"" + steps[s].node +
                             "\") failed with " + std::to_string(rc) + ": " + takeKernelError());
    }
    const float* base = static_cast<const float*>(p.arena);
    // Copies, not memcpy: an empty output's data() may be null, which memcpy may not be given
    // even for 0 bytes (UBSan found it through the batch fuzzer).
    out.logits.resize(size_t(M));
    std::copy_n(base + p.info->logits.offset / 4, size_t(M), out.logits.data());
    out.act.resize(size_t(S));
    std::copy_n(base + p.info->act.offset / 4, size_t(S) * 2, reinterpret_cast<float*>(out.act.data()));
    return std::nullopt;
  }
};

Executor::Executor(std::unique_ptr<ExecutorImpl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

Expected<std::unique_ptr<Executor>> Executor::create(std::shared_ptr<Model> model, const std::string& stage,
                                                     ExecutorOptions options) {
  auto impl = std::make_unique<ExecutorImpl>();
  ModelImpl& m = model->impl();
  for (const StageInfo& s : m.stages)
    if (s.name == stage) impl->stage = &s;
  if (!impl->stage) {
    std::string names;
    for (const StageInfo& s : m.stages) names += (names.empty() ? "" : ", ") + s.name;
    return Error::unsupported("the model has no stage \"" + stage + "\" (it has " + names + ")");
  }
  impl->threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  impl->plans.resize(impl->stage->buckets.size());
  impl->stats = std::make_unique<ShapeStats>(model->buckets(stage));
  if (options.device == "cpu") {
    SpinPool::instance().reserve(impl->threads);  // the CPU kernels' workers
  } else if (options.device == "cuda") {
    if (options.cudaMath != cudaMathName(kTf32) && options.cudaMath != cudaMathName(kF32))
      return Error::unsupported("unknown CUDA math \"" + options.cudaMath + "\" (it may be \"tf32\" or \"f32\")");
    auto cm = cudaModel(m, options.cudaMath == cudaMathName(kTf32) ? kTf32 : kF32);
    if (!cm) return cm.error();
    impl->cuda = *cm;
    impl->cudaPlans.resize(impl->stage->buckets.size());
  } else {
    return Error::unsupported("unknown device \"" + options.device + "\" (kime runs on \"cpu\" or \"cuda\")");
  }
  impl->model = std::move(model);
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

std::optional<Error> Executor::prepare(size_t index) { return impl_->prepare(index); }

std::vector<Bucket> Executor::warm() const {
  std::vector<Bucket> out;
  for (size_t i = 0; i < impl_->plans.size(); ++i)
    if (impl_->plans[i] || (impl_->cuda && impl_->cudaPlans[i]))
      out.push_back(impl_->m().buckets[impl_->stage->buckets[i]].bucket);
  return out;
}

std::optional<Error> Executor::run(const Batch& batch, Outputs& out, Bucket* used) {
  ModelImpl& m = impl_->m();
  if (auto err = checkModelBatch(m, batch)) {
    impl_->stats->refusedBatch();
    return err;
  }
  const size_t t = batch.tokens(), s = batch.seqs(), k = batch.markerCount();
  const std::vector<size_t>& list = impl_->stage->buckets;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!m.buckets[list[i]].bucket.holds(t, s, k)) continue;
    if (used) *used = m.buckets[list[i]].bucket;
    auto err = impl_->runIn(i, batch, out);
    if (!err) impl_->stats->ran(i, t, s, k);
    return err;
  }
  impl_->stats->missed(t, s, k);
  // Buckets of a stage are not ordered by size in every dimension; report the largest of each.
  Bucket largest;
  for (size_t b : list) {
    const Bucket& x = m.buckets[b].bucket;
    largest = {std::max(largest.tokens, x.tokens), std::max(largest.seqs, x.seqs),
               std::max(largest.markers, x.markers)};
  }
  return Error::noBucket(impl_->stage->name, t, s, k, largest);
}

kime_stats Executor::stats() const { return impl_->stats->totals(); }

std::optional<kime_bucket_stats> Executor::bucketStats(size_t index) const {
  if (index >= impl_->stats->bucketCount()) return std::nullopt;
  return impl_->stats->bucket(index);
}

std::optional<Error> Executor::runInBucket(size_t index, const Batch& batch, Outputs& out) {
  ModelImpl& m = impl_->m();
  if (auto err = checkModelBatch(m, batch)) return err;
  if (index >= impl_->stage->buckets.size()) return impl_->prepare(index);  // its error names the stage
  const Bucket& b = m.buckets[impl_->stage->buckets[index]].bucket;
  const size_t t = batch.tokens(), s = batch.seqs(), k = batch.markerCount();
  if (!b.holds(t, s, k)) return Error::noBucket(impl_->stage->name, t, s, k, b);
  return impl_->runIn(index, batch, out);
}

void Executor::setProfiling(bool on) {
  impl_->profiling = on;
  for (auto& p : impl_->plans)
    if (p) std::fill(p->stepSeconds.begin(), p->stepSeconds.end(), 0.0);
}

std::vector<std::pair<std::string, double>> Executor::profile(size_t index, bool perKernel) const {
  std::map<std::string, double> byKind;
  const auto& p = impl_->plans.at(index);
  if (!p) return {};
  ModelImpl& m = impl_->m();
  for (size_t s = 0; s < p->info->steps.size(); ++s) {
    const size_t k = p->info->steps[s].kernel;
    byKind[perKernel ? m.kernelNames[k] : kime_kernel_class_names[m.kernelClasses[k]]] += p->stepSeconds[s];
  }
  return {byKind.begin(), byKind.end()};
}

const std::string& Executor::stage() const { return impl_->stage->name; }

std::string Executor::deviceDescription() const {
  if (impl_->cuda)
    return "cuda " + impl_->cuda->deviceName + " (" + impl_->cuda->arch + " PTX, " +
           (impl_->cuda->math == kTf32 ? "tf32 tensor cores" : "f32") + ")";
  return "cpu " + impl_->m().cpuTarget + ", " + std::to_string(impl_->threads) + " threads";
}

Caps Executor::caps() const {
  if (impl_->cuda) return {"cuda", 1, true, false};
  return {"cpu", impl_->threads, false, true};
}

double Executor::flops(const Batch& batch, const std::string& kernels) const {
  ModelImpl& m = impl_->m();
  const size_t t = batch.tokens(), seqs = batch.seqs(), k = batch.markerCount();
  // Query-key pairs: each token's sequence length, summed (squared lengths); for kime-prune-rows'
  // output rows, each first token's and each marker's.
  double pairs = 0, outputPairs = 0;
  for (size_t s = 0; s < seqs; ++s) {
    const double len = double(batch.cu[s + 1] - batch.cu[s]);
    pairs += len * len;
    outputPairs += len * double(1 + batch.mcu[s + 1] - batch.mcu[s]);
  }
  for (size_t b : impl_->stage->buckets) {
    const BucketInfo& bi = m.buckets[b];
    if (!bi.bucket.holds(t, seqs, k)) continue;
    double f = 0;
    for (const StepInfo& s : bi.steps) {
      if (!kernels.empty() && kernels != kime_kernel_class_names[m.kernelClasses[s.kernel]] &&
          kernels != m.kernelNames[s.kernel])
        continue;
      double rows = double(rowsOf(s.flopRows, int64_t(t), int64_t(seqs), int64_t(k), 0));
      if (m.kernelClasses[s.kernel] == KIME_CLASS_ATTENTION) rows = s.flopRows == KIME_ROWS_R ? outputPairs : pairs;
      f += s.flops * rows;
    }
    return f;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// BatchBuf
//===----------------------------------------------------------------------===//

void BatchBuf::clear() { ids_.clear(), cu_.clear(), markers_.clear(), mcu_.clear(), qtype_.clear(); }

void BatchBuf::push(const uint32_t* ids, size_t n, const uint32_t* markers, size_t m, uint8_t qtype) {
  if (cu_.empty()) cu_.push_back(0), mcu_.push_back(0);
  ids_.insert(ids_.end(), ids, ids + n);
  markers_.insert(markers_.end(), markers, markers + m);
  cu_.push_back(uint32_t(ids_.size()));
  mcu_.push_back(uint32_t(markers_.size()));
  qtype_.push_back(qtype);
}

Batch BatchBuf::batch() const {
  static const uint32_t zero[1] = {0};
  if (cu_.empty()) return {ids_, {zero, 1}, markers_, {zero, 1}, qtype_};
  return {ids_, cu_, markers_, mcu_, qtype_};
}

}  // namespace kime
