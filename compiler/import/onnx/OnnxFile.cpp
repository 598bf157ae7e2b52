#include "OnnxFile.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "support/Diagnostic.h"
#include "support/MappedFile.h"

namespace kime::onnx_import {

namespace fs = std::filesystem;

namespace {

// The bytes of one external tensor: its "location" (relative to the model's folder, never out of
// it), "offset" and "length" entries.
std::string externalBytes(const onnx::TensorProto& t, const std::string& source, const std::string& dir) {
  const std::string where = source + ": initializer \"" + t.name() + "\"";
  if (dir.empty()) throw CompileError(where + ": its data is external, and no folder was given to read it from");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& e : t.external_data()) {
    try {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = std::stoll(e.value());
      if (e.key() == "length") length = std::stoll(e.value());
    } catch (const std::exception&) {
      throw CompileError(where + ": external data entry \"" + e.key() + "\" is not a number: \"" + e.value() + "\"");
    }
  }
  const fs::path base = fs::weakly_canonical(fs::path(dir));
  const fs::path file = fs::weakly_canonical(base / location);
  const std::string rel = file.lexically_relative(base).string();
  if (location.empty() || fs::path(location).is_absolute() || rel.empty() || rel.rfind("..", 0) == 0)
    throw CompileError(where + ": external data location \"" + location + "\" is not a file in the model's folder");
  MappedFile mapped(file.string());
  const std::string_view all = mapped.bytes();
  if (length < 0) length = int64_t(all.size()) - offset;
  if (offset < 0 || length < 0 || uint64_t(offset) + uint64_t(length) > all.size())
    throw CompileError(where + ": external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
                       ") is past the end of \"" + location + "\" (" + std::to_string(all.size()) + " bytes)");
  return std::string(all.substr(size_t(offset), size_t(length)));
}

// Every external tensor's bytes inline, so that the rest of the importer (and the checker) sees
// one self-contained model.
void inlineExternalData(onnx::ModelProto& m, const std::string& source, const std::string& dir) {
  for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    t.set_raw_data(externalBytes(t, source, dir));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace

onnx::ModelProto parseOnnx(std::string_view bytes, const std::string& source, const std::string& dir, bool text) {
  onnx::ModelProto m;
  if (text) {
    const std::string copy(bytes);
    onnx::Common::Status st;
    try {
      st = onnx::OnnxParser::Parse(m, copy.c_str());
    } catch (const std::exception& e) {  // the parser reads some numbers with std::stof
      throw CompileError(source + ": not ONNX text: " + e.what());
    }
    if (!st.IsOK()) throw CompileError(source + ": not ONNX text: " + st.ErrorMessage());
  } else if (bytes.size() > size_t(INT32_MAX) || !m.ParseFromArray(bytes.data(), int(bytes.size()))) {
    throw CompileError(source + ": not an ONNX model (the bytes do not parse as a ModelProto)");
  }
  if (!m.has_graph()) throw CompileError(source + ": the ONNX model has no graph");
  inlineExternalData(m, source, dir);
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    throw CompileError(source + ": ONNX's checker refuses the model: " + e.what());
  }
  return m;
}

onnx::ModelProto readOnnxFile(const std::string& path) {
  MappedFile file(path);
  const bool text = path.size() > 8 && path.compare(path.size() - 8, 8, ".onnxtxt") == 0;
  const std::string dir = fs::path(path).parent_path().string();
  return parseOnnx(file.bytes(), path, dir.empty() ? "." : dir, text);
}

}  // namespace kime::onnx_import
