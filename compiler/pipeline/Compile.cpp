#include "Compile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "Lowering.h"
#include "Refit.h"
#include "Selftest.h"
#include "artifact/ArtifactWriter.h"
#include "artifact/Signing.h"
#include "buckets/Buckets.h"
#include "cache/ContentHash.h"
#include "cache/KernelCache.h"
#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/Schedule.h"
#include "codegen/cuda/CudaKernels.h"
#include "import/GraphImport.h"
#include "kime/manifest_keys.h"
#include "kime/runtime.h"
#include "kime/tooling/BatchGen.h"
#include "mlir/IR/MLIRContext.h"
#include "reference/Reference.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

using OJson = nlohmann::ordered_json;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

OJson argJson(const PlanArg& a) {
  if (a.source == PlanArg::Source::Weight) return {{key::src, key::srcWeight}, {key::id, a.weight}};
  OJson j = {{key::src, a.source == PlanArg::Source::Arena ? key::srcArena : key::srcInput}};
  if (a.source == PlanArg::Source::Arena)
    j[key::offset] = a.offset;
  else
    j[key::name] = kime_plan_input_names[a.input];
  j[key::rows] = kime_row_symbol_names[a.rows];
  j[key::bound] = a.rowCount;
  j[key::cols] = a.cols;
  j[key::dtype] = kime_dtype_names[a.dtype];
  return j;
}

OJson bucketJson(const BucketPlan& p, const KernelRegistry& k, const std::vector<std::string>& maths) {
  OJson steps = OJson::array();
  for (const PlanStep& s : p.steps) {
    OJson args = OJson::array();
    for (const PlanArg& a : s.args) args.push_back(argJson(a));
    OJson launches = OJson::object();  // per CUDA math, the step's launch for this bucket
    for (const std::string& m : maths) {
      cuda::Launch l = cuda::launchFor(k.specs[size_t(s.kernel)], p.bucket, cuda::parseMath(m));
      launches[m] = {{key::grid, {l.gridX, l.gridY}}, {key::block, l.block}};
    }
    steps.push_back({{key::kernel, s.kernel},
                     {key::name, k.name(s.kernel)},
                     {key::node, s.node},
                     {key::flops, s.flops},
                     {key::args, args},
                     {key::cuda, launches}});
  }
  return {{key::tokens, p.bucket.tokens}, {key::seqs, p.bucket.seqs}, {key::markers, p.bucket.markers},
          {key::arena, p.arena},          {key::steps, steps},        {key::logits, argJson(p.logits)},
          {key::act, argJson(p.act)}};
}

// One line per argument kind: in:NAME[ROWS], w:NAME[SHAPE], @OFFSET[ROWS, COLS].
// How --emit=plan marks a packed weight's layout: ^T transposed, ^P panels (^P.bf16 in pairs,
// ^P.i8 in int8 quads), ^S an int8 weight's scales.
const char* planSuffix(const WeightLayout& l) {
  using Kind = WeightLayout::Kind;
  if (l.kind == Kind::Int8Scales) return "^S";
  return l.kind == Kind::Transposed ? "^T"
         : l.kind != Kind::Panels   ? ""
         : l.pairs                  ? "^P.bf16"
         : l.quads                  ? "^P.i8"
                                    : "^P";
}

