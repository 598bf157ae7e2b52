#include "Compile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <iomanip>
#include <optional>

#include "LoweredModel.h"
#include "Manifest.h"
#include "PlanText.h"
#include "Precision.h"
#include "Refit.h"
#include "Selftest.h"
#include "Verify.h"
#include "artifact/ArtifactWriter.h"
#include "artifact/Signing.h"
#include "buckets/Buckets.h"
#include "cache/ContentHash.h"
#include "cache/KernelCache.h"
#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/Schedule.h"
#include "codegen/cuda/CudaKernels.h"
#include "import/GraphImport.h"
#include "kime/runtime.h"
#include "kime/tooling/BatchGen.h"
#include "mlir/IR/MLIRContext.h"
#include "reference/Reference.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Stage 1: every bucket through the passes and read off as a plan; progress to `log`.
LoweredModel lowerModel(const CompileOptions& o, const Graph& g, const std::vector<Stage>& stages,
                        WeightPacker& weights, std::ostream& log) {
  LoweredModel m;
  m.kernels.fewRowsDiffers = cpu::fewRowsChangesSchedule;
  int64_t ropeRows = 1;
  for (const Stage& st : stages) {
    StageBuckets ids{st.name, {}};
    for (const Bucket& b : st.buckets) {
      auto it = std::find(m.buckets.begin(), m.buckets.end(), b);
      ids.buckets.push_back(uint32_t(it - m.buckets.begin()));
      if (it == m.buckets.end()) m.buckets.push_back(b);
      ropeRows = std::max<int64_t>(ropeRows, b.tokens);
    }
    m.stages.push_back(std::move(ids));
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
void emitText(const CompileOptions& o, const Graph& g, const LoweredModel& m, const WeightPacker& weights,
              std::ostream& out) {
  const std::vector<KernelSpec>& specs = m.kernels.specs;
  const std::vector<std::string> targets = o.targets.empty() ? defaultCpuTargets() : o.targets;
  switch (o.emit) {
    case Emit::Mlir:
      for (size_t i = 0; i < m.buckets.size(); ++i) out << "// bucket " << describe(m.buckets[i]) << "\n" << m.mlir[i];
      return;
    case Emit::Plan:
      for (const BucketPlan& p : m.plans) out << planText(p, m.kernels, weights, g.outputs);
      for (const StageBuckets& st : m.stages) {
        out << "stage " << st.name << ": buckets [";
        for (size_t i = 0; i < st.buckets.size(); ++i) out << (i ? "," : "") << st.buckets[i];
        out << "]\n";
      }
      return;
    case Emit::Manifest:
      out << manifestJson(manifestSection(o, g, m, weights).bytes);
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
  return expectedSelftestSection(cases, outputDescs(g), stages, cpuTolerance(o));
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
  static const std::pair<const char*, Emit> names[] = {
      {"mlir", Emit::Mlir},     {"plan", Emit::Plan}, {"manifest", Emit::Manifest}, {"schedule", Emit::Schedule},
      {"halide", Emit::Halide}, {"asm", Emit::Asm},   {"cuda", Emit::Cuda}};
  if (name.empty()) return Emit::None;
  for (const auto& [n, e] : names)
    if (name == n) return e;
  throw CompileError("--emit must be mlir, plan, manifest, schedule, halide, asm or cuda, not \"" + name + "\"");
}

void applyDefaultTargets(CompileOptions& o, bool defaultArchs) {
  if (o.targets.empty()) o.targets = precisionTargets(o.cpuPrecision).byDefault;
  if (defaultArchs && o.cpuPrecision == Arithmetic::f32 && cuda::canMakePtx()) o.cudaArchs = {"sm_80", "sm_90"};
}

namespace {

// The options, before anything long: known targets, precisions and CUDA maths and archs, a
// self-test that the buckets can hold, an output.
void checkOptions(const CompileOptions& o, const std::vector<Stage>& stages) {
  for (const std::string& t : o.targets) cpu::halideTarget(t);  // refuses unknown ones early
  checkPrecision(o);
  if (o.selftest) checkSelftestCount(stages, o.selftest);
  for (const std::string& m : o.cudaMath) cuda::parseMath(m);
  if (o.emit == Emit::None)
    for (const std::string& arch : o.cudaArchs) cuda::checkArch(arch);  // before the long CPU part
  if (o.emit == Emit::None && o.targets.empty()) throw CompileError("no --target given");
  if (o.emit == Emit::None && o.output.empty()) throw CompileError("no output file given (-o)");
}

}  // namespace

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
  checkOptions(o, stages);

  std::optional<Section> expected = o.emit == Emit::None ? expectedSelftest(o, g, *ck, stages, log) : std::nullopt;
  const std::unique_ptr<KernelCache> cache = openCache(given, log);
  std::future<TimedSection> selftest;
  if (o.selftest && o.emit == Emit::None) selftest = startSelftest(o, g, *ck, stages, cache.get());
  WeightPacker weights(*ck);
  const LoweredModel m = lowerModel(o, g, stages, weights, log);
  if (o.emit != Emit::None) return emitText(o, g, m, weights, out);
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
