#include "CompiledModel.h"

#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "checkpoint/Safetensors.h"
#include "codegen/cuda/CudaKernels.h"
#include "graph/ModelConfig.h"
#include "pipeline/Compile.h"
#include "support/JsonFields.h"

namespace kime::test {

namespace fs = std::filesystem;

const CompiledModel& smallModel() {
  static std::unique_ptr<CompiledModel> cached;
  if (cached) return *cached;
  auto m = std::make_unique<CompiledModel>();
  const std::string src = std::string(KIME_TEST_DATA) + "/../../examples/small";
  const fs::path dir = fs::path(KIME_BINARY_DIR) / "test-artifacts";
  fs::create_directories(dir);
  const std::string graphPath = (dir / "small.json").string(), weightsPath = (dir / "small.safetensors").string();
  m->artifact = (dir / "small.kime").string();

  ModelConfig cfg = parseModelConfig(json::readFile(src + "/config.json"), src + "/config.json");
  m->graph = buildEncoderGraph(cfg, shapes::DType::F32, "small");
  auto values = randomWeights(m->graph, 1);
  bool stale = !fs::exists(m->artifact) || fs::last_write_time(m->artifact) < fs::last_write_time("/proc/self/exe");
  if (stale) {
    std::vector<TensorData> tensors;
    for (const WeightDecl& w : m->graph.weights) tensors.push_back({w.name, w.dtype, w.shape, values.at(w.name)});
    writeSafetensors(weightsPath, tensors, {});
    json::writeFileAtomic(graphPath, writeGraphJson(m->graph));
    CompileOptions o;
    o.graph = graphPath, o.weights = weightsPath, o.buckets = src + "/buckets.json";
    o.output = m->artifact, o.targets = {"x86-64-avx2"}, o.jobs = 2;
    if (cuda::canMakePtx()) o.cudaArchs = {"sm_90"};  // for the GPU tests (CudaBackendTest)
    std::ostringstream out, log;
    compileModel(o, out, log);
  }
  for (auto& [name, v] : values) m->weights[name] = std::vector<double>(v.begin(), v.end());
  auto model = Model::open(m->artifact);
  if (!model) throw std::runtime_error(model.error().text());
  m->model = *model;
  cached = std::move(m);
  return *cached;
}

}  // namespace kime::test
