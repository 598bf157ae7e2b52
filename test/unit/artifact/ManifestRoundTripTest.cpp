// The manifest holds writer and reader together: what kime-compile wrote (the example artifact's
// manifest, unpacked by manifest.fbs) is what the runtime read into its model, field by field; the
// writer wrote nothing but the schema's fields (packing the unpacked manifest again gives its
// bytes); and each check the reader makes on a field refuses a manifest with that field out of
// range, by name.
#include <cstring>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/container.h"
#include "kime/schema/manifest_generated.h"
#include "model_impl.h"

namespace kime {
namespace {

namespace fb = kime::schema;

// The example artifact's manifest section.
std::string manifestBytes() {
  const std::string bytes = test::readBytes(test::testArtifact());
  std::vector<SectionInfo> sections;
  if (auto why = readContainer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), sections))
    throw std::runtime_error(*why);
  for (const SectionInfo& s : sections)
    if (s.name == KIME_SECTION_MANIFEST) return bytes.substr(s.offset, s.size);
  throw std::runtime_error("no manifest section");
}

fb::ManifestT unpacked(const std::string& bytes) {
  fb::ManifestT t;
  fb::GetManifest(bytes.data())->UnPackTo(&t);
  return t;
}

std::string packed(const fb::ManifestT& t) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  fbb.Finish(fb::Manifest::Pack(fbb, &t), fb::ManifestIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

void expectSameArg(const fb::Arg& w, const ArgInfo& r, const ModelImpl& m) {
  if (w.source() == fb::ArgSource::Weight) {
    ASSERT_EQ(r.source, ArgInfo::Source::Weight);
    EXPECT_EQ(r.weight, int64_t(w.weight()));
    EXPECT_EQ(r.rowCount, m.weights[w.weight()].shape[0]);
    return;
  }
  EXPECT_EQ(r.source, w.source() == fb::ArgSource::Arena ? ArgInfo::Source::Arena : ArgInfo::Source::Input);
  if (w.source() == fb::ArgSource::Arena) {
    EXPECT_EQ(r.offset, w.offset());
  } else {
    EXPECT_EQ(r.input, InputId(w.input()));
  }
  EXPECT_EQ(r.rows, RowSym(w.rows()));
  EXPECT_EQ(r.rowCount, w.bound());
  EXPECT_EQ(r.cols, w.cols());
  EXPECT_EQ(r.type.code, kime_dtype_codes[w.dtype()]);
  EXPECT_EQ(r.type.bits, kime_dtype_bits[w.dtype()]);
}

void expectSameBucket(const fb::BucketT& w, const BucketInfo& r, const ModelImpl& m) {
  EXPECT_EQ(r.bucket.tokens, w.tokens);
  EXPECT_EQ(r.bucket.seqs, w.seqs);
  EXPECT_EQ(r.bucket.markers, w.markers);
  EXPECT_EQ(r.arena, w.arena);
  ASSERT_EQ(r.steps.size(), w.steps.size());
  for (size_t s = 0; s < w.steps.size(); ++s) {
    const fb::StepT& ws = *w.steps[s];
    const StepInfo& rs = r.steps[s];
    EXPECT_EQ(rs.kernel, ws.kernel);
    EXPECT_EQ(rs.node, ws.node);
    EXPECT_EQ(rs.flops, ws.flops);
    ASSERT_EQ(rs.args.size(), ws.args.size());
    for (size_t a = 0; a < ws.args.size(); ++a) expectSameArg(ws.args[a], rs.args[a], m);
    for (const fb::Launch& l : ws.cuda) {
      EXPECT_EQ(rs.launch[l.math()].gridX, l.grid_x());
      EXPECT_EQ(rs.launch[l.math()].gridY, l.grid_y());
      EXPECT_EQ(rs.launch[l.math()].block, l.block());
    }
  }
  ASSERT_EQ(r.outputs.size(), w.outputs.size());
  for (size_t o = 0; o < w.outputs.size(); ++o) expectSameArg(w.outputs[o], r.outputs[o], m);
}

TEST(ManifestRoundTrip, TheRuntimeReadsWhatTheCompilerWrote) {
  const fb::ManifestT w = unpacked(manifestBytes());
  const ModelImpl& r = test::testModel()->impl();
  EXPECT_EQ(w.format, KIME_FORMAT_VERSION);
  EXPECT_EQ(r.name, w.model);
  EXPECT_EQ(r.vocab, w.vocab);
  EXPECT_EQ(r.types, w.types);
  EXPECT_EQ(r.maxSeqLen, w.max_seq_len);
  ASSERT_EQ(r.weights.size(), w.weights.size());
  ASSERT_FALSE(w.weights.empty());
  for (size_t i = 0; i < w.weights.size(); ++i) {
    EXPECT_EQ(r.weights[i].name, w.weights[i]->name);
    EXPECT_EQ(r.weights[i].layout, w.weights[i]->layout);
    EXPECT_EQ(r.weights[i].shape, w.weights[i]->shape);
    EXPECT_EQ(r.weights[i].offset, w.weights[i]->offset);
  }
  ASSERT_EQ(r.kernelNames.size(), w.kernels.size());
  for (size_t k = 0; k < w.kernels.size(); ++k) {
    EXPECT_EQ(r.kernelNames[k], w.kernels[k]->name);
    EXPECT_EQ(r.kernelClasses[k], kime_kernel_class(w.kernels[k]->kernel_class));
    int count = 0;
    const kime_arg_slot* table = kime_class_slots(r.kernelClasses[k], &count);
    ASSERT_EQ(r.kernelSlots[k].size(), w.kernels[k]->slots.size());
    for (size_t s = 0; s < w.kernels[k]->slots.size(); ++s)
      EXPECT_STREQ(r.kernelSlots[k][s]->name, table[w.kernels[k]->slots[s]].name);  // each TU has its table
    EXPECT_FALSE(w.kernels[k]->spec.empty());
  }
  ASSERT_EQ(r.buckets.size(), w.buckets.size());
  for (size_t b = 0; b < w.buckets.size(); ++b) expectSameBucket(*w.buckets[b], r.buckets[b], r);
  ASSERT_EQ(r.stages.size(), w.stages.size());
  for (size_t s = 0; s < w.stages.size(); ++s) {
    EXPECT_EQ(r.stages[s].name, w.stages[s]->name);
    EXPECT_EQ(r.stages[s].buckets, std::vector<size_t>(w.stages[s]->buckets.begin(), w.stages[s]->buckets.end()));
  }
}

TEST(ManifestRoundTrip, TheWriterWritesNothingButTheSchema) {
  const std::string bytes = manifestBytes();
  EXPECT_EQ(packed(unpacked(bytes)), bytes);
}

// readManifest on `t` changed by `change`, into a model whose weights section is the example's size.
std::optional<std::string> readChanged(const std::function<void(fb::ManifestT&)>& change) {
  fb::ManifestT t = unpacked(manifestBytes());
  change(t);
  const std::string bytes = packed(t);
  std::vector<uint64_t> aligned(bytes.size() / 8 + 1);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  ModelImpl m;
  m.weightBytes = test::testModel()->impl().weightBytes;
  return readManifest(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size(), m);
}

TEST(ManifestRoundTrip, TheUnchangedManifestReads) {
  EXPECT_EQ(readChanged([](fb::ManifestT&) {}), std::nullopt);
}

TEST(ManifestRoundTrip, EachFieldOutOfRangeIsRefusedByName) {
  const std::string otherFormat = "its format is 4, the header's " + std::to_string(KIME_FORMAT_VERSION);
  const std::pair<std::function<void(fb::ManifestT&)>, const char*> cases[] = {
      {[](fb::ManifestT& t) { t.format = 4; }, otherFormat.c_str()},
      {[](fb::ManifestT& t) { t.kernels[0]->kernel_class = 99; }, "kernel class 99 is none of plan.h's"},
      {[](fb::ManifestT& t) { t.kernels[0]->slots.push_back(0); }, "is out of its class's order"},
      {[](fb::ManifestT& t) { t.weights[0]->dtype = KIME_DTYPE_U32; }, "is not f32, bf16 or i8"},
      {[](fb::ManifestT& t) { t.weights[0]->dtype = 77; }, "dtype 77 is none of plan.h's"},
      {[](fb::ManifestT& t) { t.weights[0]->offset = 1ull << 62; }, "lies outside the weights section"},
      {[](fb::ManifestT& t) { t.weights[0]->shape = {1ll << 40, 1ll << 40}; }, "lies outside the weights section"},
      {[](fb::ManifestT& t) { t.weights[0]->shape[0] = 0; }, "has a size <= 0"},
      {[](fb::ManifestT& t) { t.buckets[0]->steps[0]->kernel = 1000; }, "kernel index out of range"},
      {[](fb::ManifestT& t) { t.buckets[0]->steps[0]->cuda = {fb::Launch(7, 1, 1, 32)}; },
       "CUDA math 7 is none of plan.h's"},
      {[](fb::ManifestT& t) { t.buckets[0]->steps[0]->cuda = {fb::Launch(0, 1, 1, 4096)}; },
       "a step's CUDA launch is out of range"},
      {[](fb::ManifestT& t) { t.buckets[0]->arena = 4; }, "an argument lies outside its bucket's arena"},
      {[](fb::ManifestT& t) { t.buckets[0]->outputs[0].mutate_rows(9); }, "row count 9 is none of plan.h's"},
      {[](fb::ManifestT& t) { t.buckets[0]->outputs[0].mutate_bound(1ll << 62); },
       "output \"logits\" is not 1024 f32 rows of 1 in the arena"},
      {[](fb::ManifestT& t) { t.buckets[0]->outputs[1].mutate_offset(1ll << 40); },
       "an argument lies outside its bucket's arena"},
      {[](fb::ManifestT& t) { t.buckets[0]->outputs[0].mutate_rows(KIME_ROWS_S); },
       "output \"logits\" is not 1024 f32 rows of 1 in the arena"},
      {[](fb::ManifestT& t) { t.buckets[0]->outputs.pop_back(); }, "places 1 outputs, the model has 2"},
      {[](fb::ManifestT& t) { t.outputs[1]->kind = 5; }, "output kind 5 is none of plan.h's"},
      {[](fb::ManifestT& t) { t.outputs[1]->width = 0; }, "output \"act\" has no name or a width of 0"},
      {[](fb::ManifestT& t) { t.outputs[1]->name = "logits"; }, "output \"logits\" is named twice"},
      {[](fb::ManifestT& t) { t.outputs.clear(); }, "the model has no outputs"},
      {[](fb::ManifestT& t) { t.padding_id = int64_t(t.vocab); }, "padding id 4096 is no token id"},
      {[](fb::ManifestT& t) { t.padding_id = -2; }, "padding id -2 is no token id"},
      {[](fb::ManifestT& t) { t.padding_id = 3; }, "" /* a token id: accepted */},
      {[](fb::ManifestT& t) { t.stages[0]->buckets.push_back(99); }, "names a bucket out of range"},
      {[](fb::ManifestT& t) { t.gather_limits.push_back(std::make_unique<fb::GatherLimitT>()); },
       "" /* an index of ids: a batch index, accepted */},
  };
  for (const auto& [change, want] : cases) {
    const std::optional<std::string> why = readChanged(change);
    if (!*want) {
      EXPECT_EQ(why, std::nullopt);
      continue;
    }
    ASSERT_TRUE(why) << "accepted; wanted: " << want;
    EXPECT_NE(why->find(want), std::string::npos) << *why;
  }
}

TEST(ManifestRoundTrip, BytesThatAreNoManifestAreRefusedBeforeAnyField) {
  std::string bytes = manifestBytes();
  std::vector<uint64_t> aligned(bytes.size() / 8 + 1);
  for (size_t cut : {size_t(0), size_t(7), bytes.size() / 3, bytes.size() / 2}) {  // the tail may be padding
    std::memcpy(aligned.data(), bytes.data(), cut);
    ModelImpl m;
    const std::optional<std::string> why = readManifest(reinterpret_cast<const uint8_t*>(aligned.data()), cut, m);
    ASSERT_TRUE(why) << "a manifest cut to " << cut << " bytes was read";
    EXPECT_NE(why->find("FlatBuffers' verifier refused it"), std::string::npos) << *why;
    EXPECT_TRUE(m.buckets.empty());
  }
}

}  // namespace
}  // namespace kime
