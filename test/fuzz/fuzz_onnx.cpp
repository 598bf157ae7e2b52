// ONNX models (ModelProto bytes): parse, ONNX's checker, import. A model kime cannot take must end
// in a CompileError naming the file or the node, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "import/onnx/OnnxImport.h"
#include "support/Diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)kime::importOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
  } catch (const kime::CompileError&) {
  }
  return 0;
}
