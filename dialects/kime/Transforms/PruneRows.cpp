// kime-prune-rows: what only the heads read is computed for the rows they read.
//
// The heads read one row per sequence (its first token) and one per marker. Attention mixes the
// rows of a sequence through its keys and values, so every layer but the last needs all tokens;
// after the last attention's keys and values, though, each row depends only on its own row. The
// pass finds the ops whose results reach nothing but the heads, row for row, and retypes them to
// the output rows R = S + M (each sequence's first token, then each marked token); what they read
// from outside is picked by `kime.output_rows`. An attention keeps all keys and values and gets
// `qseq`, the sequence of each query row.
#include "kime/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kime {
#define GEN_PASS_DEF_PRUNEROWS
#include "kime/Transforms/Passes.h.inc"

namespace {

namespace shapes = ::kime::shapes;

bool hasTokenRows(Value v) {
  auto t = dyn_cast<KimeTensorType>(v.getType());
  return t && !t.getDims().empty() && t.getDims()[0].sym == shapes::Sym::T;
}

// Whether operand `i` of `op` is read row for row (result row r needs operand row r only).
bool isRowOperand(Operation* op, unsigned i) {
  if (isa<RmsNormOp, LayerNormOp, LinearOp, AttentionOp>(op)) return i == 0;
  if (isa<EltwiseOpInterface>(op)) return true;
  if (isa<RopeOp>(op)) return i <= 1;  // x and its positions
  return false;
}

bool isHeadRead(Operation* op, unsigned i) { return isa<GatherMarkersOp, FirstRowsOp>(op) && i == 0; }

// The sum of embedding lookups: kime-fuse makes it the embed kernel over the tokens, so it stays
// whole.
bool isEmbeddingSum(Operation* op) {
  return isa<AddOp>(op) && llvm::any_of(op->getOperands(), [](Value v) {
           return v.getDefiningOp<GatherRowsOp>() || v.getDefiningOp<ExpandSeqsOp>();
         });
}

struct PruneRowsPass : impl::PruneRowsBase<PruneRowsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    auto bucket = fn->getAttrOfType<DenseI64ArrayAttr>(kBucketAttr);
    if (!bucket || bucket.size() != 3) {
      fn.emitError("kime-prune-rows runs after kime-specialize-bucket");
      return signalPassFailure();
    }
    const int64_t tokens = bucket[0], outRows = bucket[1] + bucket[2];
    if (outRows >= tokens) return;  // as many output rows as tokens: nothing to gain
    GatherMarkersOp markers;
    fn.walk([&](GatherMarkersOp g) { markers = g; });
    if (!markers) return;  // the markers and their offsets come from the marker head

    // Backwards, so that every user of an op is decided before the op.
    SetVector<Operation*> region;
    Block& body = fn.getBody().front();
    for (Operation& op : llvm::reverse(body)) {
      // Row-local ops only: those whose first operand is read row for row.
      if (op.getNumResults() != 1 || !hasTokenRows(op.getResult(0)) || op.use_empty() || !isRowOperand(&op, 0))
        continue;
      bool onlyOutputRows = llvm::all_of(op.getResult(0).getUses(), [&](OpOperand& use) {
        Operation* user = use.getOwner();
        unsigned i = use.getOperandNumber();
        return isHeadRead(user, i) || (region.contains(user) && isRowOperand(user, i));
      });
      if (onlyOutputRows && !isEmbeddingSum(&op)) region.insert(&op);
    }
    // Only past an attention's keys and values is there anything to save (before it, the rows
    // the heads read are the tokens' own); a graph without attention stays as it is.
    if (!llvm::any_of(region, [](Operation* op) { return isa<AttentionOp>(op); })) return;
    // The output rows' positions are staged for the tokens' own positions only: a RoPE by other
    // positions (token ids) keeps every row.
    if (llvm::any_of(region, [](Operation* op) {
          auto r = dyn_cast<RopeOp>(op);
          return r && !r.getPos().getDefiningOp<PositionsOp>();
        }))
      return;

    Value cu = markers.getCu(), markerIds = markers.getMarkers(), mcu = markers.getMcu();
    DenseMap<Value, Value> picked;  // a value outside the region -> its output rows
    auto outputType = [&](Type t) {
      shapes::Shape s = cast<KimeTensorType>(t).toShape();
      s.dims[0] = shapes::Dim::symbol(shapes::Sym::R);
      s.dims[0].bound = outRows;
      return KimeTensorType::fromShape(t.getContext(), s);
    };
    auto nodeOf = [](Value v) {
      Operation* d = v.getDefiningOp();
      auto n = d ? d->getAttrOfType<StringAttr>("node") : StringAttr();
      return n ? n.str() : std::string("input");
    };
    // The output rows of `v`, built in front of `at` (the first region op that reads them).
    auto pick = [&](Value v, Operation* at) -> Value {
      if (Value p = picked.lookup(v)) return p;
      OpBuilder b(at);
      Value p = b.create<OutputRowsOp>(at->getLoc(), outputType(v.getType()), b.getStringAttr(nodeOf(v) + ".out"), v,
                                       cu, markerIds, mcu);
      picked[v] = p;
      return p;
    };

    // Forwards: operands from outside are picked, then the op's own result becomes output rows.
    for (Operation& op : body) {
      if (!region.contains(&op)) continue;
      for (OpOperand& use : op.getOpOperands()) {
        Value v = use.get();
        Operation* def = v.getDefiningOp();
        if (isRowOperand(&op, use.getOperandNumber()) && hasTokenRows(v) && !(def && region.contains(def)))
          use.set(pick(v, &op));
      }
      if (auto a = dyn_cast<AttentionOp>(op)) {
        OpBuilder b(a);
        shapes::Dim t = shapes::Dim::symbol(shapes::Sym::T);
        t.bound = tokens;
        Type type = KimeTensorType::fromShape(fn.getContext(), {{t}, shapes::DType::U32});
        Value seqs = b.create<SequenceIdsOp>(a.getLoc(), type, b.getStringAttr(a.getNode() + ".qseq"), cu);
        a.getQseqMutable().assign(pick(seqs, a));
      }
      op.getResult(0).setType(outputType(op.getResult(0).getType()));
    }
  }
};

}  // namespace
}  // namespace mlir::kime
