// kime-verify-backend-contract: only what codegen can compile gets past this point.
#include "kime/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kime {
#define GEN_PASS_DEF_VERIFYBACKENDCONTRACT
#include "kime/Transforms/Passes.h.inc"

namespace {

struct VerifyBackendContractPass : impl::VerifyBackendContractBase<VerifyBackendContractPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn->hasAttr(kBucketAttr) || !fn->hasAttr(kArenaAttr)) {
      fn.emitError("backend contract: the function must be specialized to a bucket and planned");
      return signalPassFailure();
    }
    WalkResult r = fn.walk([&](Operation* op) -> WalkResult {
      if (isa<WeightOp, func::ReturnOp, func::FuncOp>(op)) return WalkResult::advance();
      // Views and index arrays: a squeeze reads its operand's memory, positions (of the tokens
      // or of the output rows) are staged by the runtime; the lowering maps each where read.
      if (isa<SqueezeOp, PositionsOp, TokenTypesOp>(op)) return WalkResult::advance();
      if (auto p = dyn_cast<OutputRowsOp>(op); p && p.getX().getDefiningOp<PositionsOp>()) return WalkResult::advance();
      // Each kernel's roles and choices are its op's verifier's to check.
      auto k = dyn_cast<KernelOpInterface>(op);
      if (!k) {
        auto node = op->getAttrOfType<StringAttr>("node");
        op->emitError("backend contract: ") << op->getName() << (node ? " \"" + node.str() + "\"" : std::string())
                                            << " is not part of any kernel class";
        return WalkResult::interrupt();
      }
      if (!k.getArenaOffset()) {
        op->emitOpError("backend contract: has no arena offset");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted()) signalPassFailure();
  }
};

}  // namespace
}  // namespace mlir::kime
