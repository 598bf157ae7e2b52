#include "kime/tooling/BatchFile.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kime/tooling/JsonText.h"

namespace kime::tooling {

using Json = nlohmann::json;

template <typename T>
static std::vector<T> readList(const Json& j, const char* key, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(source + ": field \"" + key + "\" is missing");
  if (!it->is_array()) throw std::runtime_error(source + ": field \"" + key + "\" must be an array");
  std::vector<T> out;
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& v = (*it)[i];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      throw std::runtime_error(source + ": " + key + "[" + std::to_string(i) +
                               "] must be a non-negative integer, not " + v.dump());
    uint64_t x = v.get<uint64_t>();
    if (x > std::numeric_limits<T>::max())
      throw std::runtime_error(source + ": " + key + "[" + std::to_string(i) + "] = " + std::to_string(x) +
                               " does not fit " + (sizeof(T) == 1 ? "u8" : "u32"));
    out.push_back(T(x));
  }
  return out;
}

OwnedBatch parseBatchJson(const std::string& text, const std::string& source) {
  const Json j = parseJson(text, source);
  if (!j.is_object()) throw std::runtime_error(source + ": a batch must be a JSON object");
  for (const auto& [k, v] : j.items())
    if (k != "ids" && k != "cu" && k != "markers" && k != "mcu" && k != "qtype" && k != "ttype")
      throw std::runtime_error(source + ": unknown field \"" + k + "\"");
  OwnedBatch b;
  b.ids = readList<uint32_t>(j, "ids", source);
  b.cu = readList<uint32_t>(j, "cu", source);
  b.markers = readList<uint32_t>(j, "markers", source);
  b.mcu = readList<uint32_t>(j, "mcu", source);
  b.qtype = readList<uint8_t>(j, "qtype", source);
  if (j.contains("ttype")) b.ttype = readList<uint8_t>(j, "ttype", source);
  return b;
}

OwnedBatch readBatchFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parseBatchJson(ss.str(), path);
}

namespace {

// Each output by name: a value per row where it is one wide, else a list of its width per row.
template <typename T>
void addOutputs(const std::vector<OutputDesc>& descs, const OutputValues<T>& out, nlohmann::ordered_json& j) {
  for (size_t i = 0; i < descs.size() && i < out.size(); ++i) {
    const size_t w = descs[i].width;
    if (w == 1) {
      j[descs[i].name] = out[i];
      continue;
    }
    Json rows = Json::array();
    for (size_t r = 0; r + w <= out[i].size(); r += w)
      rows.push_back(std::vector<T>(out[i].begin() + long(r), out[i].begin() + long(r + w)));
    j[descs[i].name] = std::move(rows);
  }
}

}  // namespace

std::string runJson(const Bucket& used, const std::vector<OutputDesc>& descs, const Outputs& out) {
  nlohmann::ordered_json j = {{"bucket", {{"tokens", used.tokens}, {"seqs", used.seqs}, {"markers", used.markers}}}};
  addOutputs(descs, out, j);
  return j.dump();
}

std::string outputsJson(const std::vector<OutputDesc>& descs, const OutputValues<double>& out) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  addOutputs(descs, out, j);
  return j.dump();
}

}  // namespace kime::tooling
