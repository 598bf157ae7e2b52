// PTX modules made in child processes, `jobs` at once, through the kernel cache.
#include "CudaKernels.h"
#include "cache/ContentHash.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace kime::cuda {

void compilePtx(std::vector<PtxJob>& ptx, int jobs, KernelCache* cache) {
  std::vector<std::string> keys;
  std::vector<size_t> missing;
  for (size_t i = 0; i < ptx.size(); ++i) {
    keys.push_back(
        ContentHash().add("ptx").add(compilerIdentity()).add(ptxToolchain()).add(ptx[i].arch).add(ptx[i].source).hex());
    std::optional<std::string> hit = cache ? cache->get(keys.back()) : std::nullopt;
    if (hit) {
      ptx[i].ptx = std::move(*hit);
      ptx[i].cached = true;
    } else {
      missing.push_back(i);
    }
  }
  TempDir dir;
  auto file = [&](size_t i) { return (dir.path() / (std::to_string(i) + ".ptx")).string(); };
  std::string error;
  forEachInChild(
      missing.size(), jobs,
      [&](size_t i) { json::writeFileAtomic(file(i), compileToPtx(ptx[missing[i]].source, ptx[missing[i]].arch)); },
      [&](size_t i, const std::string& e) {
        if (!e.empty()) {
          if (error.empty()) error = e;
          return;
        }
        PtxJob& p = ptx[missing[i]];
        p.ptx = json::readFile(file(i));
        if (cache) cache->put(keys[missing[i]], p.ptx);
      });
  if (!error.empty()) throw CompileError(error);
}

}  // namespace kime::cuda
