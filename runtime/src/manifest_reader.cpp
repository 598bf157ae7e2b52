// Reading the manifest section (runtime/schema/manifest.fbs) into a ModelImpl: FlatBuffers'
// verifier first, then every number that names something checked against plan.h, every weight
// inside the weights section, every step's arguments against its kernel's slots and every arena
// argument inside its bucket's arena.
#include <algorithm>

#include "kime/schema/manifest_generated.h"
#include "model_impl.h"

namespace kime {

namespace {

namespace fb = kime::schema;

struct Fail {
  std::string message;
};

// Plan.h's enum value `v` of `count`, or a Fail naming `what`.
template <typename Enum>
Enum planEnum(unsigned v, unsigned count, const char* what) {
  if (v >= count) throw Fail{std::string(what) + " " + std::to_string(v) + " is none of plan.h's"};
  return Enum(v);
}

kime_kernel_type typeOf(unsigned d) {
  const kime_dtype t = planEnum<kime_dtype>(d, KIME_DTYPE_COUNT, "dtype");
  return {kime_dtype_codes[t], kime_dtype_bits[t], 1};
}

ArgInfo argOf(const fb::Arg& j, const ModelImpl& m) {
  ArgInfo a;
  switch (j.source()) {
    case fb::ArgSource::Weight: {
      a.source = ArgInfo::Source::Weight;
      if (j.weight() >= m.weights.size()) throw Fail{"weight id out of range"};
      a.weight = int64_t(j.weight());
      const WeightInfo& w = m.weights[j.weight()];
      a.rowCount = w.shape[0];
      a.cols = w.shape.size() > 1 ? w.shape[1] : 0;
      a.type = w.type;
      return a;
    }
    case fb::ArgSource::Arena:
      a.source = ArgInfo::Source::Arena;
      a.offset = j.offset();
      break;
    case fb::ArgSource::Input:
      a.source = ArgInfo::Source::Input;
      a.input = planEnum<InputId>(j.input(), KIME_INPUT_COUNT, "input");
      break;
    default:
      throw Fail{"argument source " + std::to_string(unsigned(j.source())) + " is none of manifest.fbs's"};
  }
  a.rows = planEnum<RowSym>(j.rows(), KIME_ROWS_COUNT, "row count");
  a.rowCount = j.bound();
  a.cols = j.cols();
  a.type = typeOf(j.dtype());
  if (a.rowCount < 0 || a.cols < 0) throw Fail{"negative size"};
  return a;
}

// A kernel's slots: indices into its class's slots (plan.h), in the class's order, every required
// one present, the output last.
std::vector<const kime_arg_slot*> slotsOf(const flatbuffers::Vector<uint8_t>& indices, kime_kernel_class c,
                                          const std::string& kernel) {
  int count = 0;
  const kime_arg_slot* table = kime_class_slots(c, &count);
  std::vector<const kime_arg_slot*> out;
  int at = 0;
  for (const uint8_t i : indices) {
    if (i >= count)
      throw Fail{"kernel " + kernel + ": slot " + std::to_string(i) + " is no argument of the " +
                 kime_kernel_class_names[c] + " class (plan.h has " + std::to_string(count) + ")"};
    if (i < at) throw Fail{"kernel " + kernel + ": argument \"" + table[i].name + "\" is out of its class's order"};
    for (int j = at; j < i; ++j)
      if (!table[j].optional)
        throw Fail{"kernel " + kernel + " has no \"" + table[j].name + "\" argument, which its class needs"};
    out.push_back(&table[i]);
    at = i + 1;
  }
  if (at != count)
    throw Fail{"kernel " + kernel + " has no \"" + table[count - 1].name + "\" argument, which its class needs"};
  return out;
}

// A step's arguments are its kernel's slots, one each, of the slot's element type (a packed
// weight may be bf16 or i8 where the slot is f32: a bf16 or int8 linear's).
void checkStepArgs(const StepInfo& si, const ModelImpl& m, const Bucket& b) {
  const std::vector<const kime_arg_slot*>& slots = m.kernelSlots[si.kernel];
  const std::string where =
      "bucket " + describe(b) + ", step \"" + si.node + "\" (kernel " + m.kernelNames[si.kernel] + ")";
  if (si.args.size() != slots.size())
    throw Fail{where + ": " + std::to_string(si.args.size()) + " arguments for its " + std::to_string(slots.size()) +
               " slots"};
  for (size_t i = 0; i < slots.size(); ++i) {
    const kime_kernel_type& t = si.args[i].type;
    const kime_dtype want = slots[i]->dtype;
    const bool same = t.code == kime_dtype_codes[want] && t.bits == kime_dtype_bits[want];
    const bool narrowWeight = si.args[i].source == ArgInfo::Source::Weight && want == KIME_DTYPE_F32 &&
                              (t.code == 4 || (t.code == 0 && t.bits == 8));
    if (!same && !narrowWeight)
      throw Fail{where + ": argument \"" + slots[i]->name + "\" is not " + kime_dtype_names[want]};
  }
}

StepInfo stepOf(const fb::Step& s, const ModelImpl& m, const Bucket& b) {
  StepInfo si;
  si.kernel = s.kernel();
  if (si.kernel >= m.kernelNames.size()) throw Fail{"kernel index out of range"};
  si.node = s.node()->str();
  si.flops = s.flops();
  for (const fb::Arg* a : *s.args()) si.args.push_back(argOf(*a, m));
  checkStepArgs(si, m, b);
  si.flopRows = si.args.back().rows;
  if (s.cuda())
    for (const fb::Launch* c : *s.cuda()) {
      StepInfo::Launch& l = si.launch[planEnum<CudaMath>(c->math(), KIME_CUDA_MATH_COUNT, "CUDA math")];
      l = {c->grid_x(), c->grid_y(), c->block()};
      if (!l.gridX || !l.gridY || !l.block || l.block > 1024) throw Fail{"a step's CUDA launch is out of range"};
    }
  return si;
}

// Where output `i` lies in a bucket's arena: f32 rows of its kind's count (markers or sequences)
// at the bucket's bound, its width wide.
ArgInfo outputArg(const fb::Arg& j, const ModelImpl& m, size_t i, const Bucket& b) {
  const OutputDesc& o = m.outputs[i];
  ArgInfo a = argOf(j, m);
  const bool perMarker = o.kind == OutputKind::PerMarker;
  const int64_t bound = perMarker ? b.markers : b.seqs;
  if (a.source != ArgInfo::Source::Arena || a.type.code != 2 || a.type.bits != 32 ||
      a.rows != (perMarker ? KIME_ROWS_M : KIME_ROWS_S) || a.rowCount != bound ||
      size_t(std::max<int64_t>(a.cols, 1)) != o.width)
    throw Fail{"bucket " + describe(b) + ": output \"" + o.name + "\" is not " + std::to_string(bound) +
               " f32 rows of " + std::to_string(o.width) + " in the arena"};
  return a;
}

BucketInfo bucketOf(const fb::Bucket& b, const ModelImpl& m) {
  BucketInfo bi;
  bi.bucket = {b.tokens(), b.seqs(), b.markers()};
  bi.arena = b.arena();
  for (const fb::Step* s : *b.steps()) bi.steps.push_back(stepOf(*s, m, bi.bucket));
  if (b.outputs()->size() != m.outputs.size())
    throw Fail{"bucket " + describe(bi.bucket) + " places " + std::to_string(b.outputs()->size()) +
               " outputs, the model has " + std::to_string(m.outputs.size())};
  for (size_t i = 0; i < m.outputs.size(); ++i) bi.outputs.push_back(outputArg(*b.outputs()->Get(i), m, i, bi.bucket));
  // Every arena argument must lie inside the arena, at its bound.
  auto inside = [&](const ArgInfo& a) {
    if (a.source != ArgInfo::Source::Arena) return;
    int64_t bytes = 0;
    const bool huge = __builtin_mul_overflow(a.rowCount, std::max<int64_t>(a.cols, 1) * int64_t(4), &bytes) ||
                      a.cols > (int64_t(1) << 40);
    if (huge || a.offset < 0 || a.offset % 4 || a.offset > bi.arena || bytes > bi.arena - a.offset)
      throw Fail{"an argument lies outside its bucket's arena"};
  };
  for (const StepInfo& s : bi.steps)
    for (const ArgInfo& a : s.args) inside(a);
  for (const ArgInfo& a : bi.outputs) inside(a);
  return bi;
}

WeightInfo weightOf(const fb::Weight& w, const ModelImpl& m) {
  WeightInfo wi{w.name()->str(), w.layout()->str(), {w.shape()->begin(), w.shape()->end()}, w.offset()};
  wi.type = typeOf(w.dtype());
  if (wi.type.code != 2 && wi.type.code != 4 && !(wi.type.code == 0 && wi.type.bits == 8))
    throw Fail{"weight \"" + wi.name + "\" is not f32, bf16 or i8"};
  uint64_t bytes = wi.type.bits / 8;
  for (int64_t d : wi.shape) {
    if (d <= 0) throw Fail{"weight \"" + wi.name + "\" has a size <= 0"};
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes)) bytes = ~uint64_t(0);
  }
  if (wi.shape.empty() || wi.offset % 4 || wi.offset > m.weightBytes || bytes > m.weightBytes - wi.offset)
    throw Fail{"weight \"" + wi.name + "\" lies outside the weights section"};
  return wi;
}

