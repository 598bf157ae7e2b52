// kime-fuse's fallback: a generic kernel for each Graph op no fused pattern took, so that every
// valid Graph lowers. Elementwise ops that only one another read become one kernel (a postfix
// program over its inputs); gathers, norms, RoPE of any rows and means of sequences become
// kernels of their own.
#include "KernelBuilder.h"

namespace mlir::kime::fuse {

namespace {

// An elementwise chain being assembled: its postfix program, its inputs, the ops it takes in.
struct Chain {
  ::kime::eltwise::Program program;
  SmallVector<Value, KIME_ELTWISE_INPUTS> inputs;
  SmallVector<Operation*> absorbed;  // producers first
  bool deep = true;                  // producers that only the chain reads join it

  // Appends the program of `op`; false when it would need more inputs than a kernel has.
  bool append(Operation* op) {
    for (Value v : op->getOperands()) {
      Operation* def = v.getDefiningOp();
      if (deep && isElementwise(def) && v.hasOneUse()) {
        if (!append(def)) return false;
        continue;
      }
      auto it = llvm::find(inputs, v);
      if (it == inputs.end()) {
        if (inputs.size() == KIME_ELTWISE_INPUTS) return false;
        inputs.push_back(v);
        it = inputs.end() - 1;
      }
      program.push(int(it - inputs.begin()));
    }
    program.apply(fnOf(op));
    absorbed.push_back(op);
    return true;
  }
};

// Rooted at the last op of a chain: one whose result is not read by exactly one elementwise op
// (that one would take it in). Where the whole chain needs more than four inputs, the root takes
// only its own operands and the producers become chains of their own.
struct EltwisePattern : OpInterfaceRewritePattern<EltwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(EltwiseOpInterface op, PatternRewriter& rw) const override {
    Value result = op->getResult(0);
    if (result.hasOneUse() && isElementwise(*result.getUsers().begin())) return failure();
    Chain chain;
    if (!chain.append(op)) {
      chain = Chain{};
      chain.deep = false;
      chain.append(op);
    }
    KernelBuilder k{KernelClass::eltwise, op->getAttrOfType<StringAttr>("node").getValue()};
    const KernelRole roles[] = {KernelRole::x, KernelRole::in1, KernelRole::in2, KernelRole::in3};
    for (size_t i = 0; i < chain.inputs.size(); ++i) k.add(roles[i], chain.inputs[i]);
    k.choices.program = chain.program;
    k.absorbed = chain.absorbed;
    k.result = result;
    emit(k, rw);
    return success();
  }
};

// Each gather op's kind and the roles of its operands, in order.
struct GatherOf {
  GatherKind kind;
  SmallVector<KernelRole, 4> roles;
};
GatherOf gatherOf(GatherRowsOp) { return {GatherKind::rows, {KernelRole::x, KernelRole::index}}; }
GatherOf gatherOf(ExpandSeqsOp) { return {GatherKind::seqs, {KernelRole::x, KernelRole::cu}}; }
GatherOf gatherOf(FirstRowsOp) { return {GatherKind::first, {KernelRole::x, KernelRole::cu}}; }
GatherOf gatherOf(GatherMarkersOp) {
  return {GatherKind::markers, {KernelRole::x, KernelRole::cu, KernelRole::markers, KernelRole::mcu}};
}

// gather_rows, expand_seqs, first_rows, gather_markers: a gather kernel of that kind.
template <typename OpT>
struct GatherPattern : OpRewritePattern<OpT> {
  GatherPattern(MLIRContext* ctx, Arithmetic arith) : OpRewritePattern<OpT>(ctx), arith(arith) {}
  LogicalResult matchAndRewrite(OpT op, PatternRewriter& rw) const override {
    const GatherOf g = gatherOf(op);
    KernelBuilder k{KernelClass::gather, op.getNode()};
    for (size_t i = 0; i < g.roles.size(); ++i) k.add(g.roles[i], op->getOperand(i));
    k.choices.gather = g.kind;
    if (g.kind == GatherKind::rows) k.choices.arith = tableArithmetic(op->getOperand(0), op->getOperand(1), arith);
    k.absorbed = {op};
    k.result = op->getResult(0);
    emit(k, rw);
    return success();
  }
  Arithmetic arith;
};

// RoPE that no linear took (of a sum, a gathered row, or by positions that are not the
// tokens' own): a kernel of its own, the angles computed from its positions.
struct RopePattern : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RopeOp r, PatternRewriter& rw) const override {
    KernelBuilder k{KernelClass::rope, r.getNode()};
    k.add(KernelRole::x, r.getX());
    k.add(KernelRole::index, r.getPos());
    k.choices.ropeHeads = r.getHeadsAttr();
    k.choices.ropeTheta = r.getThetaAttr();
    k.absorbed = {r};
    k.result = r.getResult();
    emit(k, rw);
    return success();
  }
};

// mean_seqs: a pool kernel.
struct PoolPattern : OpRewritePattern<MeanSeqsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MeanSeqsOp m, PatternRewriter& rw) const override {
    KernelBuilder k{KernelClass::pool, m.getNode()};
    k.add(KernelRole::x, m.getX());
    k.add(KernelRole::cu, m.getCu());
    k.absorbed = {m};
    k.result = m.getResult();
    emit(k, rw);
    return success();
  }
};

}  // namespace

void populateGenericPatterns(RewritePatternSet& patterns, Arithmetic arith) {
  MLIRContext* ctx = patterns.getContext();
  patterns.add<EltwisePattern, RopePattern, PoolPattern>(ctx);
  patterns.add<GatherPattern<GatherRowsOp>, GatherPattern<ExpandSeqsOp>, GatherPattern<FirstRowsOp>,
               GatherPattern<GatherMarkersOp>>(ctx, arith);
}

}  // namespace mlir::kime::fuse
