// The artifact's source section (KIME_SECTION_SOURCE, runtime/schema/source.fbs, written by
// kime-compile), described for Model::inspect. Read only there, never when a model is opened.
#include "kime/schema/source_generated.h"
#include "model_impl.h"

namespace kime {

namespace {

std::string list(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>& v) {
  std::string out = "[";
  for (const flatbuffers::String* s : v) out += (out.size() > 1 ? ", " : "") + s->str();
  return out + "]";
}

}  // namespace

std::string describeSource(const ModelImpl& m) {
  const SectionInfo* s = m.section(KIME_SECTION_SOURCE);
  if (!s) return "compiled from: not recorded\n";
  flatbuffers::Verifier verifier(m.map + s->offset, s->size);
  if (!schema::VerifySourceBuffer(verifier))
    return "compiled from: unreadable source section (FlatBuffers' verifier refused it against source.fbs)\n";
  const schema::Source& j = *schema::GetSource(m.map + s->offset);
  const schema::Options& o = *j.options();
  return "compiled from: Graph \"" + j.graph_name()->str() + "\" (" + std::to_string(j.graph_nodes()) +
         " nodes), its bucket file, by " + j.compiler()->str() + " (build " + j.compiler_build()->str().substr(0, 12) +
         ")\n  options: targets " + list(*o.targets()) + ", cuda archs " + list(*o.cuda_archs()) + ", cuda math " +
         list(*o.cuda_math()) + ", cpu precision " + o.cpu_precision()->str() + ", prune rows " +
         (o.prune_rows() ? "true" : "false") + ", fusion " + (o.fusion() ? "true" : "false") + ", selftest " +
         std::to_string(o.selftest()) + "\n";
}

}  // namespace kime
