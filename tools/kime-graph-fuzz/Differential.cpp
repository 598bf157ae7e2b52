#include "Differential.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

#include "checkpoint/Safetensors.h"
#include "codegen/cpu/CpuCodegen.h"
#include "graph/Graph.h"
#include "graph/ModelConfig.h"
#include "kime/runtime.h"
#include "kime/tooling/BatchGen.h"
#include "kime/tooling/Invariance.h"
#include "pipeline/Compile.h"
#include "pipeline/Precision.h"
#include "reference/Reference.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime::fuzz {

namespace fs = std::filesystem;

namespace {

// Two buckets of one stage: each allows fewer output rows than tokens (kime-prune-rows works),
// the first few enough rows for the few-row linear kernels.
constexpr const char* kBuckets =
    R"({"stages": {"serve": [{"tokens": 16, "seqs": 3, "markers": 6}, {"tokens": 64, "seqs": 8, "markers": 16}]}})";
constexpr int64_t kMaxTokens = 64;

// Writes the Graph, its weights and the buckets into `dir`; returns the weights for the reference.
RefWeights writeInputs(const Graph& g, uint64_t seed, const fs::path& dir) {
  fs::create_directories(dir);
  auto values = randomWeights(g, seed);
  std::vector<TensorData> tensors;
  for (const WeightDecl& w : g.weights) tensors.push_back({w.name, w.dtype, w.shape, values.at(w.name)});
  writeSafetensors((dir / "model.safetensors").string(), tensors, {});
  json::writeFileAtomic((dir / "graph.json").string(), writeGraphJson(g));
  json::writeFileAtomic((dir / "buckets.json").string(), kBuckets);
  RefWeights w;
  for (auto& [name, v] : values) w[name] = std::vector<double>(v.begin(), v.end());
  return w;
}

// The weights, each moved by up to one f32 rounding (2^-24 relative), in a random direction.
RefWeights nudged(const RefWeights& weights, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  RefWeights out = weights;
  for (auto& [name, v] : out)
    for (double& x : v) x *= 1 + std::ldexp(u(rng), -24);
  return out;
}

// What a Graph's outputs are held to: `want` computes as the kernels' arithmetic does (int8's
// quantization; f32 and bf16 exactly), within `tolerance`; `exact` and `nudged` (the weights moved
// by one f32 rounding), both exact, measure how far the Graph amplifies rounding.
struct References {
  RefSession &want, &exact, &nudged;
  Tolerance tolerance;
};

// Runs every bucket's generated batches on the executor and the references; records the worst.
// Each output may be off by the precision's tolerance plus kConditioning times how far the exact
// reference moves when the weights are nudged by one f32 rounding: a deep random Graph can
// amplify f32 rounding past the fixed tolerance (attention at a large scale, norms of small
// rows), and that is its conditioning, not a wrong kernel. A wrong sign or magnitude is still far
// outside.
void compare(const Graph& g, const References& refs, Executor& exec, const std::vector<Bucket>& buckets, uint64_t seed,
             Result& r) {
  constexpr double kConditioning = 16;
  const std::vector<OutputDesc> outputs = outputDescs(g);
  auto check = [&](double got, double want, double moved, const std::string& what) {
    const double err = std::fabs(got - want);
    const double fixed = refs.tolerance.abs + refs.tolerance.rel * std::fabs(want);
    r.worst = std::max(r.worst, err / (fixed + kConditioning * moved));
    r.worstRel = std::max(r.worstRel, err / std::max(std::fabs(want), 1e-3));
    if (err > fixed && err <= fixed + kConditioning * moved) ++r.conditioned;
    if (err <= fixed + kConditioning * moved && std::isfinite(got)) return;
    if (r.mismatches++ == 0)
      r.firstMismatch = what + ": got " + std::to_string(got) + ", want " + std::to_string(want) + " (moved " +
                        std::to_string(moved) + " by a nudge of the weights)";
  };
  for (size_t b = 0; b < buckets.size(); ++b) {
    for (const auto& nb :
         tooling::bucketBatches(buckets[b], size_t(g.vocab), size_t(g.types), learnedPositions(g), seed + b)) {
      Outputs got;
      RefOutputs want, exact, near;
      auto err = exec.runInBucket(b, nb.batch.view(), got);
      auto refErr = refs.want.evaluate(nb.batch.view(), want);
      if (!refErr) refErr = &refs.exact == &refs.want ? std::nullopt : refs.exact.evaluate(nb.batch.view(), exact);
      if (!refErr) refErr = refs.nudged.evaluate(nb.batch.view(), near);
      const RefOutputs& unmoved = &refs.exact == &refs.want ? want : exact;
      ++r.batches;
      const std::string where = "bucket " + std::to_string(b) + " batch " + nb.name;
      if (err || refErr) {
        ++r.refusedBatches;
        if (!err || !refErr || err->text() != refErr->text())
          if (r.mismatches++ == 0)
            r.firstMismatch = where + ": kime says \"" + (err ? err->text() : "ok") + "\", the reference \"" +
                              (refErr ? refErr->text() : "ok") + "\"";
        continue;
      }
      const bool same = forEachOutputValue(got, want, [&](double x, double y, size_t o, size_t k) {
        check(x, y, std::fabs(near[o][k] - unmoved[o][k]), where + " " + describeOutputValue(outputs[o], k));
      });
      if (!same && r.mismatches++ == 0) r.firstMismatch = where + ": the outputs' sizes are not the reference's";
    }
  }
}

// Each sequence's outputs the same bytes alone and among neighbours, with 2 threads (`exec`) and 1.
void checkInvariance(const Graph& g, const std::shared_ptr<Model>& model, Executor& exec, uint64_t seed, Result& r) {
  auto one = Executor::create(model, "serve", {1});
  if (!one) {
    r.refused = one.error().text();
    return;
  }
  const std::vector<Bucket> buckets = model->buckets("serve");
  tooling::InvarianceOptions o;
  o.outputs = model->outputs();
  o.vocab = size_t(g.vocab), o.types = size_t(g.types), o.maxLen = learnedPositions(g), o.trials = 3, o.seed = seed;
  // Ids, types and lengths within the tables they index (a Graph may gather a table of fewer
  // rows than its vocabulary by the ids), so that the sequences are ones the model takes.
  for (const GatherLimit& l : gatherLimits(g)) {
    if (l.index == KIME_INPUT_IDS) o.vocab = std::min(o.vocab, l.rows);
    if (l.index == KIME_INPUT_QTYPE) o.types = std::min(o.types, l.rows);
    if (l.index == KIME_INPUT_TOKPOS) o.maxLen = o.maxLen ? std::min(o.maxLen, l.rows) : l.rows;
  }
  const tooling::InvarianceReport rep =
      tooling::checkBatchInvariance({{&exec, buckets, "2 threads"}, {one->get(), buckets, "1 thread"}}, o);
  r.invarianceRuns += rep.runs;
  if (!rep.failure.empty()) ++r.variant;
  if (r.firstVariant.empty()) r.firstVariant = rep.failure;
}

// Counts the artifact's kernels and those of the generic classes (names k<i>_<class>).
void countKernels(const std::string& inspect, Result& r) {
  std::istringstream in(inspect.substr(inspect.find("kernels (") + 9));
  in >> r.kernels;
  for (const char* cls : {"_gather", "_eltwise", "_rope", "_pool"})
    for (size_t at = inspect.find(cls); at != std::string::npos; at = inspect.find(cls, at + 1)) ++r.generic;
}

// Runs the compiled Graph on each of its targets: every bucket's batches against the references,
// and batch invariance.
void runTargets(const Graph& g, const RefWeights& weights, const CompileOptions& co, uint64_t seed, Result& r) {
  const RefWeights nudgedWeights = nudged(weights, seed);
  RefSession exact(g, weights), near(g, nudgedWeights);
  std::unique_ptr<RefSession> quantized;  // int8: the reference computes as the int8 kernels do
  if (isInt8(co.cpuPrecision))
    quantized = std::make_unique<RefSession>(g, *Checkpoint::open(co.weights), co.cpuPrecision);
  const References refs{quantized ? *quantized : exact, exact, near, cpuTolerance(co)};
  for (const std::string& target : co.targets) {
    ModelOptions mo;
    mo.cpuTarget = target;
    auto model = Model::open(co.output, mo);
    if (!model) {
      r.refused = model.error().text();
      break;
    }
    if (r.kernels == 0) countKernels((*model)->inspect(), r);
    auto exec = Executor::create(*model, "serve", {2});
    if (!exec) {
      r.refused = exec.error().text();
      break;
    }
    compare(g, refs, **exec, (*model)->buckets("serve"), seed, r);
    checkInvariance(g, *model, **exec, seed, r);
    r.targets += (r.targets.empty() ? "" : ", ") + target;
  }
}

}  // namespace

