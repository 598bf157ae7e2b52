// kime-specialize-bucket: bounds T, S, S+1 and M by one bucket.
#include "kime/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kime {
#define GEN_PASS_DEF_SPECIALIZEBUCKET
#include "kime/Transforms/Passes.h.inc"

namespace {

namespace shapes = ::kime::shapes;

struct SpecializeBucketPass : impl::SpecializeBucketBase<SpecializeBucketPass> {
  using SpecializeBucketBase::SpecializeBucketBase;

  Type bounded(Type t) const {
    auto kt = dyn_cast<KimeTensorType>(t);
    if (!kt) return t;
    shapes::Shape s = kt.toShape();
    for (shapes::Dim& d : s.dims) {
      if (d.isStatic()) continue;
      int64_t base = d.sym == shapes::Sym::T   ? tokens
                     : d.sym == shapes::Sym::S ? seqs
                     : d.sym == shapes::Sym::M ? markers
                                               : seqs + markers;
      d.bound = base + d.value;
    }
    return KimeTensorType::fromShape(t.getContext(), s);
  }

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (tokens <= 0 || seqs <= 0 || markers <= 0) {
      fn.emitError("kime-specialize-bucket needs positive tokens, seqs and markers");
      return signalPassFailure();
    }
    if (fn->hasAttr(kBucketAttr)) {
      fn.emitError("the function is already specialized to a bucket");
      return signalPassFailure();
    }
    fn.walk([&](Operation* op) {
      for (OpResult r : op->getResults()) r.setType(bounded(r.getType()));
    });
    for (BlockArgument a : fn.getArguments()) a.setType(bounded(a.getType()));
    SmallVector<Type> in, out;
    for (Type t : fn.getArgumentTypes()) in.push_back(bounded(t));
    for (Type t : fn.getResultTypes()) out.push_back(bounded(t));
    fn.setFunctionType(FunctionType::get(fn.getContext(), in, out));
    Builder b(fn.getContext());
    fn->setAttr(kBucketAttr, b.getDenseI64ArrayAttr({tokens, seqs, markers}));
  }
};

}  // namespace

void buildBucketPipeline(OpPassManager& pm, int64_t tokens, int64_t seqs, int64_t markers, const PipelineOptions& o) {
  OpPassManager& f = pm.nest<func::FuncOp>();
  f.addPass(createSpecializeBucket(SpecializeBucketOptions{tokens, seqs, markers}));
  if (o.pruneRows) f.addPass(createPruneRows());
  f.addPass(createFuse(FuseOptions{::kime::nameOf(o.linearArith), o.fusion}));
  f.addPass(createPlanMemory());
  f.addPass(createVerifyBackendContract());
}

}  // namespace mlir::kime
