// A compile from an ONNX model (kime-compile MODEL.onnx, kime.compiler.compile("model.onnx")):
// imported into a private temporary folder as the Graph and checkpoint a compile reads, removed
// with this object, so nothing of the import is left beside the user's files.
#ifndef KIME_PIPELINE_ONNXINPUT_H
#define KIME_PIPELINE_ONNXINPUT_H

#include <memory>
#include <string>

#include "import/onnx/OnnxImport.h"
#include "support/Process.h"

namespace kime {

// Whether `path` names an ONNX model: MODEL.onnx, or ONNX's text syntax (.onnxtxt).
bool isOnnxPath(const std::string& path);

class ImportedOnnx {
 public:
  ImportedOnnx(const std::string& path, const OnnxImportOptions& options);
  const std::string& graph() const { return graph_; }
  const std::string& weights() const { return weights_; }
  const OnnxImport& model() const { return model_; }

 private:
  OnnxImport model_;
  TempDir dir_;
  std::string graph_, weights_;
};

// Writes an import's Graph to `graphPath` and its checkpoint to `weightsPath` (each atomically).
void writeImport(const OnnxImport& model, const std::string& graphPath, const std::string& weightsPath);

}  // namespace kime

#endif  // KIME_PIPELINE_ONNXINPUT_H
