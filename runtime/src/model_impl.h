// The runtime's view of a loaded artifact: the mapping, the manifest as structs, the CPU code.
#ifndef KIME_RUNTIME_MODEL_IMPL_H
#define KIME_RUNTIME_MODEL_IMPL_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kime/container.h"
#include "kime/format.h"
#include "kime/gather_limits.h"
#include "kime/plan.h"
#include "kime/runtime.h"
#include "kime/signature.h"

namespace kime {

// The plan's names and numbers are plan.h's: its inputs, row symbols, dtypes, kernel classes.
using InputId = kime_plan_input;
using RowSym = kime_row_symbol;
// The staged inputs (the index arrays the runtime fills from a batch) are plan.h's from
// KIME_FIRST_STAGED_INPUT on.
inline size_t stagedIndex(InputId id) { return size_t(id) - size_t(KIME_FIRST_STAGED_INPUT); }
constexpr size_t kStagedInputs = size_t(KIME_INPUT_COUNT) - size_t(KIME_FIRST_STAGED_INPUT);
// That count for a batch of T tokens, S sequences and M markers (`fixed` for a static size).
inline int64_t rowsOf(RowSym r, int64_t T, int64_t S, int64_t M, int64_t fixed) {
  switch (r) {
    case KIME_ROWS_T:
      return T;
    case KIME_ROWS_S:
      return S;
    case KIME_ROWS_S1:
      return S + 1;
    case KIME_ROWS_M:
      return M;
    case KIME_ROWS_R:
      return S + M;
    default:
      return fixed;
  }
}

struct ArgInfo {
  enum class Source { Arena, Weight, Input } source = Source::Arena;
  int64_t offset = 0;  // arena bytes
  int64_t weight = -1;
  InputId input = KIME_INPUT_IDS;
  RowSym rows = KIME_ROWS_STATIC;
  int64_t rowCount = 0;  // static size or bound
  int64_t cols = 0;      // 0: a vector
  kime_kernel_type type{2, 32, 1};
};

struct StepInfo {
  size_t kernel = 0;
  std::string node;
  double flops = 0;  // per output row; attention: per (query, key) pair
  RowSym flopRows = KIME_ROWS_T;
  std::vector<ArgInfo> args;
  // The CUDA launch for the bucket's bounds, per arithmetic of the linear layers.
  struct Launch {
    uint32_t gridX = 1, gridY = 1, block = 128;
  } launch[2];  // by CudaMath
};

// The arithmetic of the CUDA linear kernels: tensor cores with TF32 inputs, or exact f32 FMA;
// named as in the manifest, the PTX sections and the options.
using CudaMath = kime_cuda_math;
constexpr CudaMath kTf32 = KIME_CUDA_TF32, kF32 = KIME_CUDA_F32;
inline const char* cudaMathName(CudaMath m) { return kime_cuda_math_names[m]; }

struct BucketInfo {
  Bucket bucket;
  int64_t arena = 0;
  std::vector<StepInfo> steps;
  std::vector<ArgInfo> outputs;  // in ModelImpl::outputs' order: arena rows, M or S of them
};

struct WeightInfo {
  std::string name, layout;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  kime_kernel_type type{2, 32, 1};  // f32, or bf16 / i8 (--cpu-precision bf16's / int8's linears)

  // Its bytes in the weights section (the reader checks the shape first).
  uint64_t bytes() const {
    uint64_t n = type.bits / 8;
    for (int64_t d : shape) n *= uint64_t(d);
    return n;
  }
};

struct StageInfo {
  std::string name;
  std::vector<size_t> buckets;  // indices into ModelImpl::buckets
};

// Code loaded from the artifact, by whichever loader (cpu_code.cpp); unloading it on destruction.
struct CudaModel;

class LoadedCode {
 public:
  virtual ~LoadedCode() = default;
  virtual void* symbol(const std::string& name) const = 0;
};

struct ModelImpl {
  std::string path;
  const uint8_t* map = nullptr;  // the artifact's bytes: mapped from a file, or the caller's buffer
  size_t mapSize = 0;
  bool ownsMap = false;  // mapped here (unmapped on destruction)
  std::vector<SectionInfo> sections;
  // ModelOptions::trustedKeys: when any, the artifact must be signed by one (checkSignature).
  std::vector<PublicKey> trusted;

