// kime runtime, C++ API: load a compiled artifact and run batches on it.
//
//   auto model = kime::Model::open("model.kime");          // mmap, checks, loads CPU code
//   if (!model) { puts(model.error().text().c_str()); }
//   auto exec = kime::Executor::create(*model, "serve");   // one stage's buckets
//   kime::Outputs out;                                     // reused: grows, then never allocates
//   if (auto err = exec->run(batch, out)) { ... err->text() ... }
//
// Semantics (docs/batch.md): the batch is checked (checkBatch), the smallest bucket of
// the stage that holds it runs it, and a batch no bucket holds is a NoBucket error naming the
// stage, the batch's counts and the stage's largest bucket. A bucket's plan is prepared on first
// use or ahead with prepare(); once a bucket is prepared and `out` has grown to the batch, run()
// allocates nothing.
//
// Ownership: a Model owns the mapping and the loaded code; Executors keep their Model alive
// (shared_ptr). An Executor is not thread-safe: use one per thread.
#ifndef KIME_RUNTIME_H
#define KIME_RUNTIME_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kime/batch.h"
#include "kime/kime.h"

namespace kime {

// What a backend can do: its name, threads, whether it replays plans as graphs, whether it
// shares memory with the host.
struct Caps {
  std::string name;  // "cpu" or "cuda"
  size_t threads = 1;
  bool graphs = false;
  bool unifiedMemory = true;
};

// A value or the error that prevented it.
template <typename T>
class Expected {
 public:
  Expected(T v) : v_(std::move(v)) {}      // NOLINT: implicit on purpose
  Expected(Error e) : v_(std::move(e)) {}  // NOLINT
  explicit operator bool() const { return v_.index() == 0; }
  T& operator*() { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct ModelImpl;
class Executor;

struct ModelOptions {
  // "": the best CPU code of the artifact this CPU runs. Else that code section (e.g.
  // "x86-64-avx2" on an AVX-512 machine, to run or measure each path); Unsupported, naming it,
  // where the CPU lacks it or the artifact has none.
  std::string cpuTarget;
  // openMemory: what messages call the buffer ("artifact in memory" when empty).
  std::string sourceName;
  // Public keys (each a .pub file's text, as kime-keygen writes it). When any are given, the
  // artifact must be signed by one of them and unchanged since (kime/signature.h), or it is
  // refused (Unsupported, saying which: unsigned, another key, which part changed) before any of
  // its code is loaded. None: signatures are not checked.
  std::vector<std::string> trustedKeys;
};

// A loaded artifact. Errors while loading are Unsupported (a file that is not a usable kime
// artifact, or code for no CPU this machine has) with a message that names the file and what is
// wrong.
class Model {
 public:
  static Expected<std::shared_ptr<Model>> open(const std::string& path, const ModelOptions& options = {});
  // The artifact in `size` bytes at `data`, which the caller keeps alive and unchanged while the
  // model (or an executor of it) lives: the same checks as a file, the weights used in place.
  // `data` must be KIME_MEMORY_ALIGN (64) byte aligned; a misaligned or short buffer is refused
  // by name (Unsupported).
  static Expected<std::shared_ptr<Model>> openMemory(const void* data, size_t size, const ModelOptions& options = {});
  ~Model();

  const std::string& name() const;
  size_t vocab() const;
  size_t types() const;
  // The longest sequence it takes (its learned position table's rows); 0: any length.
  size_t maxSequenceLength() const;
  // Its outputs, in the order Outputs::values holds them: name, rows (per marker or per
  // sequence) and width.
  const std::vector<OutputDesc>& outputs() const;
  // A token id no batch may hold (an imported model's padding id, whose tokens its positions do
  // not count): a batch with it is refused naming the sequence and token. -1: none.
  int64_t paddingId() const;
  // Stage names, and each stage's buckets in the order they are tried.
  std::vector<std::string> stages() const;
  // The stage to use when none is named: "serve" if the model has it, else its first stage.
  std::string defaultStage() const;
  std::vector<Bucket> buckets(const std::string& stage) const;
  // The CPU target whose code was loaded (e.g. "x86-64-avx512").
  const std::string& cpuTarget() const;
  // A human-readable account: stages, buckets, arena sizes, kernels, sections and sizes.
  std::string inspect() const;

  ModelImpl& impl() { return *impl_; }

 private:
  explicit Model(std::unique_ptr<ModelImpl> impl);
  std::unique_ptr<ModelImpl> impl_;
};

struct ExecutorOptions {
  size_t threads = 0;          // 0: the machine's hardware threads
  std::string device = "cpu";  // or "cuda": the first GPU, through the driver found at run time
  // On the GPU, the linear layers' arithmetic: "tf32" (tensor cores, f32 accumulation) or
  // "f32" (FMA, exact to the reference's 1e-4).
  std::string cudaMath = "tf32";
};

struct ExecutorImpl;

class Executor {
 public:
  // The executor of one stage. Unsupported when the model has no such stage.
  static Expected<std::unique_ptr<Executor>> create(std::shared_ptr<Model> model, const std::string& stage,
                                                    ExecutorOptions options = {});
  ~Executor();

  // Builds the plan of the stage's bucket number `index` now rather than on first use.
  // Idempotent. This is where memory is allocated.
  [[nodiscard]] std::optional<Error> prepare(size_t index);
  // The buckets with a plan built.
  std::vector<Bucket> warm() const;
  // Runs `batch` in the smallest bucket of the stage that holds it; `used` gets that bucket.
  [[nodiscard]] std::optional<Error> run(const Batch& batch, Outputs& out, Bucket* used = nullptr);
  // Runs `batch` in the stage's bucket number `index`, even where a smaller one holds it: for
  // checking every bucket with the same edge cases (kime-compile --verify). NoBucket when that
  // bucket does not hold it.
  [[nodiscard]] std::optional<Error> runInBucket(size_t index, const Batch& batch, Outputs& out);
  // Shape statistics of run() since the executor was made (kime.h's kime_stats: batches run,
  // refused, and the sizes of the latest no bucket held), and per bucket of the stage its
  // batches and their fill (nothing past the stage's buckets). Neither counting nor reading them
  // allocates.
  kime_stats stats() const;
  std::optional<kime_bucket_stats> bucketStats(size_t index) const;
  Caps caps() const;
  // Where it runs, for people: "cpu x86-64-avx512, 2 threads" or "cuda NVIDIA H200 (sm_90 PTX)".
  std::string deviceDescription() const;
  const std::string& stage() const;
  // While on, each kernel call is timed; profile() sums the time per kernel class of bucket
  // `index` since profiling was turned on. Timing allocates nothing. CPU only: on the GPU a
  // bucket is one graph launch, and profile() is empty.
  void setProfiling(bool on);
  // perKernel: per kernel ("k5_linear") instead of per class ("linear").
  std::vector<std::pair<std::string, double>> profile(size_t index, bool perKernel = false) const;
  // The matmul FLOPs (projections, MLP, heads, and q.k and p.v of attention) a batch costs,
  // counted analytically from the plan of the bucket that holds it; 0 when none does. `kernels`:
  // only those of one class ("linear") or one kernel ("k5_linear").
  double flops(const Batch& batch, const std::string& kernels = "") const;

 private:
  explicit Executor(std::unique_ptr<ExecutorImpl> impl);
  std::unique_ptr<ExecutorImpl> impl_;
};

// The artifact's self-test (kime-compile --selftest N) run on this machine: per bucket, its
// batches, the largest difference from the f64 reference's outputs stored with them, and the
// tolerance of the arithmetic that ran (CPU f32 or bf16, CUDA tf32 or f32).
struct SelftestBucket {
  std::string stage;
  Bucket bucket;
  size_t batches = 0;
  double maxDiff = 0;       // largest |got - want|
  double abs = 0, rel = 0;  // passes where |got - want| <= abs + rel * |want| for every value
  std::string failure;      // empty when it passed; else the first value (or error) that did not
};

struct SelftestReport {
  std::string device;  // Executor::deviceDescription()
  std::vector<SelftestBucket> buckets;
  bool passed() const;
  // A line per bucket, then the verdict.
  std::string text() const;
};

// Runs the self-test section's batches, each in its own stage and bucket, on an executor made
// with `options`. Unsupported when the artifact has no such section or it is malformed; a bucket
// whose outputs are off, or whose run fails, is a failure in the report, not an error.
Expected<SelftestReport> runSelftest(std::shared_ptr<Model> model, const ExecutorOptions& options = {});

// Owned storage for a Batch, reused from one batch to the next (BatchBuf): once it
// has grown, building a batch does not allocate.
class BatchBuf {
 public:
  void clear();
  // Appends a sequence.
  // Appends a sequence; `types` (may be null): a type per token, n of them (sentence pairs), and
  // the tokens of the sequences pushed without get their sequence's qtype.
  void push(const uint32_t* ids, size_t n, const uint32_t* markers, size_t m, uint8_t qtype,
            const uint8_t* types = nullptr);
  // Appends a sequence with a marker at every token (a tagger reads every row).
  void pushEveryToken(const uint32_t* ids, size_t n, uint8_t qtype, const uint8_t* types = nullptr);
  Batch batch() const;

 private:
  std::vector<uint32_t> ids_, cu_, markers_, mcu_, every_;
  std::vector<uint8_t> qtype_, ttype_;
};

}  // namespace kime

#endif  // KIME_RUNTIME_H
