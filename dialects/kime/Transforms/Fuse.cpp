// kime-fuse: Graph ops -> kime.kernel ops of the classes codegen knows.
#include "kime/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kime {
#define GEN_PASS_DEF_FUSE
#include "kime/Transforms/Passes.h.inc"

namespace {

// A kernel being assembled: operands with their roles, config entries, the ops it absorbs.
struct KernelBuilder {
  KernelBuilder(KernelClass kind, std::string node) : kind(kind), node(std::move(node)) {}

  KernelClass kind;
  std::string node;
  SmallVector<Value> args;
  SmallVector<std::string> roles;
  SmallVector<NamedAttribute> config;
  SmallVector<Operation*> absorbed;  // erased once the kernel replaces `result`
  Value result;                      // the value the kernel computes

  void add(const char* role, Value v) {
    if (!v) return;
    args.push_back(v);
    roles.push_back(role);
  }
};

Operation* singleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

template <typename OpT>
OpT definedBy(Value v) {
  return v ? v.getDefiningOp<OpT>() : OpT();
}

// The norm in front of a kernel, if any: its config and operands.
Value absorbNorm(KernelBuilder& k, Value x, Builder& b) {
  if (auto n = definedBy<RmsNormOp>(x)) {
    k.config.push_back(b.getNamedAttr("norm", b.getStringAttr("rms")));
    k.config.push_back(b.getNamedAttr("eps", n.getEpsAttr()));
    k.add("norm.weight", n.getWeight());
    k.absorbed.push_back(n);
    return n.getX();
  }
  if (auto n = definedBy<LayerNormOp>(x)) {
    k.config.push_back(b.getNamedAttr("norm", b.getStringAttr("layer")));
    k.config.push_back(b.getNamedAttr("eps", n.getEpsAttr()));
    k.add("norm.weight", n.getWeight());
    k.add("norm.bias", n.getBias());
    k.absorbed.push_back(n);
    return n.getX();
  }
  k.config.push_back(b.getNamedAttr("norm", b.getStringAttr("none")));
  return x;
}

// The kernel's input rows, first among its operands, with the norm in front of them absorbed.
void absorbInput(KernelBuilder& k, Value x, Builder& b) {
  Value in = absorbNorm(k, x, b);
  k.args.insert(k.args.begin(), in);
  k.roles.insert(k.roles.begin(), "x");
}

// Emits the kernel in place of `k.result` and erases what it absorbed (a norm only once nothing
// else reads it: q, k and v each take the norm into their own kernel). `erased` collects the
// erased ops for callers that hold lists of candidates.
void emit(KernelBuilder& k, Builder& b, DenseSet<Operation*>* erased = nullptr) {
  Operation* last = k.result.getDefiningOp();
  OpBuilder ob(last);
  ob.setInsertionPointAfter(last);
  SmallVector<StringRef> roles(k.roles.begin(), k.roles.end());
  auto op = ob.create<KernelOp>(last->getLoc(), k.result.getType(), k.kind, k.node, k.args,
                                ob.getStrArrayAttr(roles), ob.getDictionaryAttr(k.config),
                                IntegerAttr());
  k.result.replaceAllUsesWith(op.getResult());
  // Absorbed ops were collected producer first; erase consumers first.
  for (Operation* o : llvm::reverse(k.absorbed))
    if (o->use_empty()) {
      if (erased) erased->insert(o);
      o->erase();
    }
}

// tok[ids] + type[qtype] per token (+ pos[positions]).
void fuseEmbed(func::FuncOp fn, Builder& b) {
  SmallVector<AddOp> adds;
  fn.walk([&](AddOp a) { adds.push_back(a); });
  DenseSet<Operation*> erased;  // a learned-position add joins the kernel of the add before it
  for (AddOp add : adds) {
    if (erased.contains(add)) continue;
    auto tok = definedBy<GatherRowsOp>(add.getLhs());
    auto expand = definedBy<ExpandSeqsOp>(add.getRhs());
    auto type = expand ? definedBy<GatherRowsOp>(expand.getX()) : GatherRowsOp();
    if (!tok || !type || !isa<BlockArgument>(tok.getIndex()) || !isa<BlockArgument>(type.getIndex()))
      continue;
    KernelBuilder k{KernelClass::embed, add.getNode().str()};
    k.add("ids", tok.getIndex());
    k.add("qtype", type.getIndex());
    k.add("cu", expand.getCu());
    k.add("tok", tok.getTable());
    k.add("type", type.getTable());
    k.absorbed = {tok, type, expand, add};
    k.result = add.getResult();
    // A learned position table added right after joins the same pass.
    if (auto outer = dyn_cast_or_null<AddOp>(singleUser(add.getResult()))) {
      Value other = outer.getLhs() == add.getResult() ? outer.getRhs() : outer.getLhs();
      auto pos = definedBy<GatherRowsOp>(other);
      auto positions = pos ? definedBy<PositionsOp>(pos.getIndex()) : PositionsOp();
      if (positions && positions.getCu() == expand.getCu()) {
        k.add("pos", pos.getTable());
        k.absorbed.append({pos.getOperation(), outer.getOperation()});
        k.result = outer.getResult();
        k.node = outer.getNode().str();
      }
    }
    k.config.push_back(b.getNamedAttr("learned_pos", b.getBoolAttr(k.roles.back() == "pos")));
    emit(k, b, &erased);
  }
}

// norm(x) -> marker rows or first rows -> linear (-> squeeze): the final norm is computed only
// for the rows the head reads.
void fuseHeads(func::FuncOp fn, Builder& b) {
  SmallVector<LinearOp> linears;
  fn.walk([&](LinearOp l) { linears.push_back(l); });
  for (LinearOp l : linears) {
    auto markers = definedBy<GatherMarkersOp>(l.getX());
    auto first = definedBy<FirstRowsOp>(l.getX());
    if (!markers && !first) continue;
    KernelBuilder k{KernelClass::head, l.getNode().str()};
    Operation* rows = markers ? markers.getOperation() : first.getOperation();
    absorbInput(k, rows->getOperand(0), b);
    k.add("cu", rows->getOperand(1));
    if (markers) {
      k.add("markers", markers.getMarkers());
      k.add("mcu", markers.getMcu());
    }
    k.add("weight", l.getWeight());
    k.add("bias", l.getBias());
    k.config.push_back(b.getNamedAttr("rows", b.getStringAttr(markers ? "markers" : "first")));
    k.absorbed.append({rows, l.getOperation()});  // after the norm: producers first
    k.result = l.getResult();
    if (auto sq = dyn_cast_or_null<SqueezeOp>(singleUser(l.getResult()))) {
      k.absorbed.push_back(sq);
      k.result = sq.getResult();
      k.node = sq.getNode().str();
    }
    emit(k, b);
  }
}

// After the matmul: RoPE, GELU or SiLU(gate)*up, then a residual add.
void absorbEpilogue(KernelBuilder& k, Builder& b) {
  std::string act = "none";
  auto rope = dyn_cast_or_null<RopeOp>(singleUser(k.result));
  // Positions within the sequence come from cu; the runtime stages them once per batch.
  // (Of the output rows, after kime-prune-rows: the positions picked by output_rows.)
  Value pos = rope ? rope.getPos() : Value();
  if (auto picked = definedBy<OutputRowsOp>(pos)) pos = picked.getX();
  auto positions = definedBy<PositionsOp>(pos);
  if (rope && positions) {
    k.config.push_back(b.getNamedAttr("rope_heads", rope.getHeadsAttr()));
    k.config.push_back(b.getNamedAttr("rope_theta", rope.getThetaAttr()));
    k.add("cu", positions.getCu());
    k.absorbed.push_back(rope);
    k.result = rope.getResult();
  } else if (auto gelu = dyn_cast_or_null<GeluOp>(singleUser(k.result))) {
    act = "gelu";
    k.absorbed.push_back(gelu);
    k.result = gelu.getResult();
  }
  if (k.roles.end() != llvm::find(k.roles, "weight.up")) act = "swiglu";
  k.config.push_back(b.getNamedAttr("act", b.getStringAttr(act)));
  if (auto add = dyn_cast_or_null<AddOp>(singleUser(k.result))) {
    k.add("residual", add.getLhs() == k.result ? add.getRhs() : add.getLhs());
    k.absorbed.push_back(add);
    k.result = add.getResult();
    k.node = add.getNode().str();
  }
}

// mul(silu(linear(m, Wg)), linear(m, Wu)): one kernel over both weights.
void fuseSwiGlu(func::FuncOp fn, Builder& b) {
  SmallVector<MulOp> muls;
  fn.walk([&](MulOp m) { muls.push_back(m); });
  for (MulOp mul : muls) {
    auto silu = definedBy<SiluOp>(mul.getLhs());
    auto gate = silu ? definedBy<LinearOp>(silu.getX()) : LinearOp();
    auto up = definedBy<LinearOp>(mul.getRhs());
    if (!gate || !up || gate.getX() != up.getX() || !gate.getResult().hasOneUse() ||
        !silu.getResult().hasOneUse() || !up.getResult().hasOneUse())
      continue;
    KernelBuilder k{KernelClass::linear, mul.getNode().str()};
    k.add("x", gate.getX());  // normed, when a norm is in front, by a norm kernel (fuseNorms)
    k.add("weight", gate.getWeight());
    k.add("bias", gate.getBias());
    k.add("weight.up", up.getWeight());
    k.add("bias.up", up.getBias());
    for (Operation* o : {gate.getOperation(), silu.getOperation(), up.getOperation(), mul.getOperation()})
      k.absorbed.push_back(o);
    k.result = mul.getResult();
    absorbEpilogue(k, b);
    emit(k, b);
  }
}

void fuseLinears(func::FuncOp fn, Builder& b) {
  SmallVector<LinearOp> linears;
  fn.walk([&](LinearOp l) { linears.push_back(l); });
  for (LinearOp l : linears) {
    KernelBuilder k{KernelClass::linear, l.getNode().str()};
    k.add("x", l.getX());  // normed, when a norm is in front, by a norm kernel (fuseNorms)
    k.add("weight", l.getWeight());
    k.add("bias", l.getBias());
    k.absorbed.push_back(l);
    k.result = l.getResult();
    absorbEpilogue(k, b);
    emit(k, b);
  }
}

void fuseAttention(func::FuncOp fn, Builder& b) {
  SmallVector<AttentionOp> atts;
  fn.walk([&](AttentionOp a) { atts.push_back(a); });
  for (AttentionOp a : atts) {
    KernelBuilder k{KernelClass::attention, a.getNode().str()};
    k.add("q", a.getQ());
    k.add("k", a.getK());
    k.add("v", a.getV());
    k.add("cu", a.getCu());
    // The sequence of each query row (output rows after kime-prune-rows) is staged by the
    // runtime from cu, markers and mcu, like the tokens' sequences.
    auto qseq = definedBy<OutputRowsOp>(a.getQseq());
    if (a.getQseq() && !(qseq && definedBy<SequenceIdsOp>(qseq.getX()))) continue;
    k.config = {b.getNamedAttr("heads", a.getHeadsAttr()),
                b.getNamedAttr("kv_heads", a.getKvHeadsAttr()),
                b.getNamedAttr("scale", a.getScaleAttr())};
    k.absorbed = {a};
    k.result = a.getResult();
    emit(k, b);
  }
}

// A norm in front of linears is a kernel of its own: in a linear's prologue every row would be
// normed again for each block of output columns (twelve times for a BERT-base q), and q, k and
// v would each norm the same rows. (A head, reading few rows, keeps its norm.)
void fuseNorms(func::FuncOp fn, Builder& b) {
  SmallVector<Operation*> norms;
  fn.walk([&](Operation* op) {
    if (isa<RmsNormOp, LayerNormOp>(op)) norms.push_back(op);
  });
  for (Operation* n : norms) {
    KernelBuilder k{KernelClass::norm, n->getAttrOfType<StringAttr>("node").str()};
    absorbInput(k, n->getResult(0), b);
    k.result = n->getResult(0);
    emit(k, b);
  }
}

// The output rows of a token matrix (kime-prune-rows): a copy of the rows the heads read.
void fuseOutputRows(func::FuncOp fn, Builder& b) {
  SmallVector<OutputRowsOp> picks;
  fn.walk([&](OutputRowsOp p) { picks.push_back(p); });
  for (OutputRowsOp p : picks) {
    if (cast<KimeTensorType>(p.getX().getType()).getDims().size() != 2) continue;  // positions, sequences
    KernelBuilder k{KernelClass::select, p.getNode().str()};
    k.add("x", p.getX());
    k.add("cu", p.getCu());
    k.add("markers", p.getMarkers());
    k.add("mcu", p.getMcu());
    k.absorbed = {p};
    k.result = p.getResult();
    emit(k, b);
  }
}

struct FusePass : impl::FuseBase<FusePass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    Builder b(fn.getContext());
    // Most specific first: the heads and SwiGLU claim their linears before the plain ones do.
    fuseEmbed(fn, b);
    fuseHeads(fn, b);
    fuseSwiGlu(fn, b);
    fuseLinears(fn, b);
    fuseAttention(fn, b);
    fuseNorms(fn, b);
    fuseOutputRows(fn, b);
    // Positions and sequences feed RoPE, learned tables and attention, which the runtime stages
    // them for; once those are fused nothing reads them. Consumers first.
    SmallVector<Operation*> staged;
    fn.walk([&](Operation* op) {
      if (isa<PositionsOp, SequenceIdsOp, OutputRowsOp>(op)) staged.push_back(op);
    });
    for (Operation* op : llvm::reverse(staged))
      if (op->use_empty()) op->erase();
  }
};

}  // namespace
}  // namespace mlir::kime
