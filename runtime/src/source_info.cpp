// The artifact's source section (KIME_SECTION_SOURCE, written by kime-compile), described for
// Model::inspect. Read only there, never when a model is opened.
#include <nlohmann/json.hpp>

#include "kime/manifest_keys.h"
#include "model_impl.h"

namespace kime {

std::string describeSource(const ModelImpl& m) {
  const SectionInfo* s = m.section(KIME_SECTION_SOURCE);
  if (!s) return "compiled from: not recorded\n";
  try {
    const auto j = nlohmann::json::parse(reinterpret_cast<const char*>(m.map + s->offset),
                                         reinterpret_cast<const char*>(m.map + s->offset + s->size));
    const nlohmann::json& o = j.at(key::options);
    return "compiled from: Graph \"" + j.at(key::graph).value("name", std::string()) + "\" (" +
           std::to_string(j.at(key::graph).at("nodes").size()) + " nodes), its bucket file, by " +
           j.at(key::compiler).get<std::string>() + " (build " +
           j.value(key::compilerBuild, std::string("not recorded")).substr(0, 12) + ")\n  options: targets " +
           o.at(key::targets).dump() + ", cuda archs " + o.at(key::cudaArchs).dump() + ", cuda math " +
           o.at(key::cudaMath).dump() + ", cpu precision " + o.at(key::cpuPrecision).get<std::string>() +
           ", prune rows " + o.at(key::pruneRows).dump() + ", fusion " + o.at(key::fusion).dump() + ", selftest " +
           o.at(key::selftest).dump() + "\n";
  } catch (const std::exception& e) {
    return std::string("compiled from: unreadable source section (") + e.what() + ")\n";
  }
}

}  // namespace kime
