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

// The file's keys (docs/onnx.md; kime.onnx.expected_outputs writes such files): every other key of
// a case is an output.
namespace key {
constexpr const char cases[] = "cases", name[] = "name", batch[] = "batch";
}

// A list of numbers (width 1) or of lists of one length.
ExpectedCase::Output parseOutput(const std::string& name, const Json& v, const std::string& where) {
  ExpectedCase::Output o{name, {}, 1};
  if (!v.is_array()) throw CompileError(where + ": output \"" + name + "\" must be a list");
  for (size_t r = 0; r < v.size(); ++r) {
    if (v[r].is_array()) {
      if (r == 0) o.width = v[r].size();
      if (v[r].size() != o.width || o.width == 0)
        throw CompileError(where + ": output \"" + name + "\" row " + std::to_string(r) + " has " +
                           std::to_string(v[r].size()) + " values, not " + std::to_string(o.width));
      for (const Json& x : v[r]) o.values.push_back(x.get<double>());
    } else {
      if (r > 0 && o.width != 1) throw CompileError(where + ": output \"" + name + "\" mixes numbers and lists");
      o.values.push_back(v[r].get<double>());
    }
  }
  return o;
}

ExpectedCase parseCase(const Json& c, const std::string& where) {
  json::requireObject(c, where);
  ExpectedCase out;
  out.name = c.contains(key::name) ? json::stringField(c, key::name, where) : where;
  try {
    out.batch = tooling::parseBatchJson(json::field(c, key::batch, where).dump(), where + ": batch");
    for (const auto& [k, v] : c.items())
      if (k != key::name && k != key::batch) out.outputs.push_back(parseOutput(k, v, where));
  } catch (const CompileError&) {
    throw;
  } catch (const std::exception& e) {
    throw CompileError(where + ": " + e.what());
  }
  if (out.outputs.empty()) throw CompileError(where + ": the case has no outputs");
  return out;
}

// Output `o`'s values of case `c`, checked against its shape for the case's batch.
const std::vector<double>* valuesOf(const ExpectedCase& c, const OutputDesc& o, bool required) {
  for (const ExpectedCase::Output& x : c.outputs) {
    if (x.name != o.name) continue;
    const size_t seqs = c.batch.cu.empty() ? 0 : c.batch.cu.size() - 1;
    const size_t rows = o.rows(seqs, c.batch.markers.size());
    if (x.values.size() != rows * o.width || (x.width != 1 && x.width != o.width))
      throw CompileError("expected outputs: case \"" + c.name + "\": output \"" + o.name + "\" has " +
                         std::to_string(x.values.size()) + " values, not " + std::to_string(rows) + " rows of " +
                         std::to_string(o.width) + " (" + outputKindName(o.kind) + ")");
    return &x.values;
  }
  if (required) throw CompileError("expected outputs: case \"" + c.name + "\" has no output \"" + o.name + "\"");
  return nullptr;
}

// Every output a case holds is one of the model's.
void checkNames(const ExpectedCase& c, const std::vector<OutputDesc>& descs) {
  for (const ExpectedCase::Output& x : c.outputs)
    if (outputIndex(descs, x.name) < 0)
      throw CompileError("expected outputs: case \"" + c.name + "\" has output \"" + x.name +
                         "\", which the model has not");
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

RefOutputs ExpectedCase::inOrder(const std::vector<OutputDesc>& descs) const {
  checkNames(*this, descs);
  RefOutputs out;
  for (const OutputDesc& o : descs) out.values.push_back(*valuesOf(*this, o, true));
  return out;
}

ExpectedDifference compareWithReference(const Graph& g, const Checkpoint& ck, const std::vector<ExpectedCase>& cases) {
  RefSession reference(g, ck);
  const std::vector<OutputDesc> descs = outputDescs(g);
  ExpectedDifference d;
  for (const ExpectedCase& c : cases) {
    checkNames(c, descs);
    RefOutputs got;
    if (auto err = reference.evaluate(c.batch.view(), got))
      throw CompileError("expected outputs: case \"" + c.name + "\": " + err->text());
    for (size_t i = 0; i < descs.size(); ++i) {
      const std::vector<double>* want = valuesOf(c, descs[i], false);
      for (size_t k = 0; want && k < want->size(); ++k) {
        const double x = got[i][k], y = (*want)[k];
        const double diff = std::fabs(x - y), allowed = kF32Tolerance.abs + kF32Tolerance.rel * std::fabs(y);
        const double over = std::isnan(diff) ? HUGE_VAL : diff / allowed;  // a NaN is never within
        d.maxAbs = std::max(d.maxAbs, diff);
        if (over > d.overBy) {
          d.overBy = over;
          char text[240];
          std::snprintf(text, sizeof text, "case \"%s\": %s is %.9g in kime's reference, %.9g expected", c.name.c_str(),
                        describeOutputValue(descs[i], k).c_str(), x, y);
          d.worst = text;
        }
      }
    }
  }
  return d;
}

}  // namespace kime
