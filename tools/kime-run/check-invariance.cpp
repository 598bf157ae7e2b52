#include "CheckInvariance.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "kime/tooling/Invariance.h"

namespace kime::tools {

namespace {

// The executors one stage is checked on: the CPU's with 1 and 2 threads, or the one GPU's.
std::vector<ExecutorOptions> executorsToCheck(const ExecutorOptions& device) {
  if (device.device != "cpu") return {device};
  ExecutorOptions one = device, two = device;
  one.threads = 1, two.threads = 2;
  return {one, two};
}

std::string describe(const ExecutorOptions& o) {
  if (o.device != "cpu") return o.device + " " + o.cudaMath;
  return std::to_string(o.threads) + (o.threads > 1 ? " threads" : " thread");
}

}  // namespace

int checkInvariance(const std::shared_ptr<Model>& model, const ExecutorOptions& device, size_t trials, uint64_t seed) {
  const std::vector<ExecutorOptions> options = executorsToCheck(device);
  const std::string runs = device.device == "cpu" ? "1,2 threads" : device.device + "," + device.cudaMath;
  std::printf("# %s, %s: each sequence alone, then among random neighbours in each bucket\n", model->name().c_str(),
              device.device == "cpu" ? model->cpuTarget().c_str() : device.device.c_str());
  std::printf("%-12s %-12s %9s %6s %8s %8s\n", "stage", "run on", "sequences", "runs", "differ", "refused");
  int status = 0;
  for (const std::string& stage : model->stages()) {
    std::vector<std::unique_ptr<Executor>> execs;
    std::vector<tooling::InvarianceTarget> targets;
    for (const ExecutorOptions& o : options) {
      auto made = Executor::create(model, stage, o);
      if (!made) throw std::runtime_error(made.error().text());
      execs.push_back(std::move(*made));
      targets.push_back({execs.back().get(), model->buckets(stage), stage + ", " + describe(o)});
    }
    tooling::InvarianceOptions o;
    o.outputs = model->outputs();
    o.paddingId = model->paddingId();
    o.vocab = model->vocab(), o.types = model->types(), o.maxLen = model->maxSequenceLength();
    o.trials = trials, o.seed = seed;
    const tooling::InvarianceReport r = tooling::checkBatchInvariance(targets, o);
    std::printf("%-12s %-12s %9zu %6zu %8zu %8zu\n", stage.c_str(), runs.c_str(), r.sequences, r.runs, r.differing,
                r.refused);
    if (!r.failure.empty()) {
      std::fprintf(stderr, "kime-run: %s: %s\n", stage.c_str(), r.failure.c_str());
      status = 1;
    }
  }
  return status;
}

}  // namespace kime::tools
