#include "Refit.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "Precision.h"
#include "artifact/ArtifactReader.h"
#include "cache/ContentHash.h"
#include "kime/plan.h"
#include "kime/schema/source_generated.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

namespace {

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

namespace {

namespace fb = kime::schema;

fb::SourceT sourceOf(const CompileOptions& o) {
  fb::SourceT t;
  t.compiler = compilerVersion();
  t.compiler_build = compilerIdentity();
  const nlohmann::json graph = canonical(o.graph);
  t.graph = graph.dump();
  t.graph_name = graph.is_object() ? graph.value("name", std::string()) : "";
  t.graph_nodes = graph.is_object() && graph.contains("nodes") ? graph.at("nodes").size() : 0;
  t.buckets = canonical(o.buckets).dump();
  t.options = std::make_unique<fb::OptionsT>();
  fb::OptionsT& x = *t.options;
  x.targets = o.targets;
  x.cuda_archs = o.cudaArchs;
  x.cuda_math = o.cudaMath;
  x.cpu_precision = nameOf(o.cpuPrecision);
  x.prune_rows = o.pruneRows;
  x.fusion = o.fusion;
  x.selftest = o.selftest;
  return t;
}

// The source section of an artifact, unpacked: std::nullopt where it fails the verifier.
std::optional<fb::SourceT> readSource(const std::string& bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!fb::VerifySourceBuffer(verifier)) return std::nullopt;
  fb::SourceT t;
  fb::GetSource(bytes.data())->UnPackTo(&t);
  return t;
}

}  // namespace

Section sourceSection(const CompileOptions& o) {
  const fb::SourceT t = sourceOf(o);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::Source::Pack(fbb, &t), fb::SourceIdentifier());
  return {KIME_SECTION_SOURCE, std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize())};
}

RefitInputs readRefitInputs(const CompileOptions& given) {
  // Its weights are made again: only the code and what it was compiled from are kept.
  const std::vector<Section> old = readArtifact(given.refit, [](const std::string& name) {
    return name.rfind("code.", 0) == 0 || name == KIME_SECTION_SOURCE || name == KIME_SECTION_MANIFEST;
  });
  const Section* section = findSection(old, KIME_SECTION_SOURCE);
  if (!section)
    throw CompileError(given.refit +
                       ": no source section (it was compiled before kime recorded one): compile it in full");
  const std::optional<fb::SourceT> source = readSource(section->bytes);
  if (!source) throw CompileError(given.refit + ": bad source section (FlatBuffers' verifier refused it)");
  if (source->compiler != compilerVersion())
    throw CompileError(given.refit + ": compiled by " + source->compiler + ", and this is " + compilerVersion() +
                       ": its code may differ from this compiler's, so compile it in full");
  RefitInputs r;
  r.dir = std::make_unique<TempDir>();
  r.options = given;
  r.options.graph = (r.dir->path() / "graph.json").string();
  r.options.buckets = (r.dir->path() / "buckets.json").string();
  json::writeFileAtomic(r.options.graph, source->graph);
  json::writeFileAtomic(r.options.buckets, source->buckets);
  const fb::OptionsT& o = *source->options;
  r.options.targets = o.targets;
  r.options.cudaArchs = o.cuda_archs;
  r.options.cudaMath = o.cuda_math;
  r.options.cpuPrecision = parseCpuPrecision(o.cpu_precision);
  r.options.pruneRows = o.prune_rows;
  r.options.fusion = o.fusion;
  r.options.selftest = given.dropSelftest ? 0 : size_t(o.selftest);
  for (const Section& s : old)
    if (s.name.rfind("code.", 0) == 0) r.code.push_back(s);
  if (const Section* m = findSection(old, KIME_SECTION_MANIFEST)) r.manifest = m->bytes;
  return r;
}

namespace {

// What of the sources `was` and `now` differs, in words ("" where nothing does).
std::string sourceDifference(const fb::SourceT& was, const fb::SourceT& now) {
  const std::pair<bool, const char*> parts[] = {{was.graph != now.graph, "the Graph"},
                                                {was.buckets != now.buckets, "the bucket file"},
                                                {!(*was.options == *now.options), "the options"},
                                                {was.compiler != now.compiler, "the compiler's version"},
                                                {was.compiler_build != now.compiler_build, "the compiler's build"}};
  std::string out;
  for (const auto& [differs, what] : parts)
    if (differs) out += (out.empty() ? "" : ", ") + std::string(what);
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
    const std::optional<fb::SourceT> was = readSource(source->bytes);
    if (!was) return log << full << "its source section is unreadable\n", false;
    const std::string why = sourceDifference(*was, sourceOf(o));
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
