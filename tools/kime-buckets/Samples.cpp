#include "Samples.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "kime/tooling/BatchFile.h"
#include "support/JsonFields.h"

namespace kime::tools {

namespace {

uint32_t count(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_number_unsigned() ||
      j.at(key).get<uint64_t>() > std::numeric_limits<uint32_t>::max())
    throw std::runtime_error(where + ": \"" + key + "\" must be a count (a whole number from 0 to 2^32 - 1)");
  return j.at(key).get<uint32_t>();
}

}  // namespace

std::vector<SizeSample> readSamples(const std::string& path) {
  const std::string text = json::readFile(path);
  auto whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded() && whole.is_object() && whole.contains("ids")) {
    const tooling::OwnedBatch b = tooling::parseBatchJson(text, path);
    const Batch v = b.view();
    if (auto err = checkBatch(v, std::numeric_limits<size_t>::max(), 256))
      throw std::runtime_error(path + ": " + err->text());
    return {{uint32_t(v.tokens()), uint32_t(v.seqs()), uint32_t(v.markerCount())}};
  }
  std::vector<SizeSample> out;
  std::istringstream lines(text);
  std::string line;
  for (size_t n = 1; std::getline(lines, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw std::runtime_error(where + ": not a JSON object {\"tokens\", \"seqs\", \"markers\"}");
    out.push_back({count(j, "tokens", where), count(j, "seqs", where), count(j, "markers", where)});
  }
  if (out.empty()) throw std::runtime_error(path + ": no samples (neither a batch file nor JSON lines)");
  return out;
}

}  // namespace kime::tools
