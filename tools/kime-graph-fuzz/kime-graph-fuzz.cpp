// kime-graph-fuzz: random valid Graphs (compiler/graph/RandomGraph.h), each compiled for two
// buckets on the x86 targets this CPU runs (of --cpu-precision's) and run against the f64
// reference evaluator on generated batches of every bucket. Prints a line per Graph and a table;
// exits 1 when a Graph was refused or an output was off.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "Differential.h"
#include "codegen/cuda/CudaKernels.h"
#include "common/ToolOptions.h"
#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

static cl::opt<unsigned> count(cl::cat(kime::tools::toolOptions()), "count", cl::desc("Graphs to generate"),
                               cl::init(20));
static cl::opt<uint64_t> seed(cl::cat(kime::tools::toolOptions()), "seed",
                              cl::desc("the first Graph's seed (the others follow it)"), cl::init(1));
static cl::opt<std::string> family(
    cl::cat(kime::tools::toolOptions()), "family",
    cl::desc("any (every op anywhere the format allows) or encoder (the encoder family's shapes)"),
    cl::value_desc("any|encoder"), cl::init("any"));
static cl::opt<unsigned> cudaEvery(cl::cat(kime::tools::toolOptions()), "cuda-every",
                                   cl::desc("also generate and assemble PTX (sm_90, f32) for every Nth Graph (0: "
                                            "never; default 4 where this build makes PTX)"),
                                   cl::init(4));
static cl::opt<std::string> keep(cl::cat(kime::tools::toolOptions()), "keep",
                                 cl::desc("write each failing Graph, its weights and buckets into this folder"),
                                 cl::value_desc("DIR"));
static cl::opt<bool> noFusion(cl::cat(kime::tools::toolOptions()), "no-fusion",
                              cl::desc("compile with the generic kernels only (kime-compile --no-fusion)"));
static cl::opt<unsigned> seconds(
    cl::cat(kime::tools::toolOptions()), "seconds",
    cl::desc("start no new Graph after this many seconds (0: no limit); the table counts those that ran"), cl::init(0));
static cl::opt<int> graphFormat(cl::cat(kime::tools::toolOptions()), "graph-format",
                                cl::desc("take the ops of this Graph format only (1: the Graphs seeds gave before "
                                         "format 2; default: the newest)"),
                                cl::init(kime::Graph::kFormat));
static cl::opt<std::string> cpuPrecision(
    cl::cat(kime::tools::toolOptions()), "cpu-precision",
    cl::desc("the CPU linears' arithmetic, as kime-compile's: f32, bf16, int8 or int8pairs; each Graph compiles for "
             "its x86 targets this CPU runs, against its reference (int8's computes as the kernels do) within its "
             "tolerance"),
    cl::value_desc("f32|bf16|int8|int8pairs"), cl::init("f32"));
static cl::opt<bool> quiet(cl::cat(kime::tools::toolOptions()), "quiet", cl::desc("print the table only"));
static cl::opt<std::string> write(
    cl::cat(kime::tools::toolOptions()), "write",
    cl::desc("write the Graph of --seed, its weights and buckets into this folder, and stop"), cl::value_desc("DIR"));

int main(int argc, char** argv) {
  kime::tools::parseToolOptions(argc, argv, "kime random-Graph differential tester\n");
  kime::fuzz::Options o;
  if (family != "any" && family != "encoder") {
    std::cerr << "kime-graph-fuzz: --family must be any or encoder, not \"" << family << "\"\n";
    return 2;
  }
  o.family = family == "any" ? kime::GraphFamily::Any : kime::GraphFamily::Encoder;
  if (graphFormat < 1 || graphFormat > kime::Graph::kFormat) {
    std::cerr << "kime-graph-fuzz: --graph-format must be 1 to " << kime::Graph::kFormat << ", not " << graphFormat
              << "\n";
    return 2;
  }
  o.format = graphFormat;
  const std::optional<kime::Arithmetic> precision = kime::parseChoice<kime::Arithmetic>(cpuPrecision);
  if (!precision) {
    std::cerr << "kime-graph-fuzz: --cpu-precision must be " << kime::choiceList<kime::Arithmetic>() << ", not \""
              << cpuPrecision << "\"\n";
    return 2;
  }
  o.precision = *precision;
  if (kime::fuzz::targetsFor(o.precision).empty()) {
    std::cerr << "kime-graph-fuzz: --cpu-precision " << cpuPrecision
              << ": this CPU runs none of its targets (bf16's needs AVX512-BF16)\n";
    return 2;
  }
  if (!write.empty()) {
    kime::fuzz::writeGraph(seed, o, write);
    return 0;
  }
  o.cudaEvery = cudaEvery;
  if (o.precision != kime::Arithmetic::f32 && o.cudaEvery) {
    // The CUDA kernels read f32 weights: an artifact of another precision has none.
    if (cudaEvery.getNumOccurrences()) {
      std::cerr << "kime-graph-fuzz: --cuda-every: the CUDA kernels are f32; --cpu-precision " << cpuPrecision
                << " makes CPU code only\n";
      return 2;
    }
    o.cudaEvery = 0;
  }
  if (!kime::cuda::canMakePtx() && o.cudaEvery) {
    // The default checks PTX where the build makes it; asked for explicitly, it must.
    if (cudaEvery.getNumOccurrences()) {
      std::cerr << "kime-graph-fuzz: --cuda-every: this build of kime has no NVRTC, so it makes no PTX\n";
      return 2;
    }
    o.cudaEvery = 0;
  }
  o.keep = keep;
  o.fusion = !noFusion;
  kime::fuzz::Summary total;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t s = seed; s < seed + count; ++s) {
    if (seconds && std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) break;
    kime::fuzz::Result r = kime::fuzz::runGraph(s, o);
    total.add(r);
    if (!quiet || !r.ok()) std::cout << kime::fuzz::describe(r) << std::endl;
  }
  std::cout << kime::fuzz::table(total, o) << "seeds " << seed << " to " << seed + total.graphs - 1 << "\n";
  return total.ok() ? 0 : 1;
}
