// What kime-fuse's patterns share: a kernel being assembled from Graph ops, and emitting it.
#ifndef KIME_TRANSFORMS_KERNELBUILDER_H
#define KIME_TRANSFORMS_KERNELBUILDER_H

#include "kime/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kime::fuse {

using R = KernelRole;

// The choices of the kernel being assembled (its op's typed attributes).
struct Choices {
  std::optional<NormKind> norm;
  FloatAttr eps;
  std::optional<Activation> act;
  IntegerAttr ropeHeads;
  FloatAttr ropeTheta;
  IntegerAttr heads, kvHeads;
  FloatAttr scale;
  std::optional<HeadRows> rows;
  Arithmetic arith = Arithmetic::f32;  // a linear's, or an embed or gather kernel's token table
  std::optional<GatherKind> gather;
  ::kime::eltwise::Program program;  // eltwise, or a linear's epilogue
};

// A kernel being assembled: its operands by role, its choices, the ops it absorbs.
struct KernelBuilder {
  KernelBuilder(KernelClass kind, StringRef node) : kind(kind), node(node.str()) {}

  KernelClass kind;
  std::string node;
  std::array<Value, kKernelRoleCount> byRole{};
  Choices choices;
  SmallVector<Operation*> absorbed;  // producers first; erased once the kernel replaces `result`
  Value result;                      // the value the kernel computes

  void add(R role, Value v) { byRole[size_t(role)] = v; }
};

// Whether `v` is a weight of the checkpoint (not a value computed from weights): the fused
// kernels read their weights packed.
inline bool isWeight(Value v) { return v && v.getDefiningOp<WeightOp>(); }

// Whether `v` is the batch's token ids ([T] u32, a block argument).
inline bool isTokenIds(Value v) {
  const ::kime::shapes::Shape s = cast<KimeTensorType>(v.getType()).toShape();
  return isa<BlockArgument>(v) && s.dtype == ::kime::shapes::DType::U32 && s.dims[0].sym == ::kime::shapes::Sym::T;
}

// With int8 asked for, an embedding table (a weight gathered by the token ids or by the tokens'
// positions) is stored as int8 rows (LinearArithmetic.h); f32 otherwise.
inline Arithmetic tableArithmetic(Value table, Value index, Arithmetic asked) {
  const bool embedding = isTokenIds(index) || index.getDefiningOp<PositionsOp>();
  return isInt8(asked) && isWeight(table) && embedding ? Arithmetic::int8 : Arithmetic::f32;
}

inline bool isElementwise(Operation* op) { return op && isa<EltwiseOpInterface>(op); }

// The function an elementwise op applies: its step in a program.
inline ::kime::eltwise::Fn fnOf(Operation* op) { return cast<EltwiseOpInterface>(op).getFn(); }

inline Operation* singleUser(Value v) { return v.hasOneUse() ? *v.getUsers().begin() : nullptr; }

template <typename OpT>
OpT definedBy(Value v) {
  return v ? v.getDefiningOp<OpT>() : OpT();
}

// The norm in front of a kernel's input rows, if any, joins the kernel; returns the rows
// before it.
inline Value absorbNorm(KernelBuilder& k, Value x) {
  if (auto n = definedBy<RmsNormOp>(x)) {
    k.choices.norm = NormKind::rms;
    k.choices.eps = n.getEpsAttr();
    k.add(R::norm_weight, n.getWeight());
    k.absorbed.push_back(n);
    return n.getX();
  }
  if (auto n = definedBy<LayerNormOp>(x)) {
    k.choices.norm = NormKind::layer;
    k.choices.eps = n.getEpsAttr();
    k.add(R::norm_weight, n.getWeight());
    k.add(R::norm_bias, n.getBias());
    k.absorbed.push_back(n);
    return n.getX();
  }
  return x;
}

// Emits the kernel in place of `k.result`, right after the last op it absorbs, and erases what
// it absorbed (a norm only once nothing else reads it: q, k and v each take the norm into
// their own kernel; consumers first).
inline void emit(KernelBuilder& k, PatternRewriter& rw) {
  Operation* last = k.result.getDefiningOp();
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointAfter(last);
  Operation* op = createKernel(rw, last->getLoc(), k.result.getType(), k.kind, k.node, k.byRole);
  MLIRContext* ctx = op->getContext();
  const Choices& c = k.choices;
  if (c.norm) setKernelChoice(op, "norm", NormKindAttr::get(ctx, *c.norm));
  if (c.eps) setKernelChoice(op, "eps", c.eps);
  if (c.act) setKernelChoice(op, "act", ActivationAttr::get(ctx, *c.act));
  if (c.ropeHeads) setKernelChoice(op, "rope_heads", c.ropeHeads);
  if (c.ropeTheta) setKernelChoice(op, "rope_theta", c.ropeTheta);
  if (c.heads) setKernelChoice(op, "heads", c.heads);
  if (c.kvHeads) setKernelChoice(op, "kv_heads", c.kvHeads);
  if (c.scale) setKernelChoice(op, "scale", c.scale);
  if (c.rows) setKernelChoice(op, "rows", HeadRowsAttr::get(ctx, *c.rows));
  if (c.arith != Arithmetic::f32) setKernelChoice(op, "arith", ArithmeticAttr::get(ctx, c.arith));
  if (c.gather) setKernelChoice(op, "gather", GatherKindAttr::get(ctx, *c.gather));
  if (!c.program.empty()) setKernelChoice(op, "program", ProgramAttr::get(ctx, c.program));
  rw.replaceAllUsesWith(k.result, op->getResult(0));
  for (Operation* o : llvm::reverse(k.absorbed))
    if (o->use_empty()) rw.eraseOp(o);
}

// The fallback patterns: a generic kernel for every Graph op the fused patterns left
// (FuseGeneric.cpp); `arith` is the linears' (a token table's gather takes int8 from it).
void populateGenericPatterns(RewritePatternSet& patterns, Arithmetic arith);

}  // namespace mlir::kime::fuse

#endif  // KIME_TRANSFORMS_KERNELBUILDER_H
