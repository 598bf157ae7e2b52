#include "Lowering.h"

#include "codegen/cpu/Schedule.h"
#include "import/GraphImport.h"
#include "kime/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "support/Diagnostic.h"

namespace kime {

using namespace mlir;
using mlir::kime::KernelOp;
using mlir::kime::KimeTensorType;
using mlir::kime::WeightOp;

int64_t KernelRegistry::intern(const KernelSpec& s) {
  auto [it, added] = byKey.emplace(s.key(), int64_t(specs.size()));
  if (added) specs.push_back(s);
  return it->second;
}

std::string KernelRegistry::name(int64_t i) const {
  return "k" + std::to_string(i) + "_" + className(specs[size_t(i)].kind);
}

namespace {

kime_row_symbol rowSymbol(shapes::Sym s, int64_t offset) {
  switch (s) {
    case shapes::Sym::T: return KIME_ROWS_T;
    case shapes::Sym::S: return offset ? KIME_ROWS_S1 : KIME_ROWS_S;
    case shapes::Sym::M: return KIME_ROWS_M;
    case shapes::Sym::R: return KIME_ROWS_R;
    case shapes::Sym::None: return KIME_ROWS_STATIC;
  }
  return KIME_ROWS_STATIC;
}

// A planned value's place and shape.
PlanArg arenaArg(Value v) {
  auto k = v.getDefiningOp<KernelOp>();
  if (!k || !k.getOffset()) throw CompileError("internal: a kernel reads a value with no arena offset");
  shapes::Shape s = cast<KimeTensorType>(v.getType()).toShape();
  PlanArg a;
  a.source = PlanArg::Source::Arena;
  a.offset = *k.getOffset();
  const shapes::Dim& rows = s.dims[0];
  a.rows = rowSymbol(rows.sym, rows.value);
  a.rowCount = rows.isStatic() ? rows.value : rows.bound;
  a.cols = s.rank() > 1 ? s.dims[1].value : 0;
  return a;
}

PlanArg inputArg(kime_plan_input name, kime_row_symbol rows, int64_t bound, kime_dtype dtype) {
  PlanArg a;
  a.source = PlanArg::Source::Input;
  a.input = name;
  a.rows = rows;
  a.rowCount = bound;
  a.dtype = dtype;
  return a;
}

class StepBuilder {
 public:
  StepBuilder(const Bucket& b, int64_t ropeRows, WeightPacker& w, bool bf16)
      : b_(b), ropeRows_(ropeRows), w_(w), bf16_(bf16) {}

  PlanArg weight(KernelOp k, const char* role, const std::string& layout) {
    auto op = k.arg(role).getDefiningOp<WeightOp>();
    if (!op) throw CompileError("internal: kernel operand \"" + std::string(role) + "\" is not a weight");
    int64_t id = w_.use(op.getNode().str(), layout);
    return weightArg(id);
  }
  PlanArg weightArg(int64_t id) {
    const PackedWeight& pw = w_.weights()[size_t(id)];
    PlanArg a;
    a.source = PlanArg::Source::Weight;
    a.weight = id;
    a.rowCount = pw.shape[0];
    a.cols = pw.shape.size() > 1 ? pw.shape[1] : 0;
    return a;
  }
  PlanArg tokens(kime_plan_input name) { return inputArg(name, KIME_ROWS_T, b_.tokens, KIME_DTYPE_I32); }
  PlanArg outputRows(kime_plan_input name) { return inputArg(name, KIME_ROWS_R, b_.seqs + b_.markers, KIME_DTYPE_I32); }
  static bool hasOutputRows(Value v) {
    return cast<KimeTensorType>(v.getType()).getDims()[0].sym == shapes::Sym::R;
  }

  // The input rows; their width is the kernel's `in`.
  void input(KernelOp k, KernelSpec& s, PlanStep& step) {
    PlanArg x = arenaArg(k.arg("x"));
    s.in = x.cols;
    step.args.push_back(x);
  }

  // The input rows, then the weights of the norm in front of them.
  void normedInput(KernelOp k, KernelSpec& s, PlanStep& step) {
    input(k, s, step);
    norm(k, s, step);
  }

  void norm(KernelOp k, KernelSpec& s, PlanStep& step) {
    s.norm = config<StringAttr>(k, "norm").str();
    if (s.norm == "none") return;
    s.eps = config<FloatAttr>(k, "eps").getValueAsDouble();
    step.args.push_back(weight(k, "norm.weight", "rows"));
    if (s.norm == "layer") step.args.push_back(weight(k, "norm.bias", "rows"));
  }

