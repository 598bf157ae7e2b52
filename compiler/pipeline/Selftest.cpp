#include "pipeline/Selftest.h"

#include <nlohmann/json.hpp>

#include "cache/ContentHash.h"
#include "kime/plan.h"
#include "kime/schema/selftest_generated.h"
#include "kime/tooling/BatchGen.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace kime {

namespace {

using OJson = nlohmann::ordered_json;

OJson batchJson(const tooling::OwnedBatch& b) {
  return {{kime_plan_input_names[KIME_INPUT_IDS], b.ids},
          {kime_plan_input_names[KIME_INPUT_CU], b.cu},
          {kime_plan_input_names[KIME_INPUT_MARKERS], b.markers},
          {kime_plan_input_names[KIME_INPUT_MCU], b.mcu},
          {kime_plan_input_names[KIME_INPUT_QTYPE], b.qtype}};
}

namespace fb = kime::schema;

// The reference's outputs as the cache keeps them (JSON, this file's own): {"outputs": [[...], ...]},
// each output's values row-major, in the Graph's order.
constexpr const char kOutputs[] = "outputs";

struct Drawn {
  std::string stage;
  size_t bucket;
  tooling::NamedBatch batch;
};

// A bucket's batches are drawn from a seed of its bounds, not of its place in the bucket file.
uint64_t bucketSeed(const Bucket& b) {
  return 31 + uint64_t(b.tokens) * 1000003u + uint64_t(b.seqs) * 1009u + uint64_t(b.markers);
}

// The reference's outputs of each batch: from the cache, or evaluated in a child process.
std::vector<OJson> referenceOutputs(const Graph& g, const Checkpoint& ck, const std::vector<Drawn>& drawn,
                                    const ReferenceCache& cache) {
  std::vector<OJson> out(drawn.size());
  std::vector<std::string> keys;
  std::vector<size_t> missing;
  for (size_t i = 0; i < drawn.size(); ++i) {
    keys.push_back(
        ContentHash().add("reference outputs").add(cache.model).add(batchJson(drawn[i].batch.batch).dump()).hex());
    std::optional<std::string> hit = cache.cache ? cache.cache->get(keys.back()) : std::nullopt;
    if (hit) out[i] = OJson::parse(*hit, nullptr, false);
    const bool whole = hit && out[i].is_object() && out[i].contains(kOutputs) && out[i][kOutputs].is_array() &&
                       out[i][kOutputs].size() == g.outputs.size();
    if (!whole) missing.push_back(i);
  }
  if (missing.empty()) return out;
  // In one child process, one batch at a time on every core: the session shares the repacked
  // weights and the intermediates' storage between batches, and the compiler's own process, which
  // forks kernel builds meanwhile, never holds (and copies on write) those hundreds of MB.
  mapInChildren(
      1, 1,
      [&](size_t) {
        RefSession reference(g, ck);
        OJson all = OJson::array();
        for (size_t i : missing) {
          RefOutputs want;
          if (auto err = reference.evaluate(drawn[i].batch.batch.view(), want))
            throw CompileError("--selftest: reference: " + err->text());
          all.push_back({{kOutputs, want.values}});
        }
        return all.dump();
      },
      [&](size_t, std::string text) {
        OJson all = OJson::parse(text);
        for (size_t k = 0; k < missing.size(); ++k) {
          out[missing[k]] = all.at(k);
          if (cache.cache) cache.cache->put(keys[missing[k]], out[missing[k]].dump());
        }
      },
      [](size_t) { return std::string(); });
  return out;
}

// Round robin over the buckets, each bucket's batches in bucketBatches' order (its edge cases).
std::vector<Drawn> draw(const Graph& g, const std::vector<Stage>& stages, size_t count) {
  checkSelftestCount(stages, count);
  struct Pool {
    const Stage& stage;
    size_t bucket;
    std::vector<tooling::NamedBatch> batches;
  };
  std::vector<Pool> pools;
  for (const Stage& st : stages)
    for (size_t i = 0; i < st.buckets.size(); ++i)
      pools.push_back({st, i,
                       tooling::bucketBatches(st.buckets[i], size_t(g.vocab), size_t(g.types), learnedPositions(g),
                                              bucketSeed(st.buckets[i]), g.paddingId)});
  std::vector<Drawn> out;
  for (size_t round = 0; out.size() < count; ++round) {
    size_t before = out.size();
    for (const Pool& p : pools)
      if (round < p.batches.size() && out.size() < count) out.push_back({p.stage.name, p.bucket, p.batches[round]});
    if (out.size() == before) break;  // every pool spent
  }
  return out;
}

}  // namespace