  std::string name;
  size_t vocab = 0, types = 0;
  size_t maxSeqLen = 0;                   // the longest sequence the model takes (learned positions); 0: any
  std::vector<OutputDesc> outputs;        // the Graph's outputs, in its order
  int64_t paddingId = -1;                 // a token id no batch may hold; -1: none
  std::vector<GatherLimit> gatherLimits;  // the gathers whose index a batch may take past their table
  std::vector<WeightInfo> weights;
  std::vector<std::string> kernelNames;
  std::vector<kime_kernel_class> kernelClasses;
  std::vector<std::vector<const kime_arg_slot*>> kernelSlots;  // per kernel, its arguments' slots (plan.h)
  std::vector<BucketInfo> buckets;
  std::vector<StageInfo> stages;
  const float* weightData = nullptr;  // the weights section, used in place
  uint64_t weightBytes = 0;

  std::string cpuTarget;
  std::string loader;  // "dlopen" or "kime"
  std::unique_ptr<LoadedCode> code;
  std::vector<kime_kernel_argv_fn> kernels;

  std::mutex cudaLock;  // guards `cuda`, made by the first executor on the GPU of each math
  std::shared_ptr<CudaModel> cuda[2];

  ~ModelImpl();
  const SectionInfo* section(const std::string& name) const;
  // The names of the sections that start with `prefix` (plan.h's KIME_SECTION_*), without it.
  std::vector<std::string> sectionsUnder(const std::string& prefix) const;
};

// Maps `path` and checks header, sections and checksums (and with m.trusted keys its signature),
// then reads the manifest. Returns an Unsupported error naming the file and the problem. With
// trusted keys the file is read into memory of its own rather than mapped, so that nothing
// written to the file after the check can reach the code loaders.
std::optional<Error> loadArtifact(const std::string& path, ModelImpl& m);
// Reads the manifest section at `data` into `m` (whose weights section is set), after FlatBuffers'
// verifier; what is wrong with it, in words, where it is unsound.
std::optional<std::string> readManifest(const uint8_t* data, size_t size, ModelImpl& m);
// The same checks on `size` bytes at `data` (KIME_MEMORY_ALIGN aligned), used in place; `name`
// stands for the file in messages.
std::optional<Error> loadArtifactMemory(const void* data, size_t size, const std::string& name, ModelImpl& m);
// The rows of staged array `i` (stagedIndex) in a bucket: its bound.
size_t stagedRows(size_t i, const Bucket& b);

// checkBatch with the model's vocabulary, types and positions, then its gather limits.
inline std::optional<Error> checkModelBatch(const ModelImpl& m, const Batch& b) {
  if (auto err = checkBatch(b, m.vocab, m.types, m.maxSeqLen)) return err;
  if (auto err = checkGatherLimits(b, m.gatherLimits)) return err;
  return checkPaddingId(b, m.paddingId);
}
// Fills the staged arrays from a checked batch (arrays[i]: staged array i, stagedRows long): per
// token its sequence and position; each marker's token and each sequence's first token (-1 when
// empty); per output row its token (-1 for an empty sequence's), sequence and position; and where
// the heads find their rows among the output rows.
void stageIndices(const Batch& b, int32_t* const* arrays);
// Loads the best CPU code section for this machine, or the one of `target` where given
// (refused by name where the CPU cannot run it or the artifact lacks it).
std::optional<Error> loadCpuCode(ModelImpl& m, const std::string& target = "");

// What the artifact's source section says it was compiled from, for Model::inspect (a line
// saying so where it has none or cannot be read).
std::string describeSource(const ModelImpl& m);
// Parses the optional self-test section (selftest.cpp) without running it: Unsupported, naming
// the problem, where it is malformed; nothing where it is sound or absent.
std::optional<Error> checkSelftestSection(const ModelImpl& m);
// The CPU target names this machine can run, best first.
std::vector<std::string> hostCpuTargets();

}  // namespace kime

#endif  // KIME_RUNTIME_MODEL_IMPL_H
