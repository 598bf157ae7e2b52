// kime-fuse: Graph ops -> kernel ops of the classes codegen knows, as rewrite patterns.
// Where two patterns match the same op, the more specific one has the higher benefit (a head
// or a SwiGLU claims its linears before the plain linear pattern does).
#include "KernelBuilder.h"
#include "kime/Transforms/Passes.h"
#include "kime/core/LinearArithmetic.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kime {
#define GEN_PASS_DEF_FUSE
#include "kime/Transforms/Passes.h.inc"

namespace {

using namespace fuse;
using R = KernelRole;

// The terms of an embedding sum: the token table by ids, the question-type table by qtype
// expanded to the tokens, a learned table by positions; each of the checkpoint's weights, each
// at most once, read only by the sum.
struct EmbedTerms {
  GatherRowsOp tok, type, pos;
  ExpandSeqsOp expand;
  SmallVector<Operation*> ops;  // producers first

  // Takes in `v` (the sum or a part of it); false where it is something else.
  bool take(Value v, bool root) {
    if (auto add = definedBy<AddOp>(v); add && (root || v.hasOneUse())) {
      if (!take(add.getLhs(), false) || !take(add.getRhs(), false)) return false;
      ops.push_back(add);
      return true;
    }
    if (auto e = definedBy<ExpandSeqsOp>(v); e && v.hasOneUse() && !expand) {
      auto g = definedBy<GatherRowsOp>(e.getX());
      if (!g || !g.getResult().hasOneUse() || !isWeight(g.getTable()) ||
          !isBatchArray(g.getIndex(), ::kime::shapes::DType::U8))
        return false;
      type = g, expand = e;
      ops.append({g.getOperation(), e.getOperation()});
      return true;
    }
    auto g = definedBy<GatherRowsOp>(v);
    if (!g || !v.hasOneUse() || !isWeight(g.getTable())) return false;
    GatherRowsOp& slot = isBatchArray(g.getIndex(), ::kime::shapes::DType::U32) ? tok
                         : definedBy<PositionsOp>(g.getIndex())                 ? pos
                                                                                : type;
    if (&slot == &type || slot) return false;
    slot = g;
    ops.push_back(g);
    return true;
  }
  // The token ids ([T] u32) or the question types (the one u8 array): block arguments.
  static bool isBatchArray(Value v, ::kime::shapes::DType dtype) {
    if (dtype == ::kime::shapes::DType::U32) return isTokenIds(v);
    return isa<BlockArgument>(v) && cast<KimeTensorType>(v.getType()).toShape().dtype == dtype;
  }
};

// tok[ids] (+ type[qtype] per token) (+ pos[positions]), the adds in any order: one pass over
// the tokens, rooted at the last add. The token table alone is a gather (FuseGeneric.cpp).
struct EmbedPattern : OpRewritePattern<AddOp> {
  EmbedPattern(MLIRContext* ctx, Arithmetic arith) : OpRewritePattern(ctx), arith(arith) {}
  LogicalResult matchAndRewrite(AddOp add, PatternRewriter& rw) const override {
    if (add.getResult().hasOneUse() && isa<AddOp>(*add.getResult().getUsers().begin())) return failure();
    EmbedTerms t;
    if (!t.take(add.getResult(), true) || !t.tok || (!t.type && !t.pos)) return failure();
    KernelBuilder k{KernelClass::embed, add.getNode()};
    k.add(R::ids, t.tok.getIndex());
    k.add(R::tok_table, t.tok.getTable());
    k.choices.arith = tableArithmetic(t.tok.getTable(), t.tok.getIndex(), arith);
    if (t.type) {
      k.add(R::qtype, t.type.getIndex());
      k.add(R::cu, t.expand.getCu());
      k.add(R::type_table, t.type.getTable());
    }
    if (t.pos) k.add(R::pos, t.pos.getTable());
    k.absorbed = t.ops;
    k.result = add.getResult();
    emit(k, rw);
    return success();
  }
  Arithmetic arith;
};

// The elementwise ops that only the linear's value feeds, one after another: its epilogue
// program over that value (input 0) and up to three other tensors of its shape (in1 to in3), so
// that a gated residual, an activation of a sum or a scaled branch is computed while the output
// tile is in registers.
void absorbProgram(KernelBuilder& k) {
  ::kime::eltwise::Program program = ::kime::eltwise::Program::input(0);
  SmallVector<Value, 3> inputs;
  while (Operation* user = singleUser(k.result)) {
    if (!isElementwise(user)) break;
    if (user->getNumOperands() == 2) {
      const bool lhs = user->getOperand(0) == k.result;
      Value other = user->getOperand(lhs ? 1 : 0);
      auto it = llvm::find(inputs, other);
      if (it == inputs.end()) {
        if (inputs.size() == 3) break;
        inputs.push_back(other);
        it = inputs.end() - 1;
      }
      const int in = int(1 + (it - inputs.begin()));
      // The operands keep their order: sub's is not symmetric.
      if (lhs)
        program.push(in);
      else
        program = ::kime::eltwise::Program::input(in).append(program);
    }
    program.apply(fnOf(user));
    k.absorbed.push_back(user);
    k.result = user->getResult(0);
    k.node = user->getAttrOfType<StringAttr>("node").str();
  }
  if (program.isIdentity()) return;
  k.choices.program = program;
  const KernelRole roles[] = {R::in1, R::in2, R::in3};
  for (size_t i = 0; i < inputs.size(); ++i) k.add(roles[i], inputs[i]);
}

// Whether a linear's weight and bias are the checkpoint's (the kernels read them packed).
bool weightsOf(LinearOp l) { return isWeight(l.getWeight()) && (!l.getBias() || isWeight(l.getBias())); }

int64_t outputsOf(LinearOp l) { return cast<KimeTensorType>(l.getWeight().getType()).getDims()[0].value; }

// A head kernel computes its outputs one by one for each row it reads (few rows, few outputs);
// a wider first linear of a head is a gather and a blocked linear.
constexpr int64_t kHeadMaxOutputs = 16;

// norm(x) -> marker rows or first rows -> linear (-> squeeze): the final norm is computed only
// for the rows the head reads.
struct HeadPattern : OpRewritePattern<LinearOp> {
  HeadPattern(MLIRContext* ctx) : OpRewritePattern(ctx, /*benefit=*/3) {}
  LogicalResult matchAndRewrite(LinearOp l, PatternRewriter& rw) const override {
    auto markers = definedBy<GatherMarkersOp>(l.getX());
    auto first = definedBy<FirstRowsOp>(l.getX());
    if ((!markers && !first) || !weightsOf(l) || outputsOf(l) > kHeadMaxOutputs) return failure();
    KernelBuilder k{KernelClass::head, l.getNode()};
    Operation* rows = markers ? markers.getOperation() : first.getOperation();
    k.add(R::x, absorbNorm(k, rows->getOperand(0)));
    k.add(R::cu, rows->getOperand(1));
    if (markers) {
      k.add(R::markers, markers.getMarkers());
      k.add(R::mcu, markers.getMcu());
    }
    k.add(R::weight, l.getWeight());
    k.add(R::bias, l.getBias());
    k.choices.rows = markers ? HeadRows::markers : HeadRows::first;
    k.absorbed.append({rows, l.getOperation()});  // after the norm: producers first
    k.result = l.getResult();
    if (auto sq = dyn_cast_or_null<SqueezeOp>(singleUser(l.getResult()))) {
      k.absorbed.push_back(sq);
      k.result = sq.getResult();
      k.node = sq.getNode().str();
    }
    emit(k, rw);
    return success();
  }
};

// After the matmul: RoPE (where the weights are the checkpoint's, packed for it), GELU (SwiGLU
// is the caller's), then a residual add.
void absorbEpilogue(KernelBuilder& k, bool packed) {
  auto rope = packed ? dyn_cast_or_null<RopeOp>(singleUser(k.result)) : RopeOp();
  // Positions within the sequence come from cu; the runtime stages them once per batch.
  // (Of the output rows, after kime-prune-rows: the positions picked by output_rows.)
  Value pos = rope ? rope.getPos() : Value();
  if (auto picked = definedBy<OutputRowsOp>(pos)) pos = picked.getX();
  auto positions = definedBy<PositionsOp>(pos);
  if (rope && positions) {
    k.choices.ropeHeads = rope.getHeadsAttr();
    k.choices.ropeTheta = rope.getThetaAttr();
    k.add(R::cu, positions.getCu());
    k.absorbed.push_back(rope);
    k.result = rope.getResult();
  } else if (auto gelu = dyn_cast_or_null<GeluOp>(singleUser(k.result))) {
    k.choices.act = Activation::gelu;
    k.absorbed.push_back(gelu);
    k.result = gelu.getResult();
  }
  if (auto add = dyn_cast_or_null<AddOp>(singleUser(k.result))) {
    k.add(R::residual, add.getLhs() == k.result ? add.getRhs() : add.getLhs());
    k.absorbed.push_back(add);
    k.result = add.getResult();
    k.node = add.getNode().str();
  }
}

// The linear's arithmetic: the one asked for where its widths allow it (LinearArithmetic.h); a
// linear of other widths keeps f32.
Arithmetic arithmeticOf(Value weight, Arithmetic asked) {
  auto dims = cast<KimeTensorType>(weight.getType()).getDims();
  return linearArithmetic(asked, dims[0].value, dims[1].value);
}

// mul(silu(linear(m, Wg)), linear(m, Wu)): one kernel over both weights, from either linear.
struct SwiGluPattern : OpRewritePattern<LinearOp> {
  SwiGluPattern(MLIRContext* ctx, Arithmetic arith) : OpRewritePattern(ctx, /*benefit=*/2), arith(arith) {}
  LogicalResult matchAndRewrite(LinearOp l, PatternRewriter& rw) const override {
    Operation* user = singleUser(l.getResult());
    if (auto silu = dyn_cast_or_null<SiluOp>(user)) user = singleUser(silu.getResult());
    auto mul = dyn_cast_or_null<MulOp>(user);
    auto silu = mul ? definedBy<SiluOp>(mul.getLhs()) : SiluOp();
    auto gate = silu ? definedBy<LinearOp>(silu.getX()) : LinearOp();
    auto up = mul ? definedBy<LinearOp>(mul.getRhs()) : LinearOp();
    if (!gate || !up || gate == up || gate.getX() != up.getX() || !gate.getResult().hasOneUse() ||
        !silu.getResult().hasOneUse() || !up.getResult().hasOneUse() || !weightsOf(gate) || !weightsOf(up))
      return failure();
    KernelBuilder k{KernelClass::linear, mul.getNode()};
    k.add(R::x, gate.getX());  // normed, when a norm is in front, by a norm kernel (NormPattern)
    k.add(R::weight, gate.getWeight());
    k.add(R::bias, gate.getBias());
    k.add(R::weight_up, up.getWeight());
    k.add(R::bias_up, up.getBias());
    k.choices.act = Activation::swiglu;
    k.choices.arith = arithmeticOf(gate.getWeight(), arith);
    for (Operation* o : {gate.getOperation(), silu.getOperation(), up.getOperation(), mul.getOperation()})
      k.absorbed.push_back(o);
    k.result = mul.getResult();
    absorbEpilogue(k, true);
    absorbProgram(k);
    emit(k, rw);
    return success();
  }
  Arithmetic arith;
};

// A linear and its epilogue (with `fusion` off, the linear alone).
struct LinearPattern : OpRewritePattern<LinearOp> {
  LinearPattern(MLIRContext* ctx, Arithmetic arith, bool fusion)
      : OpRewritePattern(ctx, /*benefit=*/1), arith(arith), fusion(fusion) {}
  LogicalResult matchAndRewrite(LinearOp l, PatternRewriter& rw) const override {
    // A weight computed from weights is read as it is: no bf16 panels, no RoPE interleaving.
    const bool packed = weightsOf(l);
    KernelBuilder k{KernelClass::linear, l.getNode()};
    k.add(R::x, l.getX());  // normed, when a norm is in front, by a norm kernel (NormPattern)
    k.add(R::weight, l.getWeight());
    k.add(R::bias, l.getBias());
    k.choices.arith = packed ? arithmeticOf(l.getWeight(), arith) : Arithmetic::f32;
    k.absorbed.push_back(l);
    k.result = l.getResult();
    if (fusion) {
      absorbEpilogue(k, packed);
      absorbProgram(k);
    }
    emit(k, rw);
    return success();
  }
  Arithmetic arith;
  bool fusion;
};

struct AttentionPattern : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp a, PatternRewriter& rw) const override {
    // The sequence of each query row (output rows after kime-prune-rows) is staged by the
    // runtime from cu, markers and mcu, like the tokens' sequences.
    auto qseq = definedBy<OutputRowsOp>(a.getQseq());
    if (a.getQseq() && !(qseq && definedBy<SequenceIdsOp>(qseq.getX()))) return failure();
    KernelBuilder k{KernelClass::attention, a.getNode()};
    k.add(R::q, a.getQ());
    k.add(R::k, a.getK());
    k.add(R::v, a.getV());
    k.add(R::cu, a.getCu());
    k.choices.heads = a.getHeadsAttr();
    k.choices.kvHeads = a.getKvHeadsAttr();
    k.choices.scale = a.getScaleAttr();
    k.absorbed = {a};
    k.result = a.getResult();
    emit(k, rw);
    return success();
  }
};

