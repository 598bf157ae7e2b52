#include "TestData.h"

#include <filesystem>

#include "checkpoint/Safetensors.h"
#include "support/JsonFields.h"

namespace kime::test {

std::string dataPath(const std::string& rel) { return std::string(KIME_TEST_DATA) + "/" + rel; }

std::vector<std::string> goldenCases() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dataPath("golden")))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

Graph goldenGraph(const std::string& name) {
  std::string dir = dataPath("golden/" + name);
  ModelConfig cfg = parseModelConfig(json::readFile(dir + "/config.json"), dir + "/config.json");
  auto ck = Checkpoint::open(dir + "/model.safetensors");
  return buildEncoderGraph(cfg, ck->find("embed.tok")->dtype, name);
}

Expected readExpected(const std::string& path) {
  json::Json j = json::parse(json::readFile(path), path);
  Expected e;
  e.values = {j.at("logits").get<std::vector<double>>(), {}};
  for (const auto& a : j.at("act")) e[1].push_back(a.at(0).get<double>()), e[1].push_back(a.at(1).get<double>());
  return e;
}

}  // namespace kime::test
