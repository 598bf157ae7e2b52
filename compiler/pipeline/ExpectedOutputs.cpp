#include "ExpectedOutputs.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "reference/Reference.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

namespace {

using json::Json;

// The file's keys (docs/onnx.md; kime.onnx.expected_outputs writes such files).
namespace key {
constexpr const char cases[] = "cases", name[] = "name", batch[] = "batch", logits[] = "logits", act[] = "act";
}

ExpectedCase parseCase(const Json& c, const std::string& where) {
  json::requireObject(c, where);
  json::onlyKeys(c, {key::name, key::batch, key::logits, key::act}, where);
  ExpectedCase out;
  out.name = c.contains(key::name) ? json::stringField(c, key::name, where) : where;
  try {
    out.batch = tooling::parseBatchJson(json::field(c, key::batch, where).dump(), where + ": batch");
    out.logits = json::field(c, key::logits, where).get<std::vector<double>>();
    out.act = json::field(c, key::act, where).get<std::vector<std::array<double, 2>>>();
  } catch (const CompileError&) {
    throw;
  } catch (const std::exception& e) {
    throw CompileError(where + ": " + e.what());
  }
  const size_t seqs = out.batch.cu.empty() ? 0 : out.batch.cu.size() - 1;
  if (out.logits.size() != out.batch.markers.size() || out.act.size() != seqs)
    throw CompileError(where + ": " + std::to_string(out.logits.size()) + " logits and " +
                       std::to_string(out.act.size()) + " act pairs for a batch of " +
                       std::to_string(out.batch.markers.size()) + " markers and " + std::to_string(seqs) +
                       " sequences");
  return out;
}

}  // namespace

std::vector<ExpectedCase> parseExpectedOutputs(const std::string& text, const std::string& source) {
  const Json j = json::parse(text, source);
  json::requireObject(j, source);
  json::onlyKeys(j, {key::cases, "made_by"}, source);
  const Json& cases = json::field(j, key::cases, source);
  if (!cases.is_array() || cases.empty())
    throw CompileError(source + ": \"cases\" must be a list of at least one case");
  std::vector<ExpectedCase> out;
  for (size_t i = 0; i < cases.size(); ++i) out.push_back(parseCase(cases[i], source + ": case " + std::to_string(i)));
  return out;
}

std::vector<ExpectedCase> readExpectedOutputs(const std::string& path) {
  return parseExpectedOutputs(json::readFile(path), path);
}

ExpectedDifference compareWithReference(const Graph& g, const Checkpoint& ck, const std::vector<ExpectedCase>& cases) {
  RefSession reference(g, ck);
  ExpectedDifference d;
  for (const ExpectedCase& c : cases) {
    RefOutputs got;
    if (auto err = reference.evaluate(c.batch.view(), got))
      throw CompileError("expected outputs: case \"" + c.name + "\": " + err->text());
    auto check = [&](double x, double want, const std::string& what) {
      const double diff = std::fabs(x - want), allowed = kF32Tolerance.abs + kF32Tolerance.rel * std::fabs(want);
      d.maxAbs = std::max(d.maxAbs, diff);
      if (diff / allowed > d.overBy) {
        d.overBy = diff / allowed;
        char text[200];
        std::snprintf(text, sizeof text, "case \"%s\": %s is %.9g in kime's reference, %.9g expected", c.name.c_str(),
                      what.c_str(), x, want);
        d.worst = text;
      }
    };
    for (size_t i = 0; i < c.logits.size(); ++i) check(got.logits[i], c.logits[i], "logit " + std::to_string(i));
    for (size_t s = 0; s < c.act.size(); ++s)
      for (int k = 0; k < 2; ++k)
        check(got.act[s][k], c.act[s][k], "act " + std::to_string(s) + "." + std::to_string(k));
  }
  return d;
}

}  // namespace kime