// A norm kernel of `n`'s rows (its weights the checkpoint's, or values computed from them).
template <typename NormOpT>
LogicalResult normKernel(NormOpT n, PatternRewriter& rw) {
  KernelBuilder k{KernelClass::norm, n.getNode()};
  k.add(R::x, absorbNorm(k, n.getResult()));
  k.result = n.getResult();
  emit(k, rw);
  return success();
}

// A norm in front of linears is a kernel of its own: in a linear's prologue every row would be
// normed again for each block of output columns (twelve times for a BERT-base q), and q, k and
// v would each norm the same rows. A head, reading few rows, takes its norm in: a norm that
// head rows read waits for the heads (HeadPattern).
template <typename NormOpT>
struct NormPattern : OpRewritePattern<NormOpT> {
  using OpRewritePattern<NormOpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(NormOpT n, PatternRewriter& rw) const override {
    for (Operation* user : n->getUsers())
      if (isa<GatherMarkersOp, FirstRowsOp>(user)) return failure();
    return normKernel(n, rw);
  }
};

// Any norm the patterns above left (one that head rows read but no head took, or a norm of
// sequence or marker rows): a norm kernel of its rows.
template <typename NormOpT>
struct AnyNormPattern : OpRewritePattern<NormOpT> {
  using OpRewritePattern<NormOpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(NormOpT n, PatternRewriter& rw) const override { return normKernel(n, rw); }
};

