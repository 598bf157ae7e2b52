#include "Lowering.h"

#include <algorithm>

#include "import/GraphImport.h"
#include "kime/Transforms/Passes.h"
#include "kime/core/LinearArithmetic.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "support/Diagnostic.h"

namespace kime {

using namespace mlir;
using mlir::kime::AttentionKernelOp;
using mlir::kime::EltwiseKernelOp;
using mlir::kime::EmbedKernelOp;
using mlir::kime::GatherKernelOp;
using mlir::kime::HeadKernelOp;
using mlir::kime::KernelOpInterface;
using mlir::kime::KernelRole;
using mlir::kime::KimeTensorType;
using mlir::kime::LinearKernelOp;
using mlir::kime::NormKernelOp;
using mlir::kime::PoolKernelOp;
using mlir::kime::RopeKernelOp;
using mlir::kime::SelectKernelOp;
using mlir::kime::WeightOp;

int64_t KernelRegistry::intern(KernelSpec s) {
  if (auto* l = std::get_if<LinearSpec>(&s.choices); l && l->fewRows && !(fewRowsDiffers && fewRowsDiffers(s)))
    l->fewRows = false;
  // Tens of kernels at most: a scan finds the equal one.
  auto it = std::find(specs.begin(), specs.end(), s);
  if (it != specs.end()) return int64_t(it - specs.begin());
  specs.push_back(s);
  return int64_t(specs.size()) - 1;
}

std::string KernelRegistry::name(int64_t i) const {
  return "k" + std::to_string(i) + "_" + className(specs[size_t(i)].kind());
}

static_assert(kWeightPanel == kLinearPanelColumns,
              "kime-fuse gives bf16 to the linears whose widths make whole weight panels");

namespace {

kime_row_symbol rowSymbol(shapes::Sym s, int64_t offset) {
  switch (s) {
    case shapes::Sym::T:
      return KIME_ROWS_T;
    case shapes::Sym::S:
      return offset ? KIME_ROWS_S1 : KIME_ROWS_S;
    case shapes::Sym::M:
      return KIME_ROWS_M;
    case shapes::Sym::R:
      return KIME_ROWS_R;
    case shapes::Sym::None:
      return KIME_ROWS_STATIC;
  }
  return KIME_ROWS_STATIC;
}

// A planned value's place and shape; a squeezed value is its operand's memory as a vector.
PlanArg arenaArg(Value v) {
  if (auto sq = v.getDefiningOp<mlir::kime::SqueezeOp>()) {
    PlanArg a = arenaArg(sq.getX());
    a.cols = 0;
    return a;
  }
  auto k = v.getDefiningOp<mlir::kime::KernelOpInterface>();
  if (!k || !k.getArenaOffset()) throw CompileError("internal: a kernel reads a value with no arena offset");
  shapes::Shape s = cast<KimeTensorType>(v.getType()).toShape();
  PlanArg a;
  a.source = PlanArg::Source::Arena;
  a.offset = *k.getArenaOffset();
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

// A step's arguments by plan.h slot name, put in its class's slot order at the end: the order
// comes from plan.h, and a slot left unset or one the kernel does not take is an error.
class SlotArgs {
 public:
  void set(const char* slot, PlanArg a) { bySlot_[slot] = std::move(a); }

  std::vector<PlanArg> inOrder(const KernelSpec& s, const std::string& node) {
    std::vector<PlanArg> out;
    for (const kime_arg_slot& slot : argSlots(s)) {
      auto it = bySlot_.find(slot.name);
      if (it == bySlot_.end())
        throw CompileError("internal: kernel \"" + node + "\" has no argument for its slot \"" + slot.name +
                           "\" (plan.h)");
      out.push_back(std::move(it->second));
      bySlot_.erase(it);
    }
    if (!bySlot_.empty())
      throw CompileError("internal: kernel \"" + node + "\" has an argument for \"" + bySlot_.begin()->first +
                         "\", a slot its " + className(s.kind()) + " class does not take here (plan.h)");
    return out;
  }

 private:
  std::map<std::string, PlanArg> bySlot_;
};

std::string nameOf(KernelRole r) { return mlir::kime::stringifyKernelRole(r).str(); }

// The rows of a kernel's output: one of the batch's counts, or a static number.
void setRows(Value result, KernelShape& s) {
  const shapes::Dim& rows = cast<KimeTensorType>(result.getType()).getDims()[0];
  s.rowSym = rowSymbol(rows.sym, rows.value);
  s.staticRows = rows.isStatic() ? rows.value : 0;
}

class StepBuilder {
 public:
  StepBuilder(const Bucket& b, int64_t ropeRows, int64_t vocab, WeightPacker& w)
      : b_(b), ropeRows_(ropeRows), vocab_(vocab), w_(w) {}

  PlanStep build(KernelOpInterface k, KernelSpec& s) {
    PlanStep step;
    step.node = k.getNodeName().str();
    const Value result = k->getResult(0);
    shapes::Shape outShape = cast<KimeTensorType>(result.getType()).toShape();
    s.out = outShape.rank() > 1 ? outShape.dims[1].value : 1;
    setRows(result, s);
    SlotArgs args;
    llvm::TypeSwitch<Operation*>(k)
        .Case([&](EmbedKernelOp op) { s.choices = embed(op, args); })
        .Case([&](NormKernelOp op) {
          input(op, s, args);
          s.choices = norm(op, op.getNorm(), op.getEpsAttr(), args);
        })
        .Case([&](LinearKernelOp op) { s.choices = linear(op, s, args, step.flops); })
        .Case([&](AttentionKernelOp op) { s.choices = attention(op, s, args, step.flops); })
        .Case([&](HeadKernelOp op) { s.choices = head(op, s, args, step.flops); })
        .Case([&](SelectKernelOp op) {
          input(op, s, args);
          args.set("rows", outputRows(KIME_INPUT_OUT_ROWS));
          s.choices = SelectSpec{};
        })
        .Case([&](GatherKernelOp op) { s.choices = gather(op, s, args); })
        .Case([&](EltwiseKernelOp op) { s.choices = eltwise(op, s, args); })
        .Case([&](RopeKernelOp op) { s.choices = rope(op, s, args, step.node); })
        .Case([&](PoolKernelOp op) {
          input(op, s, args);
          args.set("tokseq", tokens(KIME_INPUT_TOKSEQ));
          args.set("cu", inputArg(KIME_INPUT_CU, KIME_ROWS_S1, b_.seqs + 1, KIME_DTYPE_U32));
          s.choices = PoolSpec{};
        })
        .Default([&](Operation*) { throw CompileError("internal: kernel \"" + step.node + "\" of no known class"); });
    if (s.kind() != kime_kernel_class(k.getKernelClass()))  // numbered as plan.h (KernelOps.cpp checks)
      throw CompileError("internal: kernel \"" + step.node + "\" lowered to another class's spec");
    PlanArg out = arenaArg(result);
    if (s.kind() == KIME_CLASS_HEAD) out.cols = s.out;  // [M] logits are [M, 1] to the kernel
    args.set("out", out);
    step.args = args.inOrder(s, step.node);
    return step;
  }

 private:
  // A weight packed in `layout`; a value computed from weights is read as it is (the "rows"
  // layout), which kime-fuse asks of no other layout.
  PlanArg weight(KernelOpInterface k, KernelRole role, const WeightLayout& layout) {
    Value v = k.getRoleOperand(role);
    if (layout == WeightLayout::rows()) return valueArg(v);
    auto op = v.getDefiningOp<WeightOp>();
    if (!op)
      throw CompileError("internal: kernel operand \"" + nameOf(role) + "\" is computed, but packed as " +
                         layout.name());
    return weightArg(w_.use(op.getNode().str(), layout));
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
  // A weight read as it is (rows), or a planned value.
  PlanArg valueArg(Value v) {
    if (auto op = v.getDefiningOp<WeightOp>()) return weightArg(w_.use(op.getNode().str(), WeightLayout::rows()));
    return arenaArg(v);
  }
  PlanArg tokens(kime_plan_input name) { return inputArg(name, KIME_ROWS_T, b_.tokens, KIME_DTYPE_I32); }
  PlanArg outputRows(kime_plan_input name) { return inputArg(name, KIME_ROWS_R, b_.seqs + b_.markers, KIME_DTYPE_I32); }
  static bool hasOutputRows(Value v) { return cast<KimeTensorType>(v.getType()).getDims()[0].sym == shapes::Sym::R; }

  // An index array: one of the batch's own (u32 read as i32, qtype as u8) or the positions the
  // runtime stages.
  // `u8`: where an index may be qtype, read as u8 (a gather's), set to whether it is.
  PlanArg indexArg(Value v, const std::string& node, bool* u8 = nullptr) {
    if (auto a = dyn_cast<BlockArgument>(v)) {
      const std::string name = graphInputs()[a.getArgNumber()].name;
      if (name == "ids") return inputArg(KIME_INPUT_IDS, KIME_ROWS_T, b_.tokens, KIME_DTYPE_I32);
      if (name == "cu") return inputArg(KIME_INPUT_CU, KIME_ROWS_S1, b_.seqs + 1, KIME_DTYPE_I32);
      if (name == "mcu") return inputArg(KIME_INPUT_MCU, KIME_ROWS_S1, b_.seqs + 1, KIME_DTYPE_I32);
      if (name == "markers") return inputArg(KIME_INPUT_MARKERS, KIME_ROWS_M, b_.markers, KIME_DTYPE_I32);
      if (name == "qtype" && u8) {
        *u8 = true;
        return inputArg(KIME_INPUT_QTYPE, KIME_ROWS_S, b_.seqs, KIME_DTYPE_U8);
      }
    }
    if (v.getDefiningOp<mlir::kime::PositionsOp>()) return tokens(KIME_INPUT_TOKPOS);
    if (v.getDefiningOp<mlir::kime::TokenTypesOp>()) return tokens(KIME_INPUT_TOKTYPE);
    if (auto p = v.getDefiningOp<mlir::kime::OutputRowsOp>(); p && p.getX().getDefiningOp<mlir::kime::PositionsOp>())
      return outputRows(KIME_INPUT_OUT_POS);
    throw CompileError("internal: kernel \"" + node + "\" reads an index that is no batch array or positions");
  }

  // RoPE by any positions: tables of the angles for every position they can take (the longest
  // sequence, or the vocabulary for token ids).
  RopeSpec rope(RopeKernelOp k, KernelShape& s, SlotArgs& args, const std::string& node) {
    input(k, s, args);
    RopeSpec r;
    r.heads = int64_t(k.getRopeHeads());
    r.theta = k.getRopeThetaAttr().getValueAsDouble();
    PlanArg pos = indexArg(k.getIndex(), node);
    r.rows = pos.input == KIME_INPUT_IDS ? vocab_ : ropeRows_;
    const int64_t hd = s.out / r.heads;
    args.set("pos", pos);
    args.set("rope_cos", weightArg(w_.ropeTable(false, hd, r.theta, r.rows)));
    args.set("rope_sin", weightArg(w_.ropeTable(true, hd, r.theta, r.rows)));
    return r;
  }

  // A gather's table or matrix, and the index of each output row.
  GatherSpec gather(GatherKernelOp k, KernelShape& s, SlotArgs& args) {
    GatherSpec g;
    // arith(int8): a token table's int8 rows (the verifier allows it on gather(rows) of a weight).
    g.arith = k.getArith().value_or(Arithmetic::f32);
    const bool int8 = g.arith == Arithmetic::int8;
    input(k, s, args, int8 ? WeightLayout::int8Rows() : WeightLayout::rows());
    if (int8) args.set("x_scale", weight(k, KernelRole::x, WeightLayout::int8RowScales()));
    const bool picked = hasOutputRows(k.getX());
    switch (k.getGather()) {
      case GatherKind::rows: {
        PlanArg index = indexArg(k.getIndex(), k.getNode().str(), &g.indexU8);
        args.set(g.indexU8 ? "index_u8" : "index", index);
        break;
      }
      case GatherKind::seqs:
        args.set("index", tokens(KIME_INPUT_TOKSEQ));
        break;
      case GatherKind::first:
        args.set("index", inputArg(picked ? KIME_INPUT_OUT_FIRST_ROWS : KIME_INPUT_FIRST_ROWS, KIME_ROWS_S, b_.seqs,
                                   KIME_DTYPE_I32));
        break;
      case GatherKind::markers:
        args.set("index", inputArg(picked ? KIME_INPUT_OUT_MARKER_ROWS : KIME_INPUT_MARKER_ROWS, KIME_ROWS_M,
                                   b_.markers, KIME_DTYPE_I32));
        break;
      case GatherKind::none:
        throw CompileError("internal: gather kernel \"" + k.getNode().str() + "\" without its gather(...)");
    }
    return g;
  }

  // An elementwise program (an eltwise kernel's, or a linear's epilogue) and its inputs in1..in3.
  eltwise::Program program(KernelOpInterface k, mlir::kime::ProgramAttr program, SlotArgs& args) {
    if (!program) return {};
    const std::pair<const char*, KernelRole> inputs[] = {
        {"in1", KernelRole::in1}, {"in2", KernelRole::in2}, {"in3", KernelRole::in3}};
    for (const auto& [slot, role] : inputs)
      if (Value v = k.getRoleOperand(role)) args.set(slot, valueArg(v));
    return program.getProgram();
  }

  EltwiseSpec eltwise(EltwiseKernelOp k, KernelShape& s, SlotArgs& args) {
    args.set("x", valueArg(k.getX()));
    s.in = s.out;
    return {program(k, k.getProgramAttr(), args), cast<KimeTensorType>(k.getType()).getDims().size() == 1};
  }

  // The input rows (a weight in `layout`); their width is the kernel's `in`.
  void input(KernelOpInterface k, KernelShape& s, SlotArgs& args, const WeightLayout& layout = WeightLayout::rows()) {
    PlanArg x = weight(k, KernelRole::x, layout);
    s.in = x.cols;
    args.set("x", x);
  }

  // The norm in front of the input rows and its weights.
  NormSpec norm(KernelOpInterface k, NormKind n, FloatAttr eps, SlotArgs& args) {
    args.set("norm_weight", weight(k, KernelRole::norm_weight, WeightLayout::rows()));
    if (k.getRoleOperand(KernelRole::norm_bias))
      args.set("norm_bias", weight(k, KernelRole::norm_bias, WeightLayout::rows()));
    return {n, eps.getValueAsDouble()};
  }

  EmbedSpec embed(EmbedKernelOp k, SlotArgs& args) {
    EmbedSpec e;
    args.set("ids", inputArg(KIME_INPUT_IDS, KIME_ROWS_T, b_.tokens, KIME_DTYPE_U32));
    args.set("tokpos", tokens(KIME_INPUT_TOKPOS));
    e.arith = k.getArith().value_or(Arithmetic::f32);
    const bool int8 = e.arith == Arithmetic::int8;
    args.set("tok", weight(k, KernelRole::tok_table, int8 ? WeightLayout::int8Rows() : WeightLayout::rows()));
    if (int8) args.set("tok_scale", weight(k, KernelRole::tok_table, WeightLayout::int8RowScales()));
    e.typeTable = bool(k.getTypeTable());
    if (e.typeTable) {
      args.set("tokseq", tokens(KIME_INPUT_TOKSEQ));
      args.set("qtype", inputArg(KIME_INPUT_QTYPE, KIME_ROWS_S, b_.seqs, KIME_DTYPE_U8));
      args.set("type", weight(k, KernelRole::type_table, WeightLayout::rows()));
    }
    e.learnedPos = bool(k.getPos());
    if (e.learnedPos)
      args.set("pos", weight(k, KernelRole::pos, int8 ? WeightLayout::int8Rows() : WeightLayout::rows()));
    if (e.learnedPos && int8) args.set("pos_scale", weight(k, KernelRole::pos, WeightLayout::int8RowScales()));
    return e;
  }

  // Sets `flops` to the matmul FLOPs per row of output.
  LinearSpec linear(LinearKernelOp k, KernelShape& s, SlotArgs& args, double& flops) {
    input(k, s, args);  // normed by a norm kernel when a norm is in front
    LinearSpec l;
    l.act = k.getAct().value_or(Activation::none);
    l.weightRows = !k.getWeight().getDefiningOp<WeightOp>();
    l.panel = s.out % kWeightPanel == 0 && !l.weightRows ? kWeightPanel : 0;
    l.arith = k.getArith().value_or(Arithmetic::f32);
    if (l.bf16() && !(l.panel && s.in % 2 == 0))
      throw CompileError("internal: bf16 linear \"" + k.getNode().str() + "\" of widths that make no pairs in panels");
    if (l.int8() && !(l.panel && s.in % 4 == 0))
      throw CompileError("internal: int8 linear \"" + k.getNode().str() + "\" of widths that make no quads in panels");
    l.rope.heads = k.getRopeHeads().value_or(0);
    const int64_t hd = l.rope.heads ? s.out / l.rope.heads : 0;
    l.rope.interleaved = l.rope.heads && hd % kRopePairGroup == 0;
    // Interleaved RoPE columns: the weights' and biases' columns in that order (WeightPacker).
    const int64_t ropeHead = l.rope.interleaved ? hd : 0;
    const WeightLayout layout = l.weightRows ? WeightLayout::rows()
                                : l.int8()   ? WeightLayout::int8Panels(l.int8Pairs(), ropeHead)
                                : l.panel    ? WeightLayout::panels(l.bf16(), ropeHead)
                                             : WeightLayout::transposed(ropeHead);
    args.set("weight", weight(k, KernelRole::weight, layout));
    l.bias = bool(k.getBias());
    if (l.bias) args.set("bias", weight(k, KernelRole::bias, WeightLayout::rows(ropeHead)));
    if (k.getWeightUp()) args.set("weight_up", weight(k, KernelRole::weight_up, layout));
    l.biasUp = bool(k.getBiasUp());
    if (l.biasUp) args.set("bias_up", weight(k, KernelRole::bias_up, WeightLayout::rows(ropeHead)));
    if (l.int8()) {
      const WeightLayout scales = WeightLayout::int8Scales(l.int8Pairs(), ropeHead);
      args.set("weight_scale", weight(k, KernelRole::weight, scales));
      if (k.getWeightUp()) args.set("weight_up_scale", weight(k, KernelRole::weight_up, scales));
    }
    if (l.rope.heads) ropeArgs(k, s, l.rope, hd, args);
    l.residual = bool(k.getResidual());
    if (l.residual) args.set("residual", valueArg(k.getResidual()));
    l.program = program(k, k.getProgramAttr(), args);
    // A few-row bucket's linear (the registry keeps it apart only where codegen says its code differs).
    l.fewRows = rowBound(s, b_.tokens, b_.seqs, b_.markers) <= kFewRows;
    flops = 2.0 * double(s.in) * double(s.out) * (l.act == Activation::swiglu ? 2 : 1);
    return l;
  }

  // A RoPE linear's positions and its tables of the angles.
  void ropeArgs(LinearKernelOp k, const KernelShape& s, RopeSpec& rope, int64_t hd, SlotArgs& args) {
    rope.theta = k.getRopeThetaAttr().getValueAsDouble();
    rope.rows = ropeRows_;
    args.set("tokpos", s.outputRows() ? outputRows(KIME_INPUT_OUT_POS) : tokens(KIME_INPUT_TOKPOS));
    args.set("rope_cos", weightArg(w_.ropeTable(false, hd, rope.theta, ropeRows_)));
    args.set("rope_sin", weightArg(w_.ropeTable(true, hd, rope.theta, ropeRows_)));
  }

  // Sets `flops` to the FLOPs per (query, key) pair: q.k and p.v.
  AttentionSpec attention(AttentionKernelOp k, KernelShape& s, SlotArgs& args, double& flops) {
    PlanArg q = arenaArg(k.getQ()), kk = arenaArg(k.getK());
    s.in = q.cols;
    AttentionSpec a;
    a.kvWidth = kk.cols;
    a.heads = int64_t(k.getHeads());
    a.kvHeads = int64_t(k.getKvHeads());
    a.scale = k.getScaleAttr().getValueAsDouble();
    a.maxLen = b_.tokens;
    args.set("q", q);
    args.set("k", kk);
    args.set("v", arenaArg(k.getV()));
    args.set("qseq", s.outputRows() ? outputRows(KIME_INPUT_OUT_SEQ) : tokens(KIME_INPUT_TOKSEQ));
    args.set("cu", inputArg(KIME_INPUT_CU, KIME_ROWS_S1, b_.seqs + 1, KIME_DTYPE_U32));
    flops = 4.0 * double(s.in);
    return a;
  }

  // Sets `flops` to the matmul FLOPs per row of output.
  HeadSpec head(HeadKernelOp k, KernelShape& s, SlotArgs& args, double& flops) {
    input(k, s, args);
    HeadSpec h;
    if (k.getNorm()) h.norm = norm(k, *k.getNorm(), k.getEpsAttr(), args);
    h.rows = k.getRows();
    const bool picked = hasOutputRows(k.getX());
    args.set("rows", h.rows == HeadRows::markers
                         ? inputArg(picked ? KIME_INPUT_OUT_MARKER_ROWS : KIME_INPUT_MARKER_ROWS, KIME_ROWS_M,
                                    b_.markers, KIME_DTYPE_I32)
                         : inputArg(picked ? KIME_INPUT_OUT_FIRST_ROWS : KIME_INPUT_FIRST_ROWS, KIME_ROWS_S, b_.seqs,
                                    KIME_DTYPE_I32));
    PlanArg w = weight(k, KernelRole::weight, WeightLayout::transposed());
    s.out = w.cols;
    args.set("weight", w);
    h.bias = bool(k.getBias());
    if (h.bias) args.set("bias", weight(k, KernelRole::bias, WeightLayout::rows()));
    flops = 2.0 * double(s.in) * double(s.out);
    return h;
  }

  const Bucket& b_;
  int64_t ropeRows_;
  int64_t vocab_;  // the rows of a RoPE table by token ids
  WeightPacker& w_;
};

}  // namespace

BucketPlan lowerBucket(MLIRContext& ctx, const Graph& g, const Bucket& bucket, int64_t ropeRows, WeightPacker& weights,
                       KernelRegistry& kernels, const mlir::kime::PipelineOptions& options, std::string* mlirOut) {
  OwningOpRef<ModuleOp> module = importGraph(ctx, g);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic& d) {
    diagnostics += (diagnostics.empty() ? "" : "\n") + d.str();
    return success();
  });
  PassManager pm(&ctx);
  mlir::kime::buildBucketPipeline(pm, bucket.tokens, bucket.seqs, bucket.markers, options);
  if (failed(pm.run(*module)))
    throw CompileError("graph \"" + g.name + "\", bucket {tokens " + std::to_string(bucket.tokens) + ", seqs " +
                       std::to_string(bucket.seqs) + ", markers " + std::to_string(bucket.markers) +
                       "}: " + diagnostics);
  if (mlirOut) {
    llvm::raw_string_ostream os(*mlirOut);
    module->print(os);
  }

  BucketPlan plan;
  plan.bucket = bucket;
  StepBuilder sb(bucket, ropeRows, g.vocab, weights);
  for (auto fn : module->getOps<func::FuncOp>()) {
    plan.arena = fn->getAttrOfType<IntegerAttr>(mlir::kime::kArenaAttr).getInt();
    for (KernelOpInterface k : fn.getOps<KernelOpInterface>()) {
      KernelSpec spec;
      PlanStep step = sb.build(k, spec);
      step.kernel = kernels.intern(spec);
      plan.steps.push_back(std::move(step));
    }
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    for (Value v : ret.getOperands()) plan.outputs.push_back(arenaArg(v));
  }
  return plan;
}

}  // namespace kime