  PlanStep build(KernelOp k, KernelSpec& s) {
    PlanStep step;
    step.node = k.getNode().str();
    s.kind = k.getKernelClass();
    shapes::Shape outShape = cast<KimeTensorType>(k.getType()).toShape();
    s.out = outShape.rank() > 1 ? outShape.dims[1].value : 1;
    s.outputRows = hasOutputRows(k.getResult());
    if (s.kind == KIME_CLASS_EMBED) {
      step.args = {inputArg(KIME_INPUT_IDS, KIME_ROWS_T, b_.tokens, KIME_DTYPE_U32), tokens(KIME_INPUT_TOKSEQ),
                   tokens(KIME_INPUT_TOKPOS), inputArg(KIME_INPUT_QTYPE, KIME_ROWS_S, b_.seqs, KIME_DTYPE_U8), weight(k, "tok", "rows"),
                   weight(k, "type", "rows")};
      s.learnedPos = bool(k.arg("pos"));
      if (s.learnedPos) step.args.push_back(weight(k, "pos", "rows"));
    } else if (s.kind == KIME_CLASS_LINEAR) {
      input(k, s, step);  // normed by a norm kernel when a norm is in front
      s.act = config<StringAttr>(k, "act").str();
      s.panel = s.out % kWeightPanel == 0 ? kWeightPanel : 0;
      // bf16 where the weights make whole panels of whole pairs; a linear of an odd width keeps f32.
      s.bf16 = bf16_ && s.panel && s.in % 2 == 0;
      auto heads = k.getConfig().getAs<IntegerAttr>("rope_heads");
      s.ropeHeads = heads ? heads.getInt() : 0;
      const int64_t hd = s.ropeHeads ? s.out / s.ropeHeads : 0;
      s.ropeInterleaved = s.ropeHeads && hd % kRopePairGroup == 0;
      // Interleaved RoPE columns: the weights' and biases' columns in that order (WeightPacker).
      const std::string order = s.ropeInterleaved ? ":rope" + std::to_string(hd) : "";
      const std::string layout = (s.bf16 ? "pairs.bf16" : s.panel ? "panels" : "transposed") + order;
      step.args.push_back(weight(k, "weight", layout));
      s.bias = bool(k.arg("bias"));
      if (s.bias) step.args.push_back(weight(k, "bias", "rows" + order));
      if (s.act == "swiglu") {
        step.args.push_back(weight(k, "weight.up", layout));
        if (bool(k.arg("bias.up")) != s.bias)
          throw CompileError("kernel \"" + step.node + "\": gate and up must both have a bias or neither");
        if (s.bias) step.args.push_back(weight(k, "bias.up", "rows" + order));
      }
      if (s.ropeHeads) {
        s.ropeTheta = config<FloatAttr>(k, "rope_theta").getValueAsDouble();
        s.ropeRows = ropeRows_;
        step.args.push_back(s.outputRows ? outputRows(KIME_INPUT_OUT_POS) : tokens(KIME_INPUT_TOKPOS));
        step.args.push_back(weightArg(w_.ropeTable(false, hd, s.ropeTheta, ropeRows_)));
        step.args.push_back(weightArg(w_.ropeTable(true, hd, s.ropeTheta, ropeRows_)));
      }
      s.residual = bool(k.arg("residual"));
      if (s.residual) step.args.push_back(arenaArg(k.arg("residual")));
      // A few-row bucket gets a kernel of its own only where the CPU code differs for it.
      s.fewRows = (s.outputRows ? b_.seqs + b_.markers : b_.tokens) <= kFewRows && cpu::fewRowsChangesSchedule(s);
      step.flops = 2.0 * double(s.in) * double(s.out) * (s.act == "swiglu" ? 2 : 1);
    } else if (s.kind == KIME_CLASS_ATTENTION) {
      PlanArg q = arenaArg(k.arg("q")), kk = arenaArg(k.arg("k"));
      s.in = q.cols;
      s.kvWidth = kk.cols;
      s.heads = config<IntegerAttr>(k, "heads").getInt();
      s.kvHeads = config<IntegerAttr>(k, "kv_heads").getInt();
      s.scale = config<FloatAttr>(k, "scale").getValueAsDouble();
      s.maxLen = b_.tokens;
      step.args = {q, kk, arenaArg(k.arg("v")), s.outputRows ? outputRows(KIME_INPUT_OUT_SEQ) : tokens(KIME_INPUT_TOKSEQ),
                   inputArg(KIME_INPUT_CU, KIME_ROWS_S1, b_.seqs + 1, KIME_DTYPE_U32)};
      step.flops = 4.0 * double(s.in);  // per (query, key) pair: q.k and p.v
    } else if (s.kind == KIME_CLASS_HEAD) {
      normedInput(k, s, step);
      s.rows = config<StringAttr>(k, "rows").str();
      const bool picked = hasOutputRows(k.arg("x"));
      step.args.push_back(s.rows == "markers"
                              ? inputArg(picked ? KIME_INPUT_OUT_MARKER_ROWS : KIME_INPUT_MARKER_ROWS, KIME_ROWS_M, b_.markers, KIME_DTYPE_I32)
                              : inputArg(picked ? KIME_INPUT_OUT_FIRST_ROWS : KIME_INPUT_FIRST_ROWS, KIME_ROWS_S, b_.seqs, KIME_DTYPE_I32));
      step.args.push_back(weight(k, "weight", "transposed"));
      s.bias = bool(k.arg("bias"));
      if (s.bias) step.args.push_back(weight(k, "bias", "rows"));
      s.out = step.args[step.args.size() - (s.bias ? 2 : 1)].cols;
      step.flops = 2.0 * double(s.in) * double(s.out);
    } else if (s.kind == KIME_CLASS_NORM) {
      normedInput(k, s, step);
    } else if (s.kind == KIME_CLASS_SELECT) {
      step.args = {arenaArg(k.arg("x")), outputRows(KIME_INPUT_OUT_ROWS)};
      s.in = step.args[0].cols;
    }
    PlanArg out = arenaArg(k.getResult());
    if (s.kind == KIME_CLASS_HEAD) out.cols = s.out;  // [M] logits are [M, 1] to the kernel
    step.args.push_back(out);
    return step;
  }