// The output rows of a token matrix (kime-prune-rows): a copy of the rows the heads read.
struct SelectPattern : OpRewritePattern<OutputRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OutputRowsOp p, PatternRewriter& rw) const override {
    if (cast<KimeTensorType>(p.getX().getType()).getDims().size() != 2) return failure();  // positions, sequences
    KernelBuilder k{KernelClass::select, p.getNode()};
    k.add(R::x, p.getX());
    k.add(R::cu, p.getCu());
    k.add(R::markers, p.getMarkers());
    k.add(R::mcu, p.getMcu());
    k.absorbed = {p};
    k.result = p.getResult();
    emit(k, rw);
    return success();
  }
};

struct FusePass : impl::FuseBase<FusePass> {
  using FuseBase::FuseBase;
  void runOnOperation() override {
    std::optional<Arithmetic> arith = ::kime::parseChoice<Arithmetic>(linearArith);
    if (!arith) {
      getOperation().emitError("kime-fuse: linear-arith must be ")
          << ::kime::choiceList<Arithmetic>() << ", not \"" << linearArith << "\"";
      return signalPassFailure();
    }
    MLIRContext* ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<AttentionPattern, SelectPattern>(ctx);
    patterns.add<LinearPattern>(ctx, *arith, fusion);
    if (fusion) {
      patterns.add<HeadPattern, NormPattern<RmsNormOp>, NormPattern<LayerNormOp>>(ctx);
      patterns.add<EmbedPattern, SwiGluPattern>(ctx, *arith);
    }
    // Positions and sequences feed RoPE, learned tables and attention, which the runtime stages
    // them for; once those are fused nothing reads them, and the driver erases them as dead.
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config))) {
      getOperation().emitError("kime-fuse: the patterns did not converge");
      return signalPassFailure();
    }
    // Then whatever no fused kernel took: a generic kernel per op, elementwise chains as one.
    RewritePatternSet generic(ctx);
    generic.add<AnyNormPattern<RmsNormOp>, AnyNormPattern<LayerNormOp>>(ctx);
    populateGenericPatterns(generic, *arith);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(generic), config))) {
      getOperation().emitError("kime-fuse: the generic patterns did not converge");
      signalPassFailure();
    }
  }
};

}  // namespace
}  // namespace mlir::kime
