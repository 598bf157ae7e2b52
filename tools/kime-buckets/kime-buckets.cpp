// kime-buckets: proposes a stage's bucket file from the sizes of sample batches (batch files, or
// the JSON lines kime-run --stats --json writes): at most N buckets that hold every sample, with
// the least expected cost per batch under the chosen cost model, measured from the compiler's
// plans for the model (BucketPlanner.h, BucketCost.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "Samples.h"
#include "buckets/BucketPlanner.h"
#include "buckets/Buckets.h"
#include "common/ToolOptions.h"
#include "graph/Graph.h"
#include "llvm/Support/CommandLine.h"
#include "pipeline/BucketCost.h"
#include "support/JsonFields.h"

namespace cl = llvm::cl;
using namespace kime;

static cl::list<std::string> samplePaths(cl::cat(kime::tools::toolOptions()), cl::Positional,
                                         cl::desc("<samples: batch .json files or .jsonl of sizes>"), cl::OneOrMore);
static cl::opt<unsigned> maxBuckets(cl::cat(kime::tools::toolOptions()), "max-buckets",
                                    cl::desc("at most this many buckets"), cl::init(4));
static cl::opt<std::string> costModel(
    cl::cat(kime::tools::toolOptions()), "cost",
    cl::desc("the cost of a batch in a bucket: gpu (the FLOPs of the bucket's plan at its bounds: a captured CUDA "
             "graph runs the whole bucket), cpu (the bucket's arena bytes: the memory a run spans), tokens (the "
             "bucket's tokens; no model needed)"),
    cl::value_desc("gpu|cpu|tokens"), cl::init("gpu"));
static cl::opt<std::string> graphPath(cl::cat(kime::tools::toolOptions()), "graph",
                                      cl::desc("the model's Graph (for the gpu and cpu costs and the arena column)"),
                                      cl::value_desc("graph.json"));
static cl::opt<std::string> weightsPath(cl::cat(kime::tools::toolOptions()), "weights", cl::desc("its checkpoint"),
                                        cl::value_desc("model.safetensors"));
static cl::opt<std::string> stageName(cl::cat(kime::tools::toolOptions()), "stage", cl::desc("the stage to propose"),
                                      cl::init("serve"));
static cl::opt<std::string> currentPath(cl::cat(kime::tools::toolOptions()), "current",
                                        cl::desc("a bucket file to compare with (its stage --stage)"),
                                        cl::value_desc("buckets.json"));
static cl::opt<double> memoryCap(cl::cat(kime::tools::toolOptions()), "memory-cap",
                                 cl::desc("no bucket whose arena exceeds this many bytes (needs --graph)"),
                                 cl::init(0));
static cl::opt<unsigned> granule(
    cl::cat(kime::tools::toolOptions()), "granule",
    cl::desc("round each sample's tokens up to a multiple of this (fewer, rounder candidate buckets)"), cl::init(8));
static cl::opt<std::string> codeTarget(cl::cat(kime::tools::toolOptions()), "code-target",
                                       cl::desc("also compile each listed bucket's new kernels for this CPU target and "
                                                "print their code bytes and compile seconds (needs --graph)"),
                                       cl::value_desc("x86-64-avx2|x86-64-avx512|arm-64"));
static cl::opt<int> jobs(cl::cat(kime::tools::toolOptions()), "j", cl::desc("kernels compiled at once (--code-target)"),
                         cl::init(1));
static cl::opt<std::string> outPath(cl::cat(kime::tools::toolOptions()), "o",
                                    cl::desc("write the proposed bucket file here"), cl::value_desc("buckets.json"));

namespace {

struct Row {
  const char* what;
  std::vector<Bucket> buckets;
};

// With --code-target: per bucket, the kernels it adds, their code bytes and compile seconds.
void printCode(const Row& r, const Graph& g, const Checkpoint& ck) {
  const std::vector<BucketCode> code = measureCode(g, ck, r.buckets, codeTarget, jobs);
  size_t bytes = 0;
  double seconds = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    std::printf("  code %u/%u/%u: %zu new kernels, %zu bytes, %.2f s (%s)\n", r.buckets[i].tokens, r.buckets[i].seqs,
                r.buckets[i].markers, code[i].newKernels, code[i].bytes, code[i].seconds, codeTarget.c_str());
    bytes += code[i].bytes, seconds += code[i].seconds;
  }
  std::printf("  code in all: %zu bytes, %.2f s\n", bytes, seconds);
}