std::string argText(const PlanArg& a, const WeightPacker& w) {
  auto dims = [&](kime_row_symbol rows, int64_t bound, int64_t cols) {
    std::string r =
        rows == KIME_ROWS_STATIC ? std::to_string(bound) : kime_row_symbol_names[rows] + (":" + std::to_string(bound));
    return "[" + r + (cols ? ", " + std::to_string(cols) : "") + "]";
  };
  switch (a.source) {
    case PlanArg::Source::Input:
      return "in:" + std::string(kime_plan_input_names[a.input]) + dims(a.rows, a.rowCount, a.cols);
    case PlanArg::Source::Weight: {
      const PackedWeight& p = w.weights()[size_t(a.weight)];
      std::string shape;
      for (int64_t d : p.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
      return "w:" + p.name + planSuffix(p.layout) + "[" + shape + "]";
    }
    case PlanArg::Source::Arena:
      return "@" + std::to_string(a.offset) + dims(a.rows, a.rowCount, a.cols);
  }
  return "?";
}

// The plan of a bucket as text: what --emit=plan prints.
std::string planText(const BucketPlan& p, const KernelRegistry& k, const WeightPacker& w) {
  const size_t generic = size_t(std::count_if(p.steps.begin(), p.steps.end(), [&](const PlanStep& st) {
    return kime_class_is_generic(k.specs[size_t(st.kernel)].kind);
  }));
  std::string s = "bucket " + describe(p.bucket) + ": arena " + std::to_string(p.arena) + " bytes, " +
                  std::to_string(p.steps.size()) + " kernel calls (" + std::to_string(p.steps.size() - generic) +
                  " fused, " + std::to_string(generic) + " generic)\n";
  for (const PlanStep& st : p.steps) {
    s += "  " + k.name(st.kernel) + " \"" + st.node + "\"(";
    for (size_t i = 0; i + 1 < st.args.size(); ++i) s += (i ? ", " : "") + argText(st.args[i], w);
    s += ") -> " + argText(st.args.back(), w) + "\n";
  }
  s += "  logits " + argText(p.logits, w) + ", act " + argText(p.act, w) + "\n";
  return s;
}

// Runs every bucket of the written artifact on generated batches and compares each output with
// the reference evaluator.
void verifyArtifact(const std::string& path, const Graph& g, const Checkpoint& ck, const std::vector<Stage>& stages,
                    Tolerance tolerance, std::ostream& log) {
  auto model = Model::open(path);
  if (!model) throw CompileError("--verify: " + model.error().text());
  const size_t cap = learnedPositions(g);
  size_t checked = 0;
  RefSession reference(g, ck);
  for (const Stage& st : stages) {
    auto exec = Executor::create(*model, st.name);
    if (!exec) throw CompileError("--verify: " + exec.error().text());
    for (size_t i = 0; i < st.buckets.size(); ++i) {
      const Bucket& b = st.buckets[i];
      double worst = 0;
      for (auto& nb : tooling::bucketBatches(b, size_t(g.vocab), size_t(g.types), cap, 7 + i)) {
        Outputs got;
        // In this bucket, even where a smaller one would hold the batch: every bucket sees every
        // edge case.
        if (auto err = (*exec)->runInBucket(i, nb.batch.view(), got))
          throw CompileError("--verify: stage " + st.name + " " + describe(b) + ", " + nb.name + ": " + err->text());
        RefOutputs want;
        if (auto err = reference.evaluate(nb.batch.view(), want))
          throw CompileError("--verify: reference: " + err->text());
        auto cmp = [&](double x, double y, const std::string& what) {
          worst = std::max(worst, std::fabs(x - y));
          if (!withinTolerance(x, y, tolerance))
            throw CompileError("--verify: stage " + st.name + " bucket " + describe(b) + ", batch \"" + nb.name +
                               "\": " + what + " is " + std::to_string(x) + " but the reference says " +
                               std::to_string(y));
        };
        for (size_t k = 0; k < want.logits.size(); ++k)
          cmp(got.logits[k], want.logits[k], "logit " + std::to_string(k));
        for (size_t s = 0; s < want.act.size(); ++s)
          for (int c = 0; c < 2; ++c) cmp(got.act[s][c], want.act[s][c], "act " + std::to_string(s));
        ++checked;
      }
      log << "verify: stage " << st.name << " bucket " << describe(b) << ": ok (max abs diff " << std::scientific
          << std::setprecision(2) << worst << std::defaultfloat << ")\n";
    }
  }
  log << "verify: " << checked << " batches match the reference within " << describe(tolerance) << "\n";
}

// What the CPU code's outputs are held to: bf16 rounds every linear's inputs and weights to 8
// significant bits; int8 quantizes them (compiler/quant/Int8.h).
Tolerance cpuTolerance(const CompileOptions& o) {
  return o.cpuPrecision == "bf16" ? kBf16Tolerance : o.cpuPrecision == "int8" ? kInt8Tolerance : kF32Tolerance;
}

// The CPU targets whose kernels read a precision's weights, those it compiles by default first:
// bf16's one target; int8's x86 targets (each with its own dot product) and arm-64; f32's all but
// the two that are only for those.
struct PrecisionTargets {
  std::vector<std::string> byDefault, others;
  std::vector<std::string> all() const {
    std::vector<std::string> out = byDefault;
    out.insert(out.end(), others.begin(), others.end());
    return out;
  }
  bool has(const std::string& t) const {
    const std::vector<std::string> a = all();
    return std::find(a.begin(), a.end(), t) != a.end();
  }
};
PrecisionTargets precisionTargets(const std::string& precision) {
  auto name = [](kime_cpu_target t) { return std::string(kime_cpu_target_names[t]); };
  if (precision == "bf16") return {{cpu::kBf16Target}, {}};
  if (precision == "int8")
    return {{name(KIME_CPU_X86_64_AVX2), name(KIME_CPU_X86_64_AVX512), cpu::kInt8Target},
            {name(KIME_CPU_ARM_64), name(KIME_CPU_ARM_64_DOTPROD)}};
  return {defaultCpuTargets(), {name(KIME_CPU_ARM_64)}};
}

// bf16 and int8 linears are opt-ins: the weights section is shared by every code section, so
// only their own targets' kernels can read it, and no CUDA code.
void checkPrecision(const CompileOptions& o) {
  if (o.cpuPrecision != "f32" && o.cpuPrecision != "bf16" && o.cpuPrecision != "int8")
    throw CompileError("--cpu-precision must be f32, bf16 or int8, not \"" + o.cpuPrecision + "\"");
  const PrecisionTargets own = precisionTargets(o.cpuPrecision);
  for (const std::string& t : o.targets) {
    cpu::parseTarget(t);  // an unknown name is refused as one
    if (own.has(t)) continue;
    for (const char* p : {"bf16", "int8"})
      if (o.cpuPrecision == "f32" && precisionTargets(p).has(t))
        throw CompileError("target " + t + " is for --cpu-precision " + p + "; for f32 kernels use " +
                           (cpu::isaOf(t).isa == cpu::Isa::Neon ? "arm-64" : "x86-64-avx512"));
    std::string list;
    for (const std::string& n : own.all()) list += (list.empty() ? "" : ", ") + n;
    throw CompileError("--cpu-precision " + o.cpuPrecision + " packs the linears' weights in " + o.cpuPrecision +
                       " for " + list + " only; target " + t + " cannot read them (compile a second artifact for it)");
  }
  if (o.cpuPrecision != "f32" && !o.cudaArchs.empty())
    throw CompileError("--cpu-precision " + o.cpuPrecision +
                       " is for the CPU kernels; compile with --cuda-arch none (the CUDA kernels read f32 weights)");
}

// The model lowered: the distinct buckets of all stages (in order of first appearance) with
// their plans, the distinct kernels, and each stage's buckets as indices.
struct LoweredModel {
  std::vector<Bucket> buckets;
  std::vector<BucketPlan> plans;
  std::vector<std::string> mlir;  // per bucket, with --emit=mlir
  OJson stages = OJson::array();
  KernelRegistry kernels{{}, cpu::fewRowsChangesSchedule};
  std::vector<std::string> names;  // per kernel, its symbol
};

// Stage 1: every bucket through the passes and read off as a plan; progress to `log`.
LoweredModel lowerModel(const CompileOptions& o, const Graph& g, const std::vector<Stage>& stages,
                        WeightPacker& weights, std::ostream& log) {
  LoweredModel m;
  int64_t ropeRows = 1;
  for (const Stage& st : stages) {
    OJson ids = OJson::array();
    for (const Bucket& b : st.buckets) {
      auto it = std::find(m.buckets.begin(), m.buckets.end(), b);
      ids.push_back(it - m.buckets.begin());
      if (it == m.buckets.end()) m.buckets.push_back(b);
      ropeRows = std::max<int64_t>(ropeRows, b.tokens);
    }
    m.stages.push_back({{key::name, st.name}, {key::buckets, ids}});
  }
  mlir::MLIRContext ctx;
  for (size_t i = 0; i < m.buckets.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const size_t before = m.kernels.specs.size();
    std::string mlirText;
    const mlir::kime::PipelineOptions pipeline{o.pruneRows, o.cpuPrecision, o.fusion};
    m.plans.push_back(lowerBucket(ctx, g, m.buckets[i], ropeRows, weights, m.kernels, pipeline,
                                  o.emit == Emit::Mlir ? &mlirText : nullptr));
    m.mlir.push_back(std::move(mlirText));
    log << "[" << i + 1 << "/" << m.buckets.size() << "] bucket " << describe(m.buckets[i]) << ": "
        << m.plans.back().steps.size() << " kernel calls, " << m.kernels.specs.size() - before << " new kernels, arena "
        << m.plans.back().arena << " bytes, " << std::fixed << std::setprecision(2) << seconds(t0) << " s"
        << std::defaultfloat << "\n";
  }
  for (size_t i = 0; i < m.kernels.specs.size(); ++i) m.names.push_back(m.kernels.name(int64_t(i)));
  return m;
}

// Stage 2, with --emit: the text of the stage asked for, instead of an artifact.
void emitText(const CompileOptions& o, const LoweredModel& m, const WeightPacker& weights, std::ostream& out) {
  const std::vector<KernelSpec>& specs = m.kernels.specs;
  const std::vector<std::string> targets = o.targets.empty() ? defaultCpuTargets() : o.targets;
  switch (o.emit) {
    case Emit::Mlir:
      for (size_t i = 0; i < m.buckets.size(); ++i) out << "// bucket " << describe(m.buckets[i]) << "\n" << m.mlir[i];
      return;
    case Emit::Plan:
      for (const BucketPlan& p : m.plans) out << planText(p, m.kernels, weights);
      for (const auto& st : m.stages)
        out << "stage " << st[key::name].get<std::string>() << ": buckets " << st[key::buckets].dump() << "\n";
      return;
    case Emit::Cuda:
      out << cuda::moduleSource(specs, m.names, cuda::parseMath(o.cudaMath.empty() ? "tf32" : o.cudaMath.front()));
      return;
    case Emit::Schedule:  // every target asked for (the x86 ones by default)
      for (const std::string& t : targets)
        for (size_t i = 0; i < specs.size(); ++i)
          out << "// kernel " << m.names[i] << " for " << t << ": " << specs[i].describe() << "\n"
              << cpu::describeSchedule(specs[i], cpu::isaOf(t)) << "\n";
      return;
    case Emit::Halide:
    case Emit::Asm:  // the first target's
      for (size_t i = 0; i < specs.size(); ++i)
        out << "// kernel " << m.names[i] << " for " << targets.front() << ": " << specs[i].describe() << "\n"
            << (o.emit == Emit::Halide ? cpu::loweredKernel(specs[i], m.names[i], targets.front())
                                       : cpu::kernelAssembly(specs[i], m.names[i], targets.front()));
      return;
    case Emit::None:
      return;
  }
}

// The gathers a batch may index past their table, for the runtime's batch check.
OJson gatherLimitsJson(const Graph& g) {
  OJson out = OJson::array();
  for (const GatherLimit& l : gatherLimits(g))
    out.push_back({{key::index, kime_plan_input_names[l.index]},
                   {key::rows, l.rows},
                   {key::node, l.where},
                   {key::table, l.table}});
  return out;
}

// Stage 3: the manifest (plan.h's names throughout).
Section manifestSection(const CompileOptions& o, const Graph& g, const LoweredModel& m, const WeightPacker& weights) {
  OJson weightsJson = OJson::array();
  for (const PackedWeight& w : weights.weights())
    weightsJson.push_back({{key::name, w.name},
                           {key::layout, w.layout.name()},
                           {key::shape, w.shape},
                           {key::offset, w.offset},
                           {key::dtype, kime_dtype_names[w.dtype]}});
  OJson kernelsJson = OJson::array();
  for (size_t i = 0; i < m.kernels.specs.size(); ++i) {
    OJson slots = OJson::array();
    for (const kime_arg_slot& a : argSlots(m.kernels.specs[i])) slots.push_back(a.name);
    kernelsJson.push_back({{key::name, m.names[i]},
                           {key::kind, className(m.kernels.specs[i].kind)},
                           {key::slots, slots},
                           {key::spec, m.kernels.specs[i].describe()}});
  }
  OJson bucketsJson = OJson::array();
  for (const BucketPlan& p : m.plans) bucketsJson.push_back(bucketJson(p, m.kernels, o.cudaMath));
  OJson manifest = {
      {key::format, KIME_FORMAT_VERSION},
      {key::model, g.name},
      {key::vocab, g.vocab},
      {key::types, g.types},
      {key::maxSeqLen, learnedPositions(g)},
      {key::gatherLimits, gatherLimitsJson(g)},
      {key::signature,
       {{key::inputs, {"ids [T] u32", "cu [S+1] u32", "markers [M] u32", "mcu [S+1] u32", "qtype [S] u8"}},
        {key::outputs, {"logits [M] f32", "act [S, 2] f32"}}}},
      {key::weights, weightsJson},
      {key::kernels, kernelsJson},
      {key::code, {{key::cpu, o.targets}, {key::ptx, o.cudaArchs}, {key::cudaMath, o.cudaMath}}},
      {key::buckets, bucketsJson},
      {key::stages, m.stages}};
  return {KIME_SECTION_MANIFEST, manifest.dump(1)};
}

// Stage 4: the code sections, a shared object per CPU target and PTX per CUDA math and arch
// (each already assembled by ptxas; the runtime's CUDA backend loads the one it is asked for).
void codegen(const CompileOptions& o, const LoweredModel& m, KernelCache* cache, std::vector<Section>& sections,
             std::ostream& log) {
  auto t0 = std::chrono::steady_clock::now();
  const cpu::SharedObjects cpuCode = cpu::compileSharedObjects(m.kernels.specs, m.names, o.targets, o.jobs, cache);
  for (size_t t = 0; t < o.targets.size(); ++t) {
    sections.push_back({KIME_SECTION_CPU_CODE + o.targets[t], cpuCode.bytes[t]});
    log << "codegen " << o.targets[t] << ": " << m.names.size() << " kernels, " << sections.back().bytes.size()
        << " bytes\n";
  }
  if (!o.targets.empty())
    log << "codegen cpu: " << cpuCode.compiled << " objects compiled, " << cpuCode.cached << " from the cache, "
        << std::fixed << std::setprecision(2) << seconds(t0) << " s" << std::defaultfloat << "\n";
  std::vector<cuda::PtxJob> ptx;
  for (const std::string& math : o.cudaArchs.empty() ? std::vector<std::string>{} : o.cudaMath)
    for (const std::string& arch : o.cudaArchs) ptx.push_back({arch, math, {}});
  t0 = std::chrono::steady_clock::now();
  const cuda::PtxCounts counts = cuda::compilePtx(ptx, m.kernels.specs, m.names, o.jobs, cache);
  for (const cuda::PtxJob& p : ptx) {
    sections.push_back({KIME_SECTION_PTX_CODE + p.math + "." + p.arch, p.ptx});
    log << "codegen " << p.math << " " << p.arch << ": " << m.names.size() << " kernels, " << p.ptx.size()
        << " bytes of PTX (ptxas ok)\n";
  }
  if (!ptx.empty())
    log << "codegen ptx: " << counts.compiled << " kernels compiled, " << counts.cached << " from the cache, "
        << std::fixed << std::setprecision(2) << seconds(t0) << " s" << std::defaultfloat << "\n";
}

// The kernel cache of a compile with `o`, or none (--no-cache, or no directory to name).
std::unique_ptr<KernelCache> openCache(const CompileOptions& o, std::ostream& log) {
  if (!o.cache || o.emit != Emit::None) return nullptr;
  std::unique_ptr<KernelCache> cache = o.cacheDir.empty() ? KernelCache::openDefault() : KernelCache::open(o.cacheDir);
  if (!cache) log << "note: no kernel cache (set KIME_CACHE_DIR, or HOME)\n";
  return cache;
}

// What decides the reference's outputs for the self-test: the compiler, the Graph, the weights.
ReferenceCache referenceCache(const CompileOptions& o, const Checkpoint& ck, KernelCache* cache) {
  if (!cache) return {};
  return {cache, ContentHash().add(compilerIdentity()).add(json::readFile(o.graph)).add(ck.bytes()).hex()};
}

// Once the artifact is written: the cache within its bound, and what was wrong with it said.
void closeCache(KernelCache* cache, std::ostream& log) {
  if (!cache) return;
  if (cache->damaged()) log << "cache: " << cache->damaged() << " damaged entries removed and made again\n";
  if (cache->writeFailures()) log << "cache: " << cache->writeFailures() << " entries could not be written\n";
  cache->trim();
}

struct TimedSection {
  Section section;
  double seconds;
};

// The self-test's section, made on its own thread (the reference in a child process) while this one
// lowers and compiles: it reads only the Graph, the checkpoint and the buckets, which nothing
// changes meanwhile. An error comes out of the future's get().
std::future<TimedSection> startSelftest(const CompileOptions& o, const Graph& g, const Checkpoint& ck,
                                        const std::vector<Stage>& stages, KernelCache* cache) {
  return std::async(std::launch::async, [&o, &g, &ck, &stages, cache] {
    auto t0 = std::chrono::steady_clock::now();
    Section s = selftestSection(g, ck, stages, o.selftest, cpuTolerance(o), referenceCache(o, ck, cache));
    return TimedSection{std::move(s), seconds(t0)};
  });
}

// --selftest-from: a framework's outputs as the self-test, checked against the reference first (a
// Graph whose reference misses them would make an artifact that fails its own self-test).
std::optional<Section> expectedSelftest(const CompileOptions& o, const Graph& g, const Checkpoint& ck,
                                        const std::vector<Stage>& stages, std::ostream& log) {
  if (o.selftestFrom.empty()) return std::nullopt;
  if (o.selftest) throw CompileError("give --selftest N or --selftest-from FILE, not both");
  const std::vector<ExpectedCase> cases = readExpectedOutputs(o.selftestFrom);
  const ExpectedDifference d = compareWithReference(g, ck, cases);
  if (d.overBy > 1)
    throw CompileError(o.selftestFrom + ": kime's reference misses these outputs (" + d.worst + ", past " +
                       describe(kF32Tolerance) + ")");
  log << "selftest: " << cases.size() << " cases of " << o.selftestFrom << ", the reference within " << d.maxAbs
      << " of them\n";
  return expectedSelftestSection(cases, stages, cpuTolerance(o));
}

// Stage 5: the artifact written; with --verify checked under a temporary name first, and renamed
// into place only once it matches the reference.
void writeChecked(const CompileOptions& o, const std::vector<Section>& sections, const Graph& g, const Checkpoint& ck,
                  const std::vector<Stage>& stages, std::ostream& log) {
  if (!o.verify) return writeArtifact(o.output, sections);
  const std::string tmp = o.output + ".verify.tmp";
  writeArtifact(tmp, sections);
  try {
    verifyArtifact(tmp, g, ck, stages, cpuTolerance(o), log);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), o.output.c_str()) != 0)
    throw CompileError(o.output + ": cannot write the verified artifact");
}

}  // namespace

