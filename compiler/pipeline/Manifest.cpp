#include "Manifest.h"

#include <flatbuffers/idl.h>
#include <cstring>

#include "codegen/cuda/CudaKernels.h"
#include "kime/schema/manifest_generated.h"
#include "kime/schema/schema_text.h"
#include "support/Diagnostic.h"

namespace kime {

namespace {

namespace fb = kime::schema;

fb::Arg argOf(const PlanArg& a) {
  if (a.source == PlanArg::Source::Weight)  // its shape and dtype are the weight's
    return fb::Arg(fb::ArgSource::Weight, 0, 0, 0, uint32_t(a.weight), 0, 0, 0);
  const bool arena = a.source == PlanArg::Source::Arena;
  return fb::Arg(arena ? fb::ArgSource::Arena : fb::ArgSource::Input, arena ? 0 : uint8_t(a.input), uint8_t(a.rows),
                 uint8_t(a.dtype), 0, arena ? a.offset : 0, a.rowCount, a.cols);
}

std::unique_ptr<fb::BucketT> bucketOf(const BucketPlan& p, const KernelRegistry& k,
                                      const std::vector<std::string>& maths) {
  auto b = std::make_unique<fb::BucketT>();
  b->tokens = p.bucket.tokens;
  b->seqs = p.bucket.seqs;
  b->markers = p.bucket.markers;
  b->arena = p.arena;
  for (const PlanStep& s : p.steps) {
    auto step = std::make_unique<fb::StepT>();
    step->kernel = uint32_t(s.kernel);
    step->node = s.node;
    step->flops = s.flops;
    for (const PlanArg& a : s.args) step->args.push_back(argOf(a));
    for (const std::string& m : maths) {  // per CUDA math, the step's launch for this bucket
      const cuda::Math math = cuda::parseMath(m);
      const cuda::Launch l = cuda::launchFor(k.specs[size_t(s.kernel)], p.bucket, math);
      step->cuda.emplace_back(uint8_t(math), uint32_t(l.gridX), uint32_t(l.gridY), uint32_t(l.block));
    }
    b->steps.push_back(std::move(step));
  }
  for (const PlanArg& a : p.outputs) b->outputs.push_back(argOf(a));
  return b;
}

// A kernel's arguments as indices into its class's slots (plan.h).
std::vector<uint8_t> slotIndices(const KernelSpec& spec) {
  int count = 0;
  const kime_arg_slot* table = kime_class_slots(spec.kind(), &count);
  std::vector<uint8_t> out;
  for (const kime_arg_slot& a : argSlots(spec))
    for (int i = 0; i < count; ++i)
      if (std::strcmp(table[i].name, a.name) == 0) out.push_back(uint8_t(i));
  return out;
}

void addKernels(const LoweredModel& m, fb::ManifestT& t) {
  for (size_t i = 0; i < m.kernels.specs.size(); ++i) {
    auto k = std::make_unique<fb::KernelT>();
    k->name = m.names[i];
    k->kernel_class = uint8_t(m.kernels.specs[i].kind());
    k->slots = slotIndices(m.kernels.specs[i]);
    k->spec = m.kernels.specs[i].describe();
    t.kernels.push_back(std::move(k));
  }
}

void addWeights(const WeightPacker& weights, fb::ManifestT& t) {
  for (const PackedWeight& w : weights.weights()) {
    auto x = std::make_unique<fb::WeightT>();
    x->name = w.name;
    x->layout = w.layout.name();
    x->shape = w.shape;
    x->offset = uint64_t(w.offset);
    x->dtype = uint8_t(w.dtype);
    t.weights.push_back(std::move(x));
  }
}

}  // namespace

Section manifestSection(const CompileOptions& o, const Graph& g, const LoweredModel& m, const WeightPacker& weights) {
  fb::ManifestT t;
  t.format = KIME_FORMAT_VERSION;
  t.model = g.name;
  t.vocab = uint64_t(g.vocab);
  t.types = uint64_t(g.types);
  t.max_seq_len = learnedPositions(g);
  t.padding_id = g.paddingId;
  for (const OutputDesc& d : outputDescs(g)) {
    auto x = std::make_unique<fb::OutputT>();
    x->name = d.name;
    x->kind = uint8_t(d.kind);
    x->width = uint32_t(d.width);
    t.outputs.push_back(std::move(x));
  }
  for (const GatherLimit& l : gatherLimits(g)) {
    auto x = std::make_unique<fb::GatherLimitT>();
    x->index = uint8_t(l.index);
    x->rows = l.rows;
    x->node = l.where;
    x->table = l.table;
    t.gather_limits.push_back(std::move(x));
  }
  addWeights(weights, t);
  addKernels(m, t);
  for (const BucketPlan& p : m.plans) t.buckets.push_back(bucketOf(p, m.kernels, o.cudaMath));
  for (const StageBuckets& s : m.stages) {
    auto x = std::make_unique<fb::StageT>();
    x->name = s.name;
    x->buckets = s.buckets;
    t.stages.push_back(std::move(x));
  }
  t.cpu_targets = o.targets;
  t.cuda_archs = o.cudaArchs;
  t.cuda_math = o.cudaMath;
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);  // every field present: tests damage them in place
  fbb.Finish(fb::Manifest::Pack(fbb, &t), fb::ManifestIdentifier());
  return {KIME_SECTION_MANIFEST, std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize())};
}

std::string manifestJson(const std::string& bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!fb::VerifyManifestBuffer(verifier)) throw CompileError("the manifest fails FlatBuffers' verifier");
  flatbuffers::IDLOptions options;
  options.strict_json = true;
  options.indent_step = 1;
  flatbuffers::Parser parser(options);
  if (!parser.Parse(schema::kManifestSchema)) throw CompileError("manifest.fbs: " + parser.error_);
  std::string text;
  if (!flatbuffers::GenerateText(parser, bytes.data(), &text)) throw CompileError("the manifest has no text form");
  return text;
}

}  // namespace kime
