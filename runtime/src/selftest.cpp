// The artifact's self-test section (KIME_SECTION_SELFTEST, written by kime-compile --selftest):
// read only here, on request, never when a model is opened.
#include <cmath>
#include <cstdio>
#include <map>

#include "kime/schema/selftest_generated.h"
#include "model_impl.h"

namespace kime {

namespace {

struct Case {
  std::string stage, name;
  size_t bucket = 0;
  std::vector<uint32_t> ids, cu, markers, mcu;
  std::vector<uint8_t> qtype;
  OutputValues<double> outputs;  // in the model's order
};

using Tol = std::array<double, 2>;  // abs, rel

struct Section {
  std::map<std::string, Tol> tolerance;  // by arithmetic: cpu, tf32, f32
  std::vector<Case> cases;
};

template <typename T>
std::vector<T> copy(const flatbuffers::Vector<T>& v) {
  return {v.begin(), v.end()};
}

// Throws runtime_error naming the problem where the section is unsound.
Section readSection(const ModelImpl& m) {
  const SectionInfo* s = m.section(KIME_SECTION_SELFTEST);
  flatbuffers::Verifier verifier(m.map + s->offset, s->size, /*max_depth=*/8, /*max_tables=*/uint32_t(1) << 24);
  if (!schema::VerifySelftestBuffer(verifier))
    throw std::runtime_error("FlatBuffers' verifier refused it against selftest.fbs (damaged, or of another format)");
  const schema::Selftest& j = *schema::GetSelftest(m.map + s->offset);
  if (j.tolerance()->size() != KIME_ARITH_COUNT)
    throw std::runtime_error(std::to_string(j.tolerance()->size()) + " tolerances for plan.h's " +
                             std::to_string(KIME_ARITH_COUNT) + " arithmetics");
  Section out;
  for (unsigned a = 0; a < KIME_ARITH_COUNT; ++a)
    out.tolerance[kime_arith_names[a]] = {j.tolerance()->Get(a)->abs(), j.tolerance()->Get(a)->rel()};
  for (const schema::Case* c : *j.cases()) {
    Case k{c->stage()->str(), c->name()->str(),  c->bucket(), copy(*c->ids()), copy(*c->cu()), copy(*c->markers()),
           copy(*c->mcu()),   copy(*c->qtype()), {}};
    if (c->outputs()->size() != m.outputs.size())
      throw std::runtime_error("case \"" + k.name + "\" has " + std::to_string(c->outputs()->size()) +
                               " outputs, the model " + std::to_string(m.outputs.size()));
    for (const schema::Values* v : *c->outputs()) k.outputs.values.push_back(copy(*v->values()));
    const StageInfo* stage = nullptr;
    for (const StageInfo& st : m.stages)
      if (st.name == k.stage) stage = &st;
    if (!stage) throw std::runtime_error("a case names stage \"" + k.stage + "\", which the model lacks");
    if (k.bucket >= stage->buckets.size())
      throw std::runtime_error("a case names bucket " + std::to_string(k.bucket) + " of stage " + k.stage +
                               ", which has " + std::to_string(stage->buckets.size()));
    out.cases.push_back(std::move(k));
  }
  return out;
}

// The section of an artifact that has one, parsed and checked.
Expected<Section> parseSection(const ModelImpl& m) {
  try {
    return readSection(m);
  } catch (const std::exception& e) {
    return Error::unsupported(m.path + ": bad self-test section: " + e.what());
  }
}

// Compares one case's outputs; the first value out of tolerance goes to `b.failure`.
void compare(const Case& c, const std::vector<OutputDesc>& outputs, const Outputs& got, SelftestBucket& b) {
  const bool same = forEachOutputValue(got, c.outputs, [&](double x, double want, size_t o, size_t k) {
    const double d = std::fabs(x - want);
    b.maxDiff = std::max(b.maxDiff, d);
    if (!(d <= b.abs + b.rel * std::fabs(want)) && b.failure.empty()) {
      char text[200];
      std::snprintf(text, sizeof text, "batch \"%s\": %s is %.9g but the reference says %.9g", c.name.c_str(),
                    describeOutputValue(outputs[o], k).c_str(), x, want);
      b.failure = text;
    }
  });
  if (!same && b.failure.empty()) b.failure = "batch \"" + c.name + "\": outputs of the wrong size";
}

// Runs every case of stage `stage` on one executor, into report buckets (found or added).
std::optional<Error> runStage(std::shared_ptr<Model> model, const ExecutorOptions& options, const Section& sec,
                              const std::string& stage, Tol tol, SelftestReport& report) {
  auto exec = Executor::create(model, stage, options);
  if (!exec) return exec.error();
  report.device = (*exec)->deviceDescription();
  const std::vector<Bucket> buckets = model->buckets(stage);
  Outputs out;
  for (const Case& c : sec.cases) {
    if (c.stage != stage) continue;
    SelftestBucket* b = nullptr;
    for (SelftestBucket& x : report.buckets)
      if (x.stage == stage && x.bucket == buckets[c.bucket]) b = &x;
    if (!b) {
      report.buckets.push_back({stage, buckets[c.bucket], 0, 0, tol[0], tol[1], ""});
      b = &report.buckets.back();
    }
    ++b->batches;
    const Batch batch{c.ids, c.cu, c.markers, c.mcu, c.qtype};
    if (auto err = (*exec)->runInBucket(c.bucket, batch, out)) {
      if (b->failure.empty()) b->failure = "batch \"" + c.name + "\": " + err->text();
      continue;
    }
    compare(c, model->outputs(), out, *b);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> checkSelftestSection(const ModelImpl& m) {
  if (!m.section(KIME_SECTION_SELFTEST)) return std::nullopt;
  auto sec = parseSection(m);
  if (!sec) return sec.error();
  return std::nullopt;
}

bool SelftestReport::passed() const {
  for (const SelftestBucket& b : buckets)
    if (!b.failure.empty()) return false;
  return !buckets.empty();
}

std::string SelftestReport::text() const {
  std::string s = "selftest on " + device + "\n";
  size_t failed = 0;
  for (const SelftestBucket& b : buckets) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "  stage %s bucket %s: %zu batches, max |diff| %.2e (tolerance %g + %g |want|): ", b.stage.c_str(),
                  describe(b.bucket).c_str(), b.batches, b.maxDiff, b.abs, b.rel);
    s += line + (b.failure.empty() ? std::string("ok") : "FAILED: " + b.failure) + "\n";
    failed += !b.failure.empty();
  }
  s += failed ? "selftest: FAILED (" + std::to_string(failed) + " of " + std::to_string(buckets.size()) + " buckets)\n"
              : "selftest: passed (" + std::to_string(buckets.size()) + " buckets)\n";
  return s;
}

Expected<SelftestReport> runSelftest(std::shared_ptr<Model> model, const ExecutorOptions& options) {
  const ModelImpl& m = model->impl();
  if (!m.section(KIME_SECTION_SELFTEST))
    return Error::unsupported(m.path +
                              ": the artifact has no self-test section (compile it with kime-compile --selftest N)");
  auto sec = parseSection(m);
  if (!sec) return sec.error();
  // An unknown CUDA math has no tolerance; Executor::create refuses it by name before any run.
  auto tol = sec->tolerance.find(options.device == "cuda" ? options.cudaMath : kime_arith_names[KIME_ARITH_CPU]);
  SelftestReport report;
  for (const std::string& stage : model->stages())
    if (auto err = runStage(model, options, *sec, stage, tol == sec->tolerance.end() ? Tol{} : tol->second, report))
      return *err;
  return report;
}

}  // namespace kime
