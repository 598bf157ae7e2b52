// kime-plan-memory: one arena per bucket, offsets from liveness, best-fit reuse.
#include <map>

#include "kime/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kime {
#define GEN_PASS_DEF_PLANMEMORY
#include "kime/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kAlign = 64;

int64_t alignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Bytes of a kernel result at the bucket's bounds; -1 when a size is unbounded.
int64_t boundBytes(Type t) {
  ::kime::shapes::Shape s = cast<KimeTensorType>(t).toShape();
  int64_t n = 4;
  for (const auto& d : s.dims) {
    int64_t e = d.isStatic() ? d.value : d.bound;
    if (e <= 0) return -1;
    n *= e;
  }
  return n;
}

// Free ranges of the arena by offset; allocation takes the smallest range that fits.
class Arena {
 public:
  int64_t allocate(int64_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    if (best == free_.end()) {
      // Grow: a free range at the end is extended rather than left behind.
      if (!free_.empty() && free_.rbegin()->first + free_.rbegin()->second == end_) {
        int64_t off = free_.rbegin()->first;
        free_.erase(off);
        end_ = off + size;
        return off;
      }
      int64_t off = end_;
      end_ += size;
      return off;
    }
    int64_t off = best->first, rest = best->second - size;
    free_.erase(best);
    if (rest > 0) free_[off + size] = rest;
    return off;
  }
  void release(int64_t off, int64_t size) {
    auto [it, ok] = free_.emplace(off, size);
    // Merge with the neighbours so that later large values can reuse the space.
    if (auto next = std::next(it); next != free_.end() && off + size == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t size() const { return end_; }

 private:
  std::map<int64_t, int64_t> free_;
  int64_t end_ = 0;
};

struct PlanMemoryPass : impl::PlanMemoryBase<PlanMemoryPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    SmallVector<KernelOpInterface> kernels;
    fn.walk([&](KernelOpInterface k) { kernels.push_back(k); });
    DenseMap<Operation*, size_t> index;
    for (size_t i = 0; i < kernels.size(); ++i) index[kernels[i]] = i;

    // Last use of each result: the latest kernel that reads it; the end when it is returned.
    std::vector<size_t> lastUse(kernels.size());
    for (size_t i = 0; i < kernels.size(); ++i) {
      lastUse[i] = i;
      for (Operation* user : kernels[i]->getResult(0).getUsers())
        lastUse[i] = isa<KernelOpInterface>(user) ? std::max(lastUse[i], index.lookup(user)) : kernels.size();
    }

    Arena arena;
    Builder b(fn.getContext());
    std::vector<int64_t> offsets(kernels.size()), sizes(kernels.size());
    for (size_t i = 0; i < kernels.size(); ++i) {
      sizes[i] = boundBytes(kernels[i]->getResult(0).getType());
      if (sizes[i] < 0) {
        kernels[i].emitOpError("has an unbounded size; run kime-specialize-bucket first");
        return signalPassFailure();
      }
      sizes[i] = alignUp(sizes[i]);
      // A kernel's output must not overlap its inputs, so frees happen after the allocation.
      offsets[i] = arena.allocate(sizes[i]);
      kernels[i].setArenaOffset(offsets[i]);
      for (size_t j = 0; j <= i; ++j)
        if (lastUse[j] == i) arena.release(offsets[j], sizes[j]);
    }
    fn->setAttr(kArenaAttr, b.getI64IntegerAttr(arena.size()));
  }
};

}  // namespace
}  // namespace mlir::kime
