#include "Buckets.h"

#include "support/JsonFields.h"

namespace kime {

static Bucket parseBucket(const json::Json& j, const std::string& where) {
  json::requireObject(j, where);
  json::onlyKeys(j, {"tokens", "seqs", "markers"}, where);
  Bucket b;
  for (auto [key, slot] :
       {std::pair<const char*, uint32_t*>{"tokens", &b.tokens}, {"seqs", &b.seqs}, {"markers", &b.markers}}) {
    int64_t v = json::intField(j, key, where);
    if (v <= 0) throw CompileError(where + ": " + key + " must be positive, not " + std::to_string(v));
    if (v > (int64_t{1} << 24))
      throw CompileError(where + ": " + key + " " + std::to_string(v) + " is past the limit of 16777216");
    *slot = uint32_t(v);
  }
  return b;
}

std::vector<Stage> parseBuckets(const std::string& text, const std::string& source) {
  json::Json j = json::parse(text, source);
  json::requireObject(j, source);
  json::onlyKeys(j, {"stages"}, source);
  const json::Json& stages = json::field(j, "stages", source);
  json::requireObject(stages, source + ": stages");
  if (stages.empty()) throw CompileError(source + ": stages: no stage is declared");
  std::vector<Stage> out;
  for (const auto& [name, list] : stages.items()) {
    std::string where = source + ": stage \"" + name + "\"";
    if (name.empty()) throw CompileError(source + ": a stage needs a name");
    if (!list.is_array()) throw CompileError(where + ": must be a list of buckets");
    if (list.empty()) throw CompileError(where + ": has no buckets");
    Stage st{name, {}};
    for (size_t i = 0; i < list.size(); ++i) {
      Bucket b = parseBucket(list[i], where + ": bucket " + std::to_string(i));
      for (size_t k = 0; k < st.buckets.size(); ++k) {
        const Bucket& e = st.buckets[k];
        if (e == b)
          throw CompileError(where + ": bucket " + std::to_string(i) + " " + describe(b) + " repeats bucket " +
                             std::to_string(k));
        if (e.tokens >= b.tokens && e.seqs >= b.seqs && e.markers >= b.markers)
          throw CompileError(where + ": bucket " + std::to_string(i) + " " + describe(b) +
                             " can never be chosen: bucket " + std::to_string(k) + " " + describe(e) +
                             " comes first and holds every batch it holds");
      }
      st.buckets.push_back(b);
    }
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<Stage> readBucketsFile(const std::string& path) { return parseBuckets(json::readFile(path), path); }

}  // namespace kime
