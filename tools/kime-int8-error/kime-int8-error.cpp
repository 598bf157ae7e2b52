// kime-int8-error: what int8 linears (--cpu-precision int8 or int8pairs, quant/Int8.h) cost a model
// in accuracy.
// Evaluates the f64 reference twice on generated batches of every bucket (kime-compile's
// self-test batches, several seeds): exactly, and with the linears that take int8 computing as the
// int8 kernels do. Prints, per bucket and in total, the largest output, the largest error, and the
// error at the 99th percentile, for logits and act apart.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "buckets/Buckets.h"
#include "common/Args.h"
#include "kime/tooling/BatchGen.h"
#include "reference/Reference.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

constexpr const char* kUsage =
    "usage: kime-int8-error GRAPH.json --weights MODEL.safetensors --buckets BUCKETS.json [--seeds N]\n"
    "                       [--cpu-precision int8|int8pairs]   (default int8)\n";

// The errors of one output (logits or act) over some batches.
struct Errors {
  std::vector<double> err;
  double largest = 0;  // the largest |output|

  void add(double got, double want) {
    err.push_back(std::fabs(got - want));
    largest = std::max(largest, std::fabs(want));
  }
  void add(const Errors& o) {
    err.insert(err.end(), o.err.begin(), o.err.end());
    largest = std::max(largest, o.largest);
  }
  double quantile(double q) {
    if (err.empty()) return 0;
    std::sort(err.begin(), err.end());
    return err[std::min(err.size() - 1, size_t(q * double(err.size())))];
  }
};

std::string row(const std::string& where, Errors& e) {
  char line[256];
  std::snprintf(line, sizeof line, "| %s | %zu | %.4g | %.3g | %.3g | %.3g |", where.c_str(), e.err.size(), e.largest,
                e.err.empty() ? 0.0 : *std::max_element(e.err.begin(), e.err.end()), e.quantile(0.99),
                e.largest > 0 && !e.err.empty() ? *std::max_element(e.err.begin(), e.err.end()) / e.largest : 0.0);
  return line;
}

int run(int argc, char** argv) {
  const tools::Args a =
      tools::Args::parse(argc, argv, {"--weights", "--buckets", "--seeds", "--cpu-precision"}, {"--help"});
  if (a.has("--help")) return std::cout << kUsage, 0;
  if (a.positional.size() != 1 || !a.has("--weights") || !a.has("--buckets")) return std::cerr << kUsage, 2;
  const Graph g = readGraphFile(a.positional[0]);
  const auto ck = Checkpoint::open(a.get("--weights"));
  const std::vector<Stage> stages = readBucketsFile(a.get("--buckets"));
  const int seeds = std::stoi(a.get("--seeds", "3"));
  const std::string asked = a.get("--cpu-precision", "int8");
  const std::optional<Arithmetic> precision = parseChoice<Arithmetic>(asked);
  if (!precision || !isInt8(*precision))
    throw CompileError("--cpu-precision must be int8 or int8pairs, not \"" + asked + "\"");
  RefSession exact(g, *ck), int8(g, *ck, *precision);
  std::cout << "| bucket | outputs | largest |output| | largest error | 99th percentile | largest / largest output |\n"
               "| --- | --- | --- | --- | --- | --- |\n";
  const std::vector<OutputDesc> outputs = outputDescs(g);
  std::vector<Errors> all(outputs.size());
  for (const Stage& st : stages)
    for (const Bucket& b : st.buckets) {
      std::vector<Errors> errors(outputs.size());
      for (int s = 1; s <= seeds; ++s)
        for (const auto& nb :
             tooling::bucketBatches(b, size_t(g.vocab), size_t(g.types), learnedPositions(g), s, g.paddingId)) {
          RefOutputs want, got;
          if (auto err = exact.evaluate(nb.batch.view(), want)) throw CompileError(err->text());
          if (auto err = int8.evaluate(nb.batch.view(), got)) throw CompileError(err->text());
          forEachOutputValue(got, want, [&](double x, double y, size_t o, size_t) { errors[o].add(x, y); });
        }
      const std::string name = st.name + " " + std::to_string(b.tokens) + "x" + std::to_string(b.seqs);
      for (size_t o = 0; o < outputs.size(); ++o) {
        std::cout << row(name + " " + outputs[o].name, errors[o]) << "\n";
        all[o].add(errors[o]);
      }
    }
  for (size_t o = 0; o < outputs.size(); ++o) std::cout << row("all " + outputs[o].name, all[o]) << "\n";
  return 0;
}

}  // namespace
}  // namespace kime

int main(int argc, char** argv) {
  try {
    return kime::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kime-int8-error: " << e.what() << "\n";
    return 1;
  }
}
