// An ONNX model read from a file (binary, or ONNX's text syntax), its external data loaded and
// ONNX's own checker run, with messages that name the file.
#ifndef KIME_IMPORT_ONNX_ONNXFILE_H
#define KIME_IMPORT_ONNX_ONNXFILE_H

#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"

namespace kime::onnx_import {

// Reads `path`: a ModelProto, or ONNX's text syntax where the file ends in ".onnxtxt" (the lit
// tests' form). Tensors stored as external data are read from files beside it (paths inside its
// folder only) and held inline. Throws CompileError.
onnx::ModelProto readOnnxFile(const std::string& path);

// The same from bytes in memory; `source` names them in messages, `dir` is where external data
// would be (empty: none is read, and a model that has some is refused).
onnx::ModelProto parseOnnx(std::string_view bytes, const std::string& source, const std::string& dir, bool text);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_ONNXFILE_H