 private:
  template <typename A>
  A config(KernelOp k, const char* key) {
    auto a = k.getConfig().getAs<A>(key);
    if (!a) throw CompileError("internal: kernel \"" + k.getNode().str() + "\" lacks config " + key);
    return a;
  }

  const Bucket& b_;
  int64_t ropeRows_;
  WeightPacker& w_;
  bool bf16_;  // linears in bf16 (kime-compile --cpu-precision bf16)
};

}  // namespace

BucketPlan lowerBucket(MLIRContext& ctx, const Graph& g, const Bucket& bucket, int64_t ropeRows,
                       WeightPacker& weights, KernelRegistry& kernels, bool pruneRows, bool bf16Linears,
                       std::string* mlirOut) {
  OwningOpRef<ModuleOp> module = importGraph(ctx, g);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic& d) {
    diagnostics += (diagnostics.empty() ? "" : "\n") + d.str();
    return success();
  });
  PassManager pm(&ctx);
  mlir::kime::buildBucketPipeline(pm, bucket.tokens, bucket.seqs, bucket.markers, pruneRows);
  if (failed(pm.run(*module)))
    throw CompileError("graph \"" + g.name + "\", bucket {tokens " + std::to_string(bucket.tokens) +
                       ", seqs " + std::to_string(bucket.seqs) + ", markers " +
                       std::to_string(bucket.markers) + "}: " + diagnostics);
  if (mlirOut) {
    llvm::raw_string_ostream os(*mlirOut);
    module->print(os);
  }

  BucketPlan plan;
  plan.bucket = bucket;
  StepBuilder sb(bucket, ropeRows, weights, bf16Linears);
  for (auto fn : module->getOps<func::FuncOp>()) {
    plan.arena = fn->getAttrOfType<IntegerAttr>(mlir::kime::kArenaAttr).getInt();
    for (KernelOp k : fn.getOps<KernelOp>()) {
      KernelSpec spec;
      PlanStep step = sb.build(k, spec);
      if (const size_t slots = argSlots(spec).size(); step.args.size() != slots)
        throw CompileError("internal: kernel \"" + step.node + "\" has " + std::to_string(step.args.size()) +
                           " arguments, but its class takes " + std::to_string(slots) + " (plan.h)");
      step.kernel = kernels.intern(spec);
      plan.steps.push_back(std::move(step));
    }
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    plan.logits = arenaArg(ret.getOperand(0));
    plan.act = arenaArg(ret.getOperand(1));
  }
  return plan;
}

}  // namespace kime
