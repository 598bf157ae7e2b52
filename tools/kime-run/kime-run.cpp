// kime-run: runs batches on a compiled artifact (outputs as JSON), describes an artifact
// (--inspect), or measures it (--bench). With --reference, evaluates a Graph in f64 instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "CheckInvariance.h"
#include "RunBatches.h"
#include "common/AllocCounter.h"
#include "common/Args.h"
#include "kime/runtime.h"
#include "kime/signature.h"
#include "kime/tooling/BatchFile.h"
#include "kime/tooling/BatchGen.h"

namespace kime::tools {
int runReference(const Args& args);  // kime-run-reference.cpp; absent in runtime-only builds
}

namespace {

using kime::tools::Args;

const char* kUsage =
    "usage: kime-run MODEL.kime BATCH.json... [--stage S] [--threads N] [--device cpu|cuda [--cuda-math tf32|f32]]\n"
    "                                   run each; its outputs as a JSON line\n"
    "       kime-run MODEL.kime BATCH.json... --stats [--json]\n"
    "                                   run them; then per bucket the batches and their fill, and the sizes no\n"
    "                                   bucket held (--json: each batch's size as a JSON line for kime-buckets,\n"
    "                                   the table on stderr)\n"
    "       (with any of them: --cpu-target NAME   that CPU code of the artifact, e.g. x86-64-avx2, not the best;\n"
    "                          --trust KEY.pub     load it only if signed by this key (repeat for more keys;\n"
    "                                              default: the files in $KIME_TRUSTED_KEYS, colon-separated))\n"
    "       kime-run MODEL.kime --inspect                             stages, buckets, kernels, sections\n"
    "       kime-run MODEL.kime --bench [--stage S] [--threads N] [--device cpu|cuda] [--runs N] [--profile]\n"
    "                                   per bucket: p50/p99 latency, tokens/s, GFLOP/s, warm allocations;\n"
    "                                   --profile adds the time per kernel class, --profile-kernels per kernel (cpu)\n"
    "       kime-run MODEL.kime --selftest [--threads N] [--device cpu|cuda [--cuda-math tf32|f32]]\n"
    "                                   the artifact's self-test (kime-compile --selftest N) on this machine:\n"
    "                                   per bucket the largest difference from the reference; exit 1 on a failure\n"
    "       kime-run MODEL.kime --invariance [--trials N] [--seed S] [--device cpu|cuda [--cuda-math tf32|f32]]\n"
    "                                   per stage, random sequences alone and among random neighbours in each bucket\n"
    "                                   (cpu: with 1 and 2 threads): the same output bytes, or exit 1\n"
    "       kime-run --reference GRAPH.json MODEL.safetensors BATCH.json   f64 reference outputs\n";

// The public keys to trust: --trust's files, or else those of $KIME_TRUSTED_KEYS.
std::vector<std::string> trustedKeys(const Args& args) {
  std::vector<std::string> files = args.all("--trust");
  const char* env = std::getenv("KIME_TRUSTED_KEYS");
  if (files.empty() && env && *env) {
    std::string list = env;
    for (size_t at = 0; at <= list.size();) {
      const size_t end = std::min(list.find(':', at), list.size());
      if (end > at) files.push_back(list.substr(at, end - at));
      at = end + 1;
    }
  }
  std::vector<std::string> keys;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw std::runtime_error("trusted key " + f + ": cannot read it");
    kime::PublicKey key;
    if (auto why = kime::parsePublicKey(text.str(), key)) throw std::runtime_error("trusted key " + f + ": " + *why);
    keys.push_back(text.str());
  }
  return keys;
}

std::shared_ptr<kime::Model> openModel(const std::string& path, const Args& args) {
  kime::ModelOptions o;
  o.cpuTarget = args.get("--cpu-target", "");
  o.trustedKeys = trustedKeys(args);
  auto m = kime::Model::open(path, o);
  if (!m) throw std::runtime_error(m.error().text());
  return *m;
}

kime::ExecutorOptions executorOptions(const Args& args) {
  kime::ExecutorOptions o;
  o.threads = args.has("--threads") ? std::stoul(args.get("--threads")) : 0;
  o.device = args.get("--device", "cpu");
  o.cudaMath = args.get("--cuda-math", "tf32");
  return o;
}

std::unique_ptr<kime::Executor> executor(std::shared_ptr<kime::Model> m, const Args& args) {
  auto e = kime::Executor::create(m, args.get("--stage", m->defaultStage()), executorOptions(args));
  if (!e) throw std::runtime_error(e.error().text());
  return std::move(*e);
}

int selftest(const Args& args) {
  auto report = kime::runSelftest(openModel(args.positional[0], args), executorOptions(args));
  if (!report) throw std::runtime_error(report.error().text());
  std::cout << report->text();
  return report->passed() ? 0 : 1;
}

