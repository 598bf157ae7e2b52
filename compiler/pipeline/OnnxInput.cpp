#include "OnnxInput.h"

#include "support/JsonFields.h"

namespace kime {

bool isOnnxPath(const std::string& path) {
  auto endsWith = [&](const std::string& s) {
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return endsWith(".onnx") || endsWith(".onnxtxt");
}

ImportedOnnx::ImportedOnnx(const std::string& path, const OnnxImportOptions& options)
    : model_(importOnnxFile(path, options)) {
  graph_ = (dir_.path() / "graph.json").string();
  weights_ = (dir_.path() / "model.safetensors").string();
  writeImport(model_, graph_, weights_);
}

void writeImport(const OnnxImport& model, const std::string& graphPath, const std::string& weightsPath) {
  writeSafetensors(weightsPath, model.weights, {{"made_by", "kime-import"}});
  json::writeFileAtomic(graphPath, writeGraphJson(model.graph));
}

}  // namespace kime