// The Sapphire Rapids set of int8's VNNI kernels and bf16's: the runtime's rule for them
// (runtime/src/cpu_code.cpp).
std::vector<std::string> targetsFor(Arithmetic precision) {
  std::vector<std::string> t;
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool sapphire = avx512 && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni") &&
                        __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512ifma");
  if (precision != Arithmetic::bf16) t.push_back(kime_cpu_target_names[KIME_CPU_X86_64_AVX2]);
  if (precision != Arithmetic::bf16 && avx512) t.push_back(kime_cpu_target_names[KIME_CPU_X86_64_AVX512]);
  if (isInt8(precision) && sapphire) t.push_back(cpu::kInt8Target);
  if (precision == Arithmetic::bf16 && sapphire) t.push_back(cpu::kBf16Target);
#else
  t.push_back(kime_cpu_target_names[KIME_CPU_ARM_64]);
#endif
  return t;
}

void writeGraph(uint64_t seed, const Options& o, const std::string& dir) {
  writeInputs(randomGraph(seed, o.family, kMaxTokens, o.format), seed, dir);
}

Result runGraph(uint64_t seed, const Options& o) {
  Result r;
  r.seed = seed;
  const Graph g = randomGraph(seed, o.family, kMaxTokens, o.format);
  r.nodes = g.nodes.size();
  const fs::path dir =
      fs::temp_directory_path() / ("kime-graph-fuzz-" + std::to_string(getpid())) / std::to_string(seed);
  const RefWeights weights = writeInputs(g, seed, dir);
  CompileOptions co;
  co.graph = (dir / "graph.json").string(), co.weights = (dir / "model.safetensors").string();
  co.buckets = (dir / "buckets.json").string(), co.output = (dir / "model.kime").string();
  co.targets = targetsFor(o.precision);
  co.cpuPrecision = o.precision;
  if (o.cudaEvery && seed % o.cudaEvery == 0) co.cudaArchs = {"sm_90"}, co.cudaMath = {"f32"};
  co.jobs = 2;
  co.fusion = o.fusion;
  try {
    std::ostringstream out, log;
    compileModel(co, out, log);
    runTargets(g, weights, co, seed, r);
  } catch (const std::exception& e) {
    r.refused = e.what();
  }
  if (!r.ok() && !o.keep.empty()) {
    fs::create_directories(fs::path(o.keep) / std::to_string(seed));
    fs::copy(dir, fs::path(o.keep) / std::to_string(seed),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  fs::remove_all(dir);
  return r;
}

void Summary::add(const Result& r) {
  ++graphs;
  if (!r.refused.empty())
    ++refused;
  else
    ++compiled;
  if (r.mismatches) ++mismatched;
  if (r.variant) ++variantGraphs;
  invarianceRuns += r.invarianceRuns;
  batches += r.batches, kernels += r.kernels, generic += r.generic, conditioned += r.conditioned;
  worst = std::max(worst, r.worst), worstRel = std::max(worstRel, r.worstRel);
}

std::string describe(const Result& r) {
  std::ostringstream s;
  s.precision(3);
  s << "seed " << r.seed << ": " << r.nodes << " nodes, ";
  if (!r.refused.empty()) return s.str() + "REFUSED: " + r.refused;
  s << r.kernels << " kernels (" << r.generic << " generic), " << r.batches << " batches (" << r.refusedBatches
    << " refused by both) on " << r.targets << ", worst " << r.worst << " of the tolerance";
  if (r.conditioned) s << ", " << r.conditioned << " outputs past the fixed tolerance within the conditioning";
  s << ", " << r.invarianceRuns << " runs among neighbours the same bytes as alone";
  if (r.mismatches) s << ", MISMATCHED " << r.mismatches << "x, first " << r.firstMismatch;
  if (r.variant) s << ", NOT BATCH-INVARIANT: " << r.firstVariant;
  return s.str();
}

std::string table(const Summary& s, const Options& o) {
  std::ostringstream t;
  t.precision(3);
  t << "\n| family | graphs | compiled | refused | mismatched | batches | kernels (generic) | worst error / tolerance "
       "| worst relative error | outputs past the fixed tolerance, within the conditioning | invariance runs | "
       "not batch-invariant |\n"
    << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    << "| " << (o.family == GraphFamily::Any ? "any" : "encoder") << (o.fusion ? "" : " (no fusion)")
    << (o.precision == Arithmetic::f32 ? std::string() : std::string(", ") + nameOf(o.precision)) << " | " << s.graphs
    << " | " << s.compiled << " | " << s.refused << " | " << s.mismatched << " | " << s.batches << " | " << s.kernels
    << " (" << s.generic << ") | " << s.worst << " | " << s.worstRel << " | " << s.conditioned << " | "
    << s.invarianceRuns << " | " << s.variantGraphs << " |\n";
  return t.str();
}

}  // namespace kime::fuzz