int runBatch(const Args& args) {
  auto model = openModel(args.positional[0], args);
  auto exec = executor(model, args);
  const std::vector<std::string> files(args.positional.begin() + 1, args.positional.end());
  return kime::tools::runBatches(*model, *exec, files, args.has("--stats"), args.has("--json"));
}

int bench(const Args& args) {
  auto model = openModel(args.positional[0], args);
  auto exec = executor(model, args);
  const size_t runs = args.has("--runs") ? std::stoul(args.get("--runs")) : 30;
  std::printf("# %s, %s; batches fill each bucket: S sequences of L tokens\n", model->name().c_str(),
              exec->deviceDescription().c_str());
  std::printf("%-28s %9s %9s %9s %11s %9s %7s\n", "bucket (tokens/seqs/markers)", "S x L", "p50 ms", "p99 ms",
              "tokens/s", "GFLOP/s", "allocs");
  std::vector<kime::Bucket> buckets = model->buckets(exec->stage());
  for (size_t i = 0; i < buckets.size(); ++i) {
    const kime::Bucket& b = buckets[i];
    size_t seqs = b.seqs, len = std::max<size_t>(1, b.tokens / b.seqs);
    auto batch = kime::tooling::uniformBatch(seqs, len, b.markers / seqs, model->vocab(), model->types(), 1 + i,
                                             model->paddingId());
    kime::Outputs out;
    for (int w = 0; w < 3; ++w)
      if (auto err = exec->run(batch.view(), out)) throw std::runtime_error(err->text());
    std::vector<double> ms;
    ms.reserve(runs);  // the measurement itself must not allocate while it counts
    exec->setProfiling(args.has("--profile") || args.has("--profile-kernels"));
    uint64_t allocs = kime::tools::allocCount();
    for (size_t r = 0; r < runs; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      if (auto err = exec->run(batch.view(), out)) throw std::runtime_error(err->text());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    allocs = kime::tools::allocCount() - allocs;
    std::sort(ms.begin(), ms.end());
    double p50 = ms[ms.size() / 2], p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
    double flops = exec->flops(batch.view());
    char name[64], shape[32];
    std::snprintf(name, sizeof name, "%u/%u/%u", b.tokens, b.seqs, b.markers);
    std::snprintf(shape, sizeof shape, "%zux%zu", seqs, len);
    std::printf("%-28s %9s %9.3f %9.3f %11.0f %9.1f %7s\n", name, shape, p50, p99, double(seqs * len) / (p50 / 1e3),
                flops / (p50 / 1e3) / 1e9,
                kime::tools::allocCounterAvailable() ? std::to_string(allocs).c_str() : "n/a");
    const bool perKernel = args.has("--profile-kernels");
    if ((args.has("--profile") || perKernel) && exec->caps().name == "cpu") {
      double total = 0;
      for (const auto& [kind, sec] : exec->profile(i, perKernel)) total += sec;
      std::printf(perKernel ? "  time per kernel:" : "  time per kernel class:");
      // Each kernel's (or class's) share, ms a run, and where it runs FLOPs, its GFLOP/s.
      for (const auto& [kind, sec] : exec->profile(i, perKernel)) {
        const double ms = 1e3 * sec / double(runs), f = exec->flops(batch.view(), kind);
        std::printf(" %s %.1f%% (%.3f ms", kind.c_str(), 100 * sec / total, ms);
        if (f > 0 && ms > 0) std::printf(", %.1f GFLOP/s", f / ms / 1e6);
        std::printf(")");
      }
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Args args = Args::parse(
        argc, argv,
        {"--stage", "--threads", "--runs", "--device", "--cuda-math", "--cpu-target", "--trust", "--trials", "--seed"},
        {"--invariance", "--reference", "--inspect", "--bench", "--profile", "--profile-kernels", "--help", "--stats",
         "--json", "--selftest"});
    if (args.has("--help")) {
      std::cout << kUsage;
      return 0;
    }
    if (args.has("--reference")) return kime::tools::runReference(args);
    if (args.has("--inspect") && args.positional.size() == 1) {
      std::cout << openModel(args.positional[0], args)->inspect();
      return 0;
    }
    if (args.has("--bench") && args.positional.size() == 1) return bench(args);
    if (args.has("--selftest") && args.positional.size() == 1) return selftest(args);
    if (args.has("--invariance") && args.positional.size() == 1)
      return kime::tools::checkInvariance(openModel(args.positional[0], args), executorOptions(args),
                                          args.has("--trials") ? std::stoul(args.get("--trials")) : 4,
                                          args.has("--seed") ? std::stoull(args.get("--seed")) : 1);
    if (args.positional.size() >= 2) return runBatch(args);
    std::cerr << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "kime-run: error: " << e.what() << "\n";
    return 1;
  }
}