Emit parseEmit(const std::string& name) {
  static const std::pair<const char*, Emit> names[] = {{"mlir", Emit::Mlir},         {"plan", Emit::Plan},
                                                       {"schedule", Emit::Schedule}, {"halide", Emit::Halide},
                                                       {"asm", Emit::Asm},           {"cuda", Emit::Cuda}};
  if (name.empty()) return Emit::None;
  for (const auto& [n, e] : names)
    if (name == n) return e;
  throw CompileError("--emit must be mlir, plan, schedule, halide, asm or cuda, not \"" + name + "\"");
}

void applyDefaultTargets(CompileOptions& o, bool defaultArchs) {
  if (o.targets.empty()) o.targets = precisionTargets(o.cpuPrecision).byDefault;
  if (defaultArchs && o.cpuPrecision == "f32" && cuda::canMakePtx()) o.cudaArchs = {"sm_80", "sm_90"};
}

void compileModel(const CompileOptions& asked, std::ostream& out, std::ostream& log) {
  auto start = std::chrono::steady_clock::now();
  CompileOptions given = asked;
  if (asked.update && asked.refit.empty() && asked.emit == Emit::None && canUpdateByRefit(asked, log))
    given.refit = asked.output;
  std::optional<SecretKey> signer;
  if (!given.signKey.empty() && given.emit == Emit::None)
    signer = readSecretKey(given.signKey);  // before the long part
  std::optional<RefitInputs> refit;
  if (!given.refit.empty()) {
    if (given.emit != Emit::None) throw CompileError("--refit makes an artifact, not --emit text");
    refit = readRefitInputs(given);
    if (given.dropSelftest)
      log << "warning: --drop-selftest: " << given.output
          << " gets no self-test section (kime-run --selftest cannot check it)\n";
  }
  const CompileOptions& o = refit ? refit->options : given;
  Graph g = readGraphFile(o.graph);
  auto ck = Checkpoint::open(o.weights);
  ck->checkAgainst(g);
  if (refit) checkNoExtraTensors(*ck, g);
  std::vector<Stage> stages = readBucketsFile(o.buckets);
  for (const std::string& t : o.targets) cpu::halideTarget(t);  // refuses unknown ones early
  checkPrecision(o);
  if (o.selftest) checkSelftestCount(stages, o.selftest);
  for (const std::string& m : o.cudaMath) cuda::parseMath(m);
  if (o.emit == Emit::None)
    for (const std::string& arch : o.cudaArchs) cuda::checkArch(arch);  // before the long CPU part
  if (o.emit == Emit::None && o.targets.empty()) throw CompileError("no --target given");
  if (o.emit == Emit::None && o.output.empty()) throw CompileError("no output file given (-o)");

  std::optional<Section> expected = o.emit == Emit::None ? expectedSelftest(o, g, *ck, stages, log) : std::nullopt;
  const std::unique_ptr<KernelCache> cache = openCache(given, log);
  std::future<TimedSection> selftest;
  if (o.selftest && o.emit == Emit::None) selftest = startSelftest(o, g, *ck, stages, cache.get());
  WeightPacker weights(*ck);
  const LoweredModel m = lowerModel(o, g, stages, weights, log);
  if (o.emit != Emit::None) return emitText(o, m, weights, out);
  std::vector<Section> sections = {manifestSection(o, g, m, weights),
                                   {KIME_SECTION_WEIGHTS_CPU, weights.sectionBytes()}};
  if (refit) {
    // The same Graph, buckets and options make the same plans, unless the compiler changed them.
    if (sections.front().bytes != refit->manifest)
      throw CompileError(given.refit + ": its plans are not what this compiler makes of its Graph (" +
                         compilerVersion() + " lowers it differently), so its code cannot be kept: compile it in full");
    sections.insert(sections.end(), refit->code.begin(), refit->code.end());
    log << "refit: " << refit->code.size() << " code sections of " << given.refit << " kept\n";
  } else {
    codegen(o, m, cache.get(), sections, log);
  }
  if (selftest.valid()) {
    TimedSection done = selftest.get();
    sections.push_back(std::move(done.section));
    log << "selftest: " << o.selftest << " batches and their reference outputs, " << std::fixed << std::setprecision(2)
        << done.seconds << " s (beside the compile)" << std::defaultfloat << "\n";
  }
  if (expected) sections.push_back(std::move(*expected));
  sections.push_back(sourceSection(o));
  if (signer) {
    signSections(sections, *signer);
    log << "signed by key " << keyId(signer->publicKey) << "\n";
  }
  writeChecked(o, sections, g, *ck, stages, log);
  closeCache(cache.get(), log);
  log << "wrote " << o.output << " in " << std::fixed << std::setprecision(2) << seconds(start) << " s"
      << std::defaultfloat << "\n";
}

}  // namespace kime