// The model's outputs: named once each, of a known kind, 1 to 2^20 values wide.
void readOutputs(const flatbuffers::Vector<flatbuffers::Offset<fb::Output>>& outputs, ModelImpl& m) {
  if (outputs.size() == 0) throw Fail{"the model has no outputs"};
  for (const fb::Output* o : outputs) {
    OutputDesc d{o->name()->str(), planEnum<OutputKind>(o->kind(), 2, "output kind"), o->width()};
    if (d.name.empty() || d.width == 0 || d.width > (size_t(1) << 20))
      throw Fail{"output \"" + d.name + "\" has no name or a width of " + std::to_string(d.width)};
    if (outputIndex(m.outputs, d.name) >= 0) throw Fail{"output \"" + d.name + "\" is named twice"};
    m.outputs.push_back(std::move(d));
  }
}

void readVerified(const fb::Manifest& j, ModelImpl& m) {
  if (j.format() != KIME_FORMAT_VERSION)
    throw Fail{"its format is " + std::to_string(j.format()) + ", the header's " + std::to_string(KIME_FORMAT_VERSION)};
  m.name = j.model()->str();
  m.vocab = j.vocab();
  m.types = j.types();
  m.maxSeqLen = j.max_seq_len();
  m.paddingId = j.padding_id();
  if (m.paddingId < -1 || (m.paddingId >= 0 && uint64_t(m.paddingId) >= m.vocab))
    throw Fail{"padding id " + std::to_string(m.paddingId) + " is no token id"};
  readOutputs(*j.outputs(), m);
  for (const fb::GatherLimit* g : *j.gather_limits()) {
    const InputId index = planEnum<InputId>(g->index(), KIME_INPUT_COUNT, "input");
    if (index != KIME_INPUT_IDS && index != KIME_INPUT_QTYPE && index != KIME_INPUT_TOKPOS && index != KIME_INPUT_CU &&
        index != KIME_INPUT_MCU && index != KIME_INPUT_MARKERS && index != KIME_INPUT_TOKTYPE)
      throw Fail{"a gather limit on \"" + std::string(kime_plan_input_names[index]) + "\", which is no batch index"};
    m.gatherLimits.push_back({index, g->rows(), g->node()->str(), g->table()->str()});
  }
  for (const fb::Weight* w : *j.weights()) m.weights.push_back(weightOf(*w, m));
  for (const fb::Kernel* k : *j.kernels()) {
    m.kernelNames.push_back(k->name()->str());
    m.kernelClasses.push_back(planEnum<kime_kernel_class>(k->kernel_class(), KIME_CLASS_COUNT, "kernel class"));
    m.kernelSlots.push_back(slotsOf(*k->slots(), m.kernelClasses.back(), m.kernelNames.back()));
  }
  for (const fb::Bucket* b : *j.buckets()) m.buckets.push_back(bucketOf(*b, m));
  for (const fb::Stage* s : *j.stages()) {
    StageInfo si{s->name()->str(), {s->buckets()->begin(), s->buckets()->end()}};
    for (size_t b : si.buckets)
      if (b >= m.buckets.size()) throw Fail{"stage \"" + si.name + "\" names a bucket out of range"};
    m.stages.push_back(std::move(si));
  }
}

}  // namespace

std::optional<std::string> readManifest(const uint8_t* data, size_t size, ModelImpl& m) {
  // The verifier's own limits guard against a section made to exhaust it; a real manifest has a
  // table per bucket, step, kernel and weight, far fewer than this.
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/16, /*max_tables=*/uint32_t(1) << 24);
  if (!fb::VerifyManifestBuffer(verifier))
    return std::string("it is no manifest of this format (FlatBuffers' verifier refused it against manifest.fbs)");
  try {
    readVerified(*fb::GetManifest(data), m);
  } catch (const Fail& f) {
    return f.message;
  }
  return std::nullopt;
}

}  // namespace kime