void checkSelftestCount(const std::vector<Stage>& stages, size_t count) {
  size_t buckets = 0;
  for (const Stage& st : stages) buckets += st.buckets.size();
  if (count < buckets)
    throw CompileError("--selftest " + std::to_string(count) + ": the model has " + std::to_string(buckets) +
                       " buckets, and each needs a batch; ask for at least that many");
}

namespace {

std::unique_ptr<fb::CaseT> caseOf(const std::string& stage, size_t bucket, const std::string& name,
                                  const tooling::OwnedBatch& b, const RefOutputs& outputs) {
  auto c = std::make_unique<fb::CaseT>();
  c->stage = stage;
  c->bucket = uint32_t(bucket);
  c->name = name;
  c->ids = b.ids;
  c->cu = b.cu;
  c->markers = b.markers;
  c->mcu = b.mcu;
  c->qtype = b.qtype;
  for (const std::vector<double>& v : outputs.values) {
    c->outputs.push_back(std::make_unique<fb::ValuesT>());
    c->outputs.back()->values = v;
  }
  return c;
}

// The section: the tolerance per arithmetic (plan.h's kime_arith order), then the cases.
Section sectionOf(Tolerance cpu, std::vector<std::unique_ptr<fb::CaseT>> cases) {
  fb::SelftestT t;
  t.tolerance = {fb::Tolerance(cpu.abs, cpu.rel), fb::Tolerance(kTf32Tolerance.abs, kTf32Tolerance.rel),
                 fb::Tolerance(kF32Tolerance.abs, kF32Tolerance.rel)};
  static_assert(KIME_ARITH_CPU == 0 && KIME_ARITH_TF32 == 1 && KIME_ARITH_F32 == 2 && KIME_ARITH_COUNT == 3);
  t.cases = std::move(cases);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);  // every field present: tests damage them in place
  fbb.Finish(fb::Selftest::Pack(fbb, &t), fb::SelftestIdentifier());
  return {KIME_SECTION_SELFTEST, std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize())};
}

}  // namespace

Section expectedSelftestSection(const std::vector<ExpectedCase>& cases, const std::vector<OutputDesc>& outputs,
                                const std::vector<Stage>& stages, Tolerance cpu) {
  std::vector<std::unique_ptr<fb::CaseT>> out;
  for (const ExpectedCase& c : cases) {
    const tooling::OwnedBatch& b = c.batch;
    const size_t seqs = b.cu.empty() ? 0 : b.cu.size() - 1;
    bool held = false;
    for (const Stage& st : stages)  // in the first bucket of each stage that holds it
      for (size_t i = 0; i < st.buckets.size(); ++i)
        if (st.buckets[i].holds(b.ids.size(), seqs, b.markers.size())) {
          out.push_back(caseOf(st.name, i, c.name, c.batch, c.inOrder(outputs)));
          held = true;
          break;
        }
    if (!held)
      throw CompileError("--selftest-from: case \"" + c.name + "\" (" + std::to_string(b.ids.size()) + " tokens, " +
                         std::to_string(seqs) + " sequences, " + std::to_string(b.markers.size()) +
                         " markers) fits no bucket");
  }
  return sectionOf(cpu, std::move(out));
}

Section selftestSection(const Graph& g, const Checkpoint& ck, const std::vector<Stage>& stages, size_t count,
                        Tolerance cpu, const ReferenceCache& cache) {
  const std::vector<Drawn> drawn = draw(g, stages, count);
  const std::vector<OJson> outputs = referenceOutputs(g, ck, drawn, cache);
  std::vector<std::unique_ptr<fb::CaseT>> cases;
  for (size_t i = 0; i < drawn.size(); ++i)
    cases.push_back(caseOf(drawn[i].stage, drawn[i].bucket, drawn[i].batch.name, drawn[i].batch.batch,
                           {outputs[i].at(kOutputs).get<std::vector<std::vector<double>>>()}));
  return sectionOf(cpu, std::move(cases));
}

}  // namespace kime
