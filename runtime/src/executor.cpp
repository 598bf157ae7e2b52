// Model and Executor: bucket choice, plan preparation, and the allocation-free run.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "backend.h"
#include "model_impl.h"
#include "shape_stats.h"

namespace kime {

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
size_t Model::maxSequenceLength() const { return impl_->maxSeqLen; }
const std::vector<OutputDesc>& Model::outputs() const { return impl_->outputs; }
int64_t Model::paddingId() const { return impl_->paddingId; }
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
  s += "outputs:";
  for (const OutputDesc& o : m.outputs)
    s += " " + o.name + " [" + (o.kind == OutputKind::PerMarker ? "M" : "S") + ", " + std::to_string(o.width) + "]";
  s += "\ncpu code loaded: " + m.cpuTarget + " (" + m.loader + " loader)\nstages:\n";
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

struct ExecutorImpl {
  std::shared_ptr<Model> model;
  const StageInfo* stage = nullptr;
  std::unique_ptr<Backend> backend;   // destroyed before `model`, whose state it reads
  std::unique_ptr<ShapeStats> stats;  // sized at creation; counting allocates nothing

  ModelImpl& m() { return model->impl(); }

  std::optional<Error> prepare(size_t index) {
    if (index >= stage->buckets.size())
      return Error::unsupported("stage " + stage->name + " has " + std::to_string(stage->buckets.size()) +
                                " buckets, not " + std::to_string(index + 1));
    return backend->prepare(index);
  }

  // Runs a checked batch in bucket `index` of the stage (which holds it), preparing it first.
  std::optional<Error> runIn(size_t index, const Batch& b, Outputs& out) {
    if (auto err = prepare(index)) return err;
    return backend->run(index, b, out);
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
  impl->stats = std::make_unique<ShapeStats>(model->buckets(stage));
  if (options.device == "cpu") {
    const size_t threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    impl->backend = cpuBackend(m, *impl->stage, threads);
  } else if (options.device == "cuda") {
    if (options.cudaMath != cudaMathName(kTf32) && options.cudaMath != cudaMathName(kF32))
      return Error::unsupported("unknown CUDA math \"" + options.cudaMath + "\" (it may be \"tf32\" or \"f32\")");
    auto backend = cudaBackend(m, *impl->stage, options.cudaMath == cudaMathName(kTf32) ? kTf32 : kF32);
    if (!backend) return backend.error();
    impl->backend = std::move(*backend);
  } else {
    return Error::unsupported("unknown device \"" + options.device + "\" (kime runs on \"cpu\" or \"cuda\")");
  }
  impl->model = std::move(model);
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

std::optional<Error> Executor::prepare(size_t index) { return impl_->prepare(index); }

std::vector<Bucket> Executor::warm() const {
  std::vector<Bucket> out;
  for (size_t i = 0; i < impl_->stage->buckets.size(); ++i)
    if (impl_->backend->prepared(i)) out.push_back(impl_->m().buckets[impl_->stage->buckets[i]].bucket);
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

void Executor::setProfiling(bool on) { impl_->backend->setProfiling(on); }

std::vector<std::pair<std::string, double>> Executor::profile(size_t index, bool perKernel) const {
  return impl_->backend->profile(index, perKernel);
}

const std::string& Executor::stage() const { return impl_->stage->name; }

std::string Executor::deviceDescription() const { return impl_->backend->description(); }

Caps Executor::caps() const { return impl_->backend->caps(); }

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

void BatchBuf::clear() { ids_.clear(), cu_.clear(), markers_.clear(), mcu_.clear(), qtype_.clear(), ttype_.clear(); }

void BatchBuf::push(const uint32_t* ids, size_t n, const uint32_t* markers, size_t m, uint8_t qtype,
                    const uint8_t* types) {
  if (cu_.empty()) cu_.push_back(0), mcu_.push_back(0);
  if (types && ttype_.size() < ids_.size())  // the first typed sequence: the earlier tokens get their qtype
    for (size_t s = 0; s + 1 < cu_.size(); ++s) ttype_.resize(cu_[s + 1], qtype_[s]);
  if (types)
    ttype_.insert(ttype_.end(), types, types + n);
  else if (!ttype_.empty())
    ttype_.resize(ttype_.size() + n, qtype);
  ids_.insert(ids_.end(), ids, ids + n);
  markers_.insert(markers_.end(), markers, markers + m);
  cu_.push_back(uint32_t(ids_.size()));
  mcu_.push_back(uint32_t(markers_.size()));
  qtype_.push_back(qtype);
}

void BatchBuf::pushEveryToken(const uint32_t* ids, size_t n, uint8_t qtype, const uint8_t* types) {
  for (size_t t = every_.size(); t < n; ++t) every_.push_back(uint32_t(t));
  push(ids, n, every_.data(), n, qtype, types);
}

Batch BatchBuf::batch() const {
  static const uint32_t zero[1] = {0};
  if (cu_.empty()) return {ids_, {zero, 1}, markers_, {zero, 1}, qtype_, {}};
  return {ids_, cu_, markers_, mcu_, qtype_, ttype_};
}

}  // namespace kime
