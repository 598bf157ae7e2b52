// kime-run MODEL BATCH.json... [--stats [--json]]: runs batch files one after another on one
// executor; prints each one's outputs, or with --stats the executor's shape statistics after the
// last (with --json, the sizes of the batches as JSON lines for kime-buckets, and the table on
// stderr).
#include <cstdio>
#include <iostream>
#include <sstream>

#include "RunBatches.h"
#include "kime/tooling/BatchFile.h"

namespace kime::tools {

namespace {

std::string fillHistogram(const uint64_t (&bins)[KIME_STATS_BINS]) {
  std::string s;
  for (uint64_t n : bins) s += (s.empty() ? "" : " ") + std::to_string(n);
  return s;
}

double meanFill(const kime_bucket_stats& b, int kind, uint32_t bound) {
  return b.batches && bound ? double(b.total[kind]) / double(b.batches) / double(bound) : 0.0;
}

// The executor's shape statistics as a table.
std::string statsTable(const Executor& exec) {
  const kime_stats t = exec.stats();
  std::ostringstream out;
  out << "# stage " << exec.stage() << ": " << t.batches << " batches run, " << t.bad_batches << " refused as bad, "
      << t.no_bucket << " held by no bucket\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %8s %7s %22s  %s\n", "bucket (tokens/seqs/m)", "batches", "share",
                "mean fill t / s / m", "fill of tokens, 10% bins (to 100%)");
  out << line;
  for (size_t i = 0; auto b = exec.bucketStats(i); ++i) {
    char name[64], fill[64];
    std::snprintf(name, sizeof name, "%u/%u/%u", b->bucket.tokens, b->bucket.seqs, b->bucket.markers);
    std::snprintf(fill, sizeof fill, "%.2f / %.2f / %.2f", meanFill(*b, KIME_FILL_TOKENS, b->bucket.tokens),
                  meanFill(*b, KIME_FILL_SEQS, b->bucket.seqs), meanFill(*b, KIME_FILL_MARKERS, b->bucket.markers));
    std::snprintf(line, sizeof line, "%-22s %8llu %6.1f%% %22s  %s\n", name, (unsigned long long)b->batches,
                  t.batches ? 100.0 * double(b->batches) / double(t.batches) : 0.0, fill,
                  fillHistogram(b->fill[KIME_FILL_TOKENS]).c_str());
    out << line;
  }
  if (t.no_bucket_kept) {
    out << "held by no bucket (the latest " << t.no_bucket_kept << ", tokens/seqs/markers):";
    for (uint32_t i = 0; i < t.no_bucket_kept; ++i)
      out << " " << t.no_bucket_sizes[i].tokens << "/" << t.no_bucket_sizes[i].seqs << "/"
          << t.no_bucket_sizes[i].markers;
    out << "\n";
  }
  return out.str();
}

}  // namespace

int runBatches(const Model& model, Executor& exec, const std::vector<std::string>& files, bool stats, bool json) {
  const std::vector<OutputDesc>& outputs = model.outputs();
  int status = 0;
  Outputs out;
  for (const std::string& path : files) {
    tooling::OwnedBatch b = tooling::readBatchFile(path);
    Bucket used;
    if (stats && json) {
      const Batch v = b.view();
      std::printf("{\"tokens\": %zu, \"seqs\": %zu, \"markers\": %zu}\n", v.tokens(), v.seqs(), v.markerCount());
    }
    if (auto err = exec.run(b.view(), out, &used)) {
      std::cerr << "kime-run: " << path << ": " << err->text() << "\n";
      status = 1;
      continue;
    }
    if (!stats) std::cout << tooling::runJson(used, outputs, out) << "\n";
  }
  if (stats) (json ? std::cerr : std::cout) << statsTable(exec);
  return status;
}

}  // namespace kime::tools
