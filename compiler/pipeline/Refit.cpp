#include "Refit.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "artifact/ArtifactReader.h"
#include "cache/ContentHash.h"
#include "kime/manifest_keys.h"
#include "kime/plan.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

namespace {

using OJson = nlohmann::ordered_json;

// A JSON file as canonical JSON (keys sorted, numbers round-tripped): the same document gives the
// same bytes however it was written.
nlohmann::json canonical(const std::string& path) {
  try {
    return nlohmann::json::parse(json::readFile(path));
  } catch (const nlohmann::json::exception& e) {
    throw CompileError(path + ": bad JSON: " + e.what());
  }
}

}  // namespace

const char* compilerVersion() { return "kime " KIME_VERSION; }

Section sourceSection(const CompileOptions& o) {
  OJson options = {{key::targets, o.targets},           {key::cudaArchs, o.cudaArchs}, {key::cudaMath, o.cudaMath},
                   {key::cpuPrecision, o.cpuPrecision}, {key::pruneRows, o.pruneRows}, {key::fusion, o.fusion},
                   {key::selftest, o.selftest}};
  OJson j = {{key::compiler, compilerVersion()},
             {key::compilerBuild, compilerIdentity()},
             {key::options, options},
             {key::buckets, canonical(o.buckets)},
             {key::graph, canonical(o.graph)}};
  return {KIME_SECTION_SOURCE, j.dump()};
}

RefitInputs readRefitInputs(const CompileOptions& given) {
  // Its weights are made again: only the code and what it was compiled from are kept.
  const std::vector<Section> old = readArtifact(given.refit, [](const std::string& name) {
    return name.rfind("code.", 0) == 0 || name == KIME_SECTION_SOURCE || name == KIME_SECTION_MANIFEST;
  });
  const Section* source = findSection(old, KIME_SECTION_SOURCE);
  if (!source)
    throw CompileError(given.refit +
                       ": no source section (it was compiled before kime recorded one): compile it in full");
  RefitInputs r;
  try {
    const nlohmann::json j = nlohmann::json::parse(source->bytes);
    const std::string by = j.at(key::compiler).get<std::string>();
    if (by != compilerVersion())
      throw CompileError(given.refit + ": compiled by " + by + ", and this is " + compilerVersion() +
                         ": its code may differ from this compiler's, so compile it in full");
    r.dir = std::make_unique<TempDir>();
    r.options = given;
    r.options.graph = (r.dir->path() / "graph.json").string();
    r.options.buckets = (r.dir->path() / "buckets.json").string();
    json::writeFileAtomic(r.options.graph, j.at(key::graph).dump());
    json::writeFileAtomic(r.options.buckets, j.at(key::buckets).dump());
    const nlohmann::json& o = j.at(key::options);
    r.options.targets = o.at(key::targets).get<std::vector<std::string>>();
    r.options.cudaArchs = o.at(key::cudaArchs).get<std::vector<std::string>>();
    r.options.cudaMath = o.at(key::cudaMath).get<std::vector<std::string>>();
    r.options.cpuPrecision = o.at(key::cpuPrecision).get<std::string>();
    r.options.pruneRows = o.at(key::pruneRows).get<bool>();
    r.options.fusion = o.at(key::fusion).get<bool>();
    r.options.selftest = given.dropSelftest ? 0 : o.at(key::selftest).get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw CompileError(given.refit + ": bad source section: " + e.what());
  }
  for (const Section& s : old)
    if (s.name.rfind("code.", 0) == 0) r.code.push_back(s);
  if (const Section* m = findSection(old, KIME_SECTION_MANIFEST)) r.manifest = m->bytes;
  return r;
}

namespace {

// What of the source sections `was` and `now` differs, in words ("" where nothing does).
std::string sourceDifference(const nlohmann::json& was, const nlohmann::json& now) {
  static const std::pair<const char*, const char*> parts[] = {{key::graph, "the Graph"},
                                                              {key::buckets, "the bucket file"},
                                                              {key::options, "the options"},
                                                              {key::compiler, "the compiler's version"},
                                                              {key::compilerBuild, "the compiler's build"}};
  std::string out;
  for (const auto& [k, what] : parts)
    if (!was.contains(k) || was.at(k) != now.at(k)) out += (out.empty() ? "" : ", ") + std::string(what);
  return out;
}

}  // namespace

bool canUpdateByRefit(const CompileOptions& o, std::ostream& log) {
  std::error_code ec;
  if (o.output.empty() || !std::filesystem::exists(o.output, ec)) return false;
  const std::string full = "update: compiling " + o.output + " in full: ";
  try {
    const std::vector<Section> old =
        readArtifact(o.output, [](const std::string& name) { return name == KIME_SECTION_SOURCE; });
    const Section* source = findSection(old, KIME_SECTION_SOURCE);
    if (!source) return log << full << "it records no source\n", false;
    const std::string why =
        sourceDifference(nlohmann::json::parse(source->bytes), nlohmann::json::parse(sourceSection(o).bytes));
    if (!why.empty()) return log << full << why << " changed\n", false;
  } catch (const std::exception& e) {  // unreadable: the full compile says what is wrong, or replaces it
    return log << full << e.what() << "\n", false;
  }
  log << "update: " << o.output << " was compiled from this Graph, bucket file and options by this build: "
      << "refitting it with " << o.weights << "\n";
  return true;
}

void checkNoExtraTensors(const Checkpoint& ck, const Graph& g) {
  std::set<std::string> weights;
  for (const WeightDecl& w : g.weights) weights.insert(w.name);
  for (const TensorView& t : ck.tensors())
    if (!weights.count(t.name))
      throw CompileError(ck.source() + ": tensor \"" + t.name + "\" is no weight of the Graph being refitted");
}

}  // namespace kime
