#include "Verify.h"

#include <cmath>
#include <iomanip>

#include "kime/runtime.h"
#include "kime/tooling/BatchGen.h"
#include "support/Diagnostic.h"

namespace kime {

void verifyArtifact(const std::string& path, const Graph& g, const Checkpoint& ck, const std::vector<Stage>& stages,
                    Tolerance tolerance, std::ostream& log) {
  auto model = Model::open(path);
  if (!model) throw CompileError("--verify: " + model.error().text());
  const size_t cap = learnedPositions(g);
  size_t checked = 0;
  RefSession reference(g, ck);
  const std::vector<OutputDesc>& outputs = (*model)->outputs();
  for (const Stage& st : stages) {
    auto exec = Executor::create(*model, st.name);
    if (!exec) throw CompileError("--verify: " + exec.error().text());
    for (size_t i = 0; i < st.buckets.size(); ++i) {
      const Bucket& b = st.buckets[i];
      double worst = 0;
      for (auto& nb : tooling::bucketBatches(b, size_t(g.vocab), size_t(g.types), cap, 7 + i, g.paddingId)) {
        Outputs got;
        // In this bucket, even where a smaller one would hold the batch: every bucket sees every
        // edge case.
        if (auto err = (*exec)->runInBucket(i, nb.batch.view(), got))
          throw CompileError("--verify: stage " + st.name + " " + describe(b) + ", " + nb.name + ": " + err->text());
        RefOutputs want;
        if (auto err = reference.evaluate(nb.batch.view(), want))
          throw CompileError("--verify: reference: " + err->text());
        auto cmp = [&](double x, double y, const std::string& what) {
          worst = std::max(worst, std::fabs(x - y));
          if (!withinTolerance(x, y, tolerance))
            throw CompileError("--verify: stage " + st.name + " bucket " + describe(b) + ", batch \"" + nb.name +
                               "\": " + what + " is " + std::to_string(x) + " but the reference says " +
                               std::to_string(y));
        };
        const bool same = forEachOutputValue(got, want, [&](double x, double y, size_t o, size_t k) {
          if (!withinTolerance(x, y, tolerance)) cmp(x, y, describeOutputValue(outputs[o], k));
          worst = std::max(worst, std::fabs(x - y));
        });
        if (!same)
          throw CompileError("--verify: stage " + st.name + " bucket " + describe(b) + ", batch \"" + nb.name +
                             "\": the outputs' sizes are not the reference's");
        ++checked;
      }
      log << "verify: stage " << st.name << " bucket " << describe(b) << ": ok (max abs diff " << std::scientific
          << std::setprecision(2) << worst << std::defaultfloat << ")\n";
    }
  }
  log << "verify: " << checked << " batches match the reference within " << describe(tolerance) << "\n";
}

}  // namespace kime
