#include "pipeline/Selftest.h"

#include <nlohmann/json.hpp>

#include "kime/manifest_keys.h"
#include "kime/plan.h"
#include "kime/tooling/BatchGen.h"
#include "support/Diagnostic.h"

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

OJson toleranceJson(Tolerance t) { return OJson::array({t.abs, t.rel}); }

struct Drawn {
  std::string stage;
  size_t bucket;
  tooling::NamedBatch batch;
};

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
                                              31 + pools.size())});
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

Section selftestSection(const Graph& g, const Checkpoint& ck, const std::vector<Stage>& stages, size_t count,
                        Tolerance cpu) {
  const RefWeights w = loadRefWeights(g, ck);
  OJson cases = OJson::array();
  for (const Drawn& d : draw(g, stages, count)) {
    RefOutputs want;
    if (auto err = evaluateReference(g, w, d.batch.batch.view(), want))
      throw CompileError("--selftest: reference: " + err->text());
    OJson act = OJson::array();
    for (const auto& a : want.act) act.push_back({a[0], a[1]});
    cases.push_back({{key::stage, d.stage},
                     {key::bucket, d.bucket},
                     {key::name, d.batch.name},
                     {key::batch, batchJson(d.batch.batch)},
                     {key::logits, want.logits},
                     {key::act, act}});
  }
  OJson tolerance = {{kime_arith_names[KIME_ARITH_CPU], toleranceJson(cpu)},
                     {kime_arith_names[KIME_ARITH_TF32], toleranceJson(kTf32Tolerance)},
                     {kime_arith_names[KIME_ARITH_F32], toleranceJson(kF32Tolerance)}};
  OJson section = {{key::tolerance, tolerance}, {key::cases, cases}};
  return {KIME_SECTION_SELFTEST, section.dump()};
}

}  // namespace kime
