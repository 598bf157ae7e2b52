// PTX modules made a kernel at a time in child processes, through the kernel cache, then joined.
#include <sstream>

#include "CudaKernels.h"
#include "cache/ContentHash.h"
#include "support/Diagnostic.h"
#include "support/Process.h"

namespace kime::cuda {

namespace {

struct KernelPtx {
  size_t module, kernel;
  std::string source, key, ptx;
};

// Where the entries start: after the header's `.address_size` line.
size_t bodyStart(const std::string& ptx) {
  const size_t at = ptx.find(".address_size");
  if (at == std::string::npos) throw CompileError("internal: NVRTC's PTX has no .address_size line");
  const size_t end = ptx.find('\n', at);
  return end == std::string::npos ? ptx.size() : end + 1;
}

// Every other `from` in `text` made `to`.
std::string renamed(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// One module's kernels as one: the first one's header, then each entry under its artifact name.
// A kernel's PTX declares nothing at module scope but its entry (checked: anything else could
// collide with another kernel's), so the joined module is as valid as its kernels' were.
std::string join(const std::vector<const KernelPtx*>& kernels, const std::vector<std::string>& symbols,
                 const std::vector<std::string>& names) {
  std::string out = kernels.front()->ptx.substr(0, bodyStart(kernels.front()->ptx));
  for (const KernelPtx* k : kernels) {
    const std::string body = k->ptx.substr(bodyStart(k->ptx));
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && line.front() == '.' && line.rfind(".visible .entry ", 0) != 0)
        throw CompileError("internal: the PTX of kernel " + names[k->kernel] + " declares \"" + line +
                           "\" at module scope, which joining could make collide");
    out += renamed(body, symbols[k->kernel], names[k->kernel]);
  }
  return out;
}

}  // namespace

PtxCounts compilePtx(std::vector<PtxJob>& modules, const std::vector<KernelSpec>& specs,
                     const std::vector<std::string>& names, int jobs, KernelCache* cache) {
  const std::vector<std::string> symbols = kernelSymbols(specs);
  std::vector<KernelPtx> kernels;
  std::vector<KernelPtx*> missing;
  PtxCounts counts;
  for (size_t m = 0; m < modules.size(); ++m)
    for (size_t i = 0; i < specs.size(); ++i) {
      KernelPtx k{m, i, moduleSource({specs[i]}, {symbols[i]}, parseMath(modules[m].math)), "", ""};
      k.key =
          ContentHash().add("ptx").add(compilerIdentity()).add(ptxToolchain()).add(modules[m].arch).add(k.source).hex();
      kernels.push_back(std::move(k));
    }
  for (KernelPtx& k : kernels) {
    std::optional<std::string> hit = cache ? cache->get(k.key) : std::nullopt;
    if (hit) {
      k.ptx = std::move(*hit);
      ++counts.cached;
    } else {
      missing.push_back(&k);
    }
  }
  mapInChildren(
      missing.size(), jobs,
      [&](size_t i) { return compileToPtx(missing[i]->source, modules[missing[i]->module].arch); },
      [&](size_t i, std::string ptx) {
        missing[i]->ptx = std::move(ptx);
        if (cache) cache->put(missing[i]->key, missing[i]->ptx);
      },
      [&](size_t i) { return "kernel " + names[missing[i]->kernel] + ": "; });
  counts.compiled = missing.size();
  for (size_t m = 0; m < modules.size(); ++m) {
    std::vector<const KernelPtx*> of;
    for (const KernelPtx& k : kernels)
      if (k.module == m) of.push_back(&k);
    modules[m].ptx = join(of, symbols, names);
  }
  return counts;
}

}  // namespace kime::cuda