// Per bucket: share of the samples, mean fill of tokens, arena bytes (with a model), cost.
void printTable(const Row& r, const std::vector<SizeSample>& samples, const BucketCostFn& cost, BucketMeasurer* m) {
  const double expected = expectedCost(samples, r.buckets, cost);
  std::vector<size_t> held(r.buckets.size() + 1);
  std::vector<double> tokens(r.buckets.size() + 1);
  const std::vector<size_t> assigned = assignSamples(samples, r.buckets);
  for (size_t k = 0; k < samples.size(); ++k) ++held[assigned[k]], tokens[assigned[k]] += samples[k].tokens;
  std::printf("%s: %zu buckets, expected cost per batch %.6g%s\n", r.what, r.buckets.size(), expected,
              std::isinf(expected) ? " (some sample fits no bucket)" : "");
  std::printf("  %-24s %7s %10s %14s %14s\n", "bucket (tokens/seqs/m)", "share", "mean fill", "arena bytes", "cost");
  for (size_t i = 0; i < r.buckets.size(); ++i) {
    const Bucket& b = r.buckets[i];
    char name[64], arena[32] = "-";
    std::snprintf(name, sizeof name, "%u/%u/%u", b.tokens, b.seqs, b.markers);
    if (m) std::snprintf(arena, sizeof arena, "%lld", (long long)m->measure(b).arena);
    std::printf("  %-24s %6.1f%% %10.2f %14s %14.6g\n", name, 100.0 * double(held[i]) / double(samples.size()),
                held[i] ? tokens[i] / double(held[i]) / double(b.tokens) : 0.0, arena, cost(b));
  }
}

std::vector<SizeSample> readAll() {
  std::vector<SizeSample> all;
  for (const std::string& p : samplePaths)
    for (SizeSample s : tools::readSamples(p)) {
      // A bucket's sizes are at least 1; tokens rounded up to the granule.
      const uint32_t g = std::max(1u, unsigned(granule));
      s.tokens = std::max<uint32_t>(1, (s.tokens + g - 1) / g * g);
      s.seqs = std::max<uint32_t>(1, s.seqs);
      s.markers = std::max<uint32_t>(1, s.markers);
      all.push_back(s);
    }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  kime::tools::parseToolOptions(argc, argv, "kime-buckets: a bucket file from sample batch sizes\n");
  try {
    if (costModel != "gpu" && costModel != "cpu" && costModel != "tokens")
      throw std::runtime_error("--cost must be gpu, cpu or tokens, not \"" + costModel + "\"");
    if ((costModel != "tokens" || memoryCap > 0 || !codeTarget.empty()) && (graphPath.empty() || weightsPath.empty()))
      throw std::runtime_error("--cost " + costModel +
                               (memoryCap > 0 || !codeTarget.empty() ? " with --memory-cap or --code-target" : "") +
                               " needs the model: --graph and --weights");
    const std::vector<SizeSample> samples = readAll();
    uint32_t longest = 1;
    for (const SizeSample& s : samples) longest = std::max(longest, s.tokens);

    std::unique_ptr<BucketMeasurer> measurer;
    std::unique_ptr<Checkpoint> ck;
    Graph g;
    if (!graphPath.empty() && !weightsPath.empty()) {
      g = readGraphFile(graphPath);
      ck = Checkpoint::open(weightsPath);
      ck->checkAgainst(g);
      measurer = std::make_unique<BucketMeasurer>(g, *ck, int64_t(longest));
    }
    const BucketCostFn cost = [&](const Bucket& b) {
      if (memoryCap > 0 && double(measurer->measure(b).arena) > memoryCap) return HUGE_VAL;
      if (costModel == "tokens") return double(b.tokens);
      return costModel == "gpu" ? measurer->measure(b).flops : double(measurer->measure(b).arena);
    };
    const BucketProposal p = proposeBuckets(samples, maxBuckets, cost);
    std::printf("# %zu samples, cost model %s%s\n", samples.size(), costModel.c_str(),
                costModel == "gpu"   ? " (FLOPs at the bucket's bounds)"
                : costModel == "cpu" ? " (arena bytes)"
                                     : " (padded tokens)");
    std::vector<Row> rows = {{"proposed", p.buckets}, {"even split", evenSplit(samples, p.buckets.size())}};
    if (!currentPath.empty())
      for (const Stage& st : readBucketsFile(currentPath))
        if (st.name == stageName) rows.push_back({"current", st.buckets});
    for (const Row& r : rows) {
      printTable(r, samples, cost, measurer.get());
      if (!codeTarget.empty()) printCode(r, g, *ck);
    }
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Bucket& b : p.buckets) list.push_back({{"tokens", b.tokens}, {"seqs", b.seqs}, {"markers", b.markers}});
    const std::string file = nlohmann::ordered_json{{"stages", {{stageName, list}}}}.dump() + "\n";
    if (outPath.empty())
      std::cout << file;
    else
      json::writeFileAtomic(outPath, file);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-buckets: error: " << e.what() << "\n";
    return 1;
  }
}
