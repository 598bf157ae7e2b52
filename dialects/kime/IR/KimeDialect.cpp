#include "kime/IR/KimeDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::kime;
namespace shapes = ::kime::shapes;

#include "kime/IR/KimeDialect.cpp.inc"

void KimeDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "kime/IR/KimeTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kime/IR/KimeAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kime/IR/KimeOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

Type mlir::kime::elementTypeOf(MLIRContext* ctx, shapes::DType t) {
  switch (t) {
    case shapes::DType::F32:
      return Float32Type::get(ctx);
    case shapes::DType::F16:
      return Float16Type::get(ctx);
    case shapes::DType::BF16:
      return BFloat16Type::get(ctx);
    case shapes::DType::U32:
      return IntegerType::get(ctx, 32, IntegerType::Unsigned);
    case shapes::DType::U8:
      return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  }
  return {};
}

std::optional<shapes::DType> mlir::kime::dtypeOf(Type t) {
  if (t.isF32()) return shapes::DType::F32;
  if (t.isF16()) return shapes::DType::F16;
  if (t.isBF16()) return shapes::DType::BF16;
  if (t.isUnsignedInteger(32)) return shapes::DType::U32;
  if (t.isUnsignedInteger(8)) return shapes::DType::U8;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// !kime.tensor<[T, 256], f32>
//===----------------------------------------------------------------------===//

shapes::Shape KimeTensorType::toShape() const {
  return {std::vector<shapes::Dim>(getDims().begin(), getDims().end()), *dtypeOf(getElementType())};
}

KimeTensorType KimeTensorType::fromShape(MLIRContext* ctx, const shapes::Shape& s) {
  return KimeTensorType::get(ctx, s.dims, elementTypeOf(ctx, s.dtype));
}

LogicalResult KimeTensorType::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<shapes::Dim> dims,
                                     Type elementType) {
  if (!dtypeOf(elementType))
    return emitError() << "element type must be f32, f16, bf16, ui32 or ui8, not " << elementType;
  for (const shapes::Dim& d : dims) {
    if (d.isStatic() && d.value <= 0) return emitError() << "sizes must be positive, not " << d.value;
    if (!d.isStatic() && d.value < 0) return emitError() << "a symbol's offset must be >= 0";
  }
  return success();
}

static ParseResult parseDim(AsmParser& p, shapes::Dim& d) {
  int64_t n;
  OptionalParseResult num = p.parseOptionalInteger(n);
  if (num.has_value()) {
    if (failed(*num)) return failure();
    d = shapes::Dim::fixed(n);
    return success();
  }
  StringRef sym;
  SMLoc loc = p.getCurrentLocation();
  if (p.parseKeyword(&sym)) return failure();
  if (sym == "T")
    d = shapes::Dim::symbol(shapes::Sym::T);
  else if (sym == "S")
    d = shapes::Dim::symbol(shapes::Sym::S);
  else if (sym == "M")
    d = shapes::Dim::symbol(shapes::Sym::M);
  else if (sym == "R")
    d = shapes::Dim::symbol(shapes::Sym::R);
  else
    return p.emitError(loc, "expected a size or one of T, S, M, R, not '") << sym << "'";
  if (succeeded(p.parseOptionalPlus()) && p.parseInteger(d.value)) return failure();
  if (succeeded(p.parseOptionalColon()) && p.parseInteger(d.bound)) return failure();
  return success();
}

Type KimeTensorType::parse(AsmParser& p) {
  SmallVector<shapes::Dim> dims;
  Type element;
  if (p.parseLess() ||
      p.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] { return parseDim(p, dims.emplace_back()); }) ||
      p.parseComma() || p.parseType(element) || p.parseGreater())
    return {};
  return KimeTensorType::getChecked([&] { return p.emitError(p.getNameLoc()); }, p.getContext(), dims, element);
}

void KimeTensorType::print(AsmPrinter& p) const {
  p << "<" << shapes::str(std::vector<shapes::Dim>(getDims().begin(), getDims().end())) << ", " << getElementType()
    << ">";
}

#define GET_TYPEDEF_CLASSES
#include "kime/IR/KimeTypes.cpp.inc"

//===----------------------------------------------------------------------===//
// #kime.program<x in1 mul silu>
//===----------------------------------------------------------------------===//

::kime::eltwise::Program ProgramAttr::getProgram() const {
  return ::kime::eltwise::Program(std::vector<::kime::eltwise::Step>(getSteps().begin(), getSteps().end()));
}

LogicalResult ProgramAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<::kime::eltwise::Step> steps) {
  const ::kime::eltwise::Program p(std::vector<::kime::eltwise::Step>(steps.begin(), steps.end()));
  if (std::string e = p.check(); !e.empty()) return emitError() << "program<" << p.text() << ">: " << e;
  return success();
}

Attribute ProgramAttr::parse(AsmParser& p, Type) {
  std::string text;
  if (p.parseLess()) return {};
  StringRef word;
  while (succeeded(p.parseOptionalKeyword(&word))) text += (text.empty() ? "" : " ") + word.str();
  SMLoc loc = p.getCurrentLocation();
  if (p.parseGreater()) return {};
  std::string error;
  auto program = ::kime::eltwise::Program::parse(text, &error);
  if (!program) return p.emitError(loc, "program: ") << error, Attribute();
  return ProgramAttr::getChecked([&] { return p.emitError(loc); }, p.getContext(), program->steps());
}

void ProgramAttr::print(AsmPrinter& p) const { p << "<" << getProgram().text() << ">"; }

#define GET_ATTRDEF_CLASSES
#include "kime/IR/KimeAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers: each one applies the op's shape rule and compares the result type.
//===----------------------------------------------------------------------===//

static shapes::Shape shapeOf(Value v) { return cast<KimeTensorType>(v.getType()).toShape(); }

// A rule that makes `T` from `cu` cannot know T's bucket bound, so an inferred dimension without
// a bound matches the same dimension with any bound.
static bool matches(const shapes::Shape& inferred, const shapes::Shape& got) {
  if (inferred.dtype != got.dtype || inferred.rank() != got.rank()) return false;
  for (size_t i = 0; i < got.rank(); ++i) {
    const shapes::Dim &a = inferred.dims[i], &b = got.dims[i];
    if (a.sym != b.sym || a.value != b.value || (a.bound != 0 && a.bound != b.bound)) return false;
  }
  return true;
}

static LogicalResult check(Operation* op, const shapes::Inferred& r) {
  if (!r.ok()) return op->emitOpError(r.error);
  shapes::Shape got = shapeOf(op->getResult(0));
  if (!matches(r.shape, got))
    return op->emitOpError("result must be ") << shapes::str(r.shape.dims) << " " << shapes::str(r.shape.dtype)
                                              << ", not " << shapes::str(got.dims) << " " << shapes::str(got.dtype);
  return success();
}

LogicalResult WeightOp::verify() { return check(*this, shapes::inferWeight(shapeOf(getResult()))); }
LogicalResult GatherRowsOp::verify() {
  return check(*this, shapes::inferGatherRows(shapeOf(getTable()), shapeOf(getIndex())));
}
LogicalResult ExpandSeqsOp::verify() {
  return check(*this, shapes::inferExpandSeqs(shapeOf(getX()), shapeOf(getCu())));
}
LogicalResult PositionsOp::verify() { return check(*this, shapes::inferPositions(shapeOf(getCu()))); }
LogicalResult mlir::kime::verifyEltwiseOp(Operation* op) {
  if (op->getNumOperands() == 2)
    return check(op, shapes::inferElementwise(shapeOf(op->getOperand(0)), shapeOf(op->getOperand(1))));
  return check(op, shapes::inferUnary(shapeOf(op->getOperand(0))));
}
LogicalResult RmsNormOp::verify() {
  return check(*this, shapes::inferRmsNorm(shapeOf(getX()), shapeOf(getWeight()), getEps().convertToDouble()));
}
LogicalResult LayerNormOp::verify() {
  return check(*this, shapes::inferLayerNorm(shapeOf(getX()), shapeOf(getWeight()), shapeOf(getBias()),
                                             getEps().convertToDouble()));
}
LogicalResult LinearOp::verify() {
  std::optional<shapes::Shape> bias;
  if (getBias()) bias = shapeOf(getBias());
  return check(*this, shapes::inferLinear(shapeOf(getX()), shapeOf(getWeight()), bias ? &*bias : nullptr));
}
LogicalResult RopeOp::verify() {
  return check(*this, shapes::inferRope(shapeOf(getX()), shapeOf(getPos()), getHeads(), getTheta().convertToDouble()));
}
LogicalResult AttentionOp::verify() {
  std::optional<shapes::Shape> qseq;
  if (getQseq()) qseq = shapeOf(getQseq());
  return check(*this,
               shapes::inferAttention(shapeOf(getQ()), shapeOf(getK()), shapeOf(getV()), shapeOf(getCu()), getHeads(),
                                      getKvHeads(), getScale().convertToDouble(), qseq ? &*qseq : nullptr));
}
LogicalResult GatherMarkersOp::verify() {
  return check(*this,
               shapes::inferGatherMarkers(shapeOf(getX()), shapeOf(getCu()), shapeOf(getMarkers()), shapeOf(getMcu())));
}
LogicalResult FirstRowsOp::verify() { return check(*this, shapes::inferFirstRows(shapeOf(getX()), shapeOf(getCu()))); }
LogicalResult MeanSeqsOp::verify() { return check(*this, shapes::inferMeanSeqs(shapeOf(getX()), shapeOf(getCu()))); }
LogicalResult SqueezeOp::verify() { return check(*this, shapes::inferSqueeze(shapeOf(getX()))); }
LogicalResult SequenceIdsOp::verify() { return check(*this, shapes::inferSequenceIds(shapeOf(getCu()))); }
LogicalResult OutputRowsOp::verify() {
  return check(*this,
               shapes::inferOutputRows(shapeOf(getX()), shapeOf(getCu()), shapeOf(getMarkers()), shapeOf(getMcu())));
}

#include "kime/IR/KimeEnums.cpp.inc"

#define GET_OP_CLASSES
#include "kime/IR/KimeOps.cpp.inc"

//===----------------------------------------------------------------------===//
// kime.kernel
//===----------------------------------------------------------------------===//

#include "kime/IR/KimeInterfaces.cpp.inc"

void KernelOp::build(OpBuilder& b, OperationState& state, Type result, KernelClass kind, StringRef node,
                     ArrayRef<Value> byRole) {
  assert(byRole.size() == kKernelRoleCount && "one value (or null) per role");
  auto at = [&](KernelRole r) { return byRole[size_t(r)]; };
  using R = KernelRole;
  build(b, state, result, kind, node, at(R::x), at(R::q), at(R::k), at(R::v), at(R::ids), at(R::qtype), at(R::cu),
        at(R::markers), at(R::mcu), at(R::tok_table), at(R::type_table), at(R::pos), at(R::norm_weight),
        at(R::norm_bias), at(R::weight), at(R::bias), at(R::weight_up), at(R::bias_up), at(R::residual), at(R::index),
        at(R::in1), at(R::in2), at(R::in3), NormKindAttr(), FloatAttr(), ActivationAttr(), IntegerAttr(), FloatAttr(),
        IntegerAttr(), IntegerAttr(), FloatAttr(), HeadRowsAttr(), ArithmeticAttr(), GatherKindAttr(), ProgramAttr(),
        IntegerAttr());
}

KernelClass KernelOp::getKernelClass() { return getKind(); }
std::optional<int64_t> KernelOp::getArenaOffset() { return getOffset(); }
void KernelOp::setArenaOffset(int64_t offset) { setOffset(offset); }

Value KernelOp::getRoleOperand(KernelRole role) {
  switch (role) {
    case KernelRole::x:
      return getX();
    case KernelRole::q:
      return getQ();
    case KernelRole::k:
      return getK();
    case KernelRole::v:
      return getV();
    case KernelRole::ids:
      return getIds();
    case KernelRole::qtype:
      return getQtype();
    case KernelRole::cu:
      return getCu();
    case KernelRole::markers:
      return getMarkers();
    case KernelRole::mcu:
      return getMcu();
    case KernelRole::tok_table:
      return getTokTable();
    case KernelRole::type_table:
      return getTypeTable();
    case KernelRole::pos:
      return getPos();
    case KernelRole::norm_weight:
      return getNormWeight();
    case KernelRole::norm_bias:
      return getNormBias();
    case KernelRole::weight:
      return getWeight();
    case KernelRole::bias:
      return getBias();
    case KernelRole::weight_up:
      return getWeightUp();
    case KernelRole::bias_up:
      return getBiasUp();
    case KernelRole::residual:
      return getResidual();
    case KernelRole::index:
      return getIndex();
    case KernelRole::in1:
      return getIn1();
    case KernelRole::in2:
      return getIn2();
    case KernelRole::in3:
      return getIn3();
  }
  return {};
}

const KernelRoles& mlir::kime::kernelRoles(KernelClass c) {
  using R = KernelRole;
  auto set = [](std::initializer_list<R> rs) {
    KernelRoleSet s = 0;
    for (R r : rs) s |= roleBit(r);
    return s;
  };
  static const KernelRoles roles[KIME_CLASS_COUNT] = {
      /* embed: qtype and cu with the type table */
      {set({R::ids, R::tok_table}), set({R::qtype, R::cu, R::type_table, R::pos})},
      /* norm */ {set({R::x, R::norm_weight}), set({R::norm_bias})},
      /* linear: cu for RoPE's positions */
      {set({R::x, R::weight}), set({R::bias, R::weight_up, R::bias_up, R::cu, R::residual, R::in1, R::in2, R::in3})},
      /* attention */ {set({R::q, R::k, R::v, R::cu}), 0},
      /* head: markers and mcu for the marker head */
      {set({R::x, R::cu, R::weight}), set({R::norm_weight, R::norm_bias, R::markers, R::mcu, R::bias})},
      /* select */ {set({R::x, R::cu, R::markers, R::mcu}), 0},
      /* gather: index for gather(rows), cu for the others, markers and mcu for gather(markers) */
      {set({R::x}), set({R::index, R::cu, R::markers, R::mcu})},
      /* eltwise */ {set({R::x}), set({R::in1, R::in2, R::in3})},
      /* rope: index, the positions */ {set({R::x, R::index}), 0},
      /* pool */ {set({R::x, R::cu}), 0},
  };
  return roles[size_t(c)];
}

// The dialect's classes are plan.h's, by number and by name.
#define KIME_SAME_CLASS(E, P) static_assert(int(KernelClass::E) == P, "kernel class numbers drift from plan.h");
KIME_SAME_CLASS(embed, KIME_CLASS_EMBED)
KIME_SAME_CLASS(norm, KIME_CLASS_NORM)
KIME_SAME_CLASS(linear, KIME_CLASS_LINEAR)
KIME_SAME_CLASS(attention, KIME_CLASS_ATTENTION)
KIME_SAME_CLASS(head, KIME_CLASS_HEAD)
KIME_SAME_CLASS(select, KIME_CLASS_SELECT)
KIME_SAME_CLASS(gather, KIME_CLASS_GATHER)
KIME_SAME_CLASS(eltwise, KIME_CLASS_ELTWISE)
KIME_SAME_CLASS(rope, KIME_CLASS_ROPE)
KIME_SAME_CLASS(pool, KIME_CLASS_POOL)
#undef KIME_SAME_CLASS
static_assert(kKernelRoleCount <= 32, "KernelRoleSet holds 32 roles");

namespace {

// "a linear kernel", "an attention kernel": how the messages name a kernel of class `c`.
std::string aKernel(KernelClass c) {
  StringRef name = stringifyKernelClass(c);
  return (StringRef("aeiou").contains(name.front()) ? "an " : "a ") + name.str() + " kernel";
}

// The choices of a kernel: each one belongs to some classes and comes with some operands.
class KernelChoices {
 public:
  explicit KernelChoices(KernelOp op) : op_(op), kind_(op.getKind()) {}

  LogicalResult verify() {
    const bool norm = op_.getNorm().has_value(), swiglu = op_.getAct() == Activation::swiglu;
    const bool rope = op_.getRopeHeads().has_value(), linear = kind_ == KernelClass::linear;
    if (failed(onlyFor("norm", norm, {KernelClass::norm, KernelClass::head})) ||
        failed(onlyFor("act", op_.getAct().has_value(), {KernelClass::linear})) ||
        failed(onlyFor("rope", rope, {KernelClass::linear, KernelClass::rope})) ||
        failed(onlyFor("gather", op_.getGather().has_value(), {KernelClass::gather})) ||
        failed(onlyFor("program", op_.getProgram().has_value(), {KernelClass::eltwise, KernelClass::linear})) ||
        failed(onlyFor("arith", op_.getArith().has_value(),
                       {KernelClass::linear, KernelClass::embed, KernelClass::gather})) ||
        failed(onlyFor("heads", op_.getHeads().has_value(), {KernelClass::attention})) ||
        failed(onlyFor("rows", op_.getRows().has_value(), {KernelClass::head})))
      return failure();
    if (kind_ == KernelClass::norm && !norm) return op_.emitOpError("a norm kernel needs its norm(...)");
    if (kind_ == KernelClass::attention && !(op_.getKvHeads() && op_.getScale()))
      return op_.emitOpError("an attention kernel needs heads(heads, kv_heads, scale)");
    if (kind_ == KernelClass::head && !op_.getRows()) return op_.emitOpError("a head kernel needs its rows(...)");
    if (kind_ == KernelClass::rope && !rope) return op_.emitOpError("a rope kernel needs its rope(...)");
    if (kind_ == KernelClass::gather && failed(verifyGather())) return failure();
    if (!linear && op_.getArith() && failed(verifyInt8Table())) return failure();
    if (kind_ == KernelClass::eltwise && failed(verifyProgram())) return failure();
    if (kind_ == KernelClass::linear && op_.getProgram() && failed(verifyProgram())) return failure();
    const bool markerRows = op_.getRows() == HeadRows::markers;
    if (failed(together("norm(...)", norm, "eps", op_.getEps().has_value())) ||
        failed(together("norm(...)", norm, "\"norm_weight\" operand", has(KernelRole::norm_weight))) ||
        failed(together("norm(layer, ...)", op_.getNorm() == NormKind::layer, "\"norm_bias\" operand",
                        has(KernelRole::norm_bias))) ||
        failed(together("act(swiglu)", swiglu, "\"weight_up\" operand", has(KernelRole::weight_up))) ||
        failed(together("act(swiglu)", swiglu, "\"bias_up\" operand", swiglu || has(KernelRole::bias_up))) ||
        failed(together("rope(...)", rope, "theta", op_.getRopeTheta().has_value())) ||
        failed(together("rope(...)", rope, "\"cu\" operand", linear ? has(KernelRole::cu) : rope)) ||
        failed(together("rows(markers)", markerRows, "\"markers\" operand",
                        kind_ == KernelClass::head ? has(KernelRole::markers) : markerRows)) ||
        failed(together("rows(markers)", markerRows, "\"mcu\" operand",
                        kind_ == KernelClass::head ? has(KernelRole::mcu) : markerRows)))
      return failure();
    return success();
  }

 private:
  bool has(KernelRole r) { return bool(op_.getRoleOperand(r)); }

  // gather(rows) takes its index; the others cu, and gather(markers) the markers and mcu too.
  LogicalResult verifyGather() {
    if (!op_.getGather()) return op_.emitOpError("a gather kernel needs its gather(...)");
    const GatherKind g = *op_.getGather();
    if (failed(together("gather(rows)", g == GatherKind::rows, "\"index\" operand", has(KernelRole::index))) ||
        failed(together("gather(seqs|first|markers)", g != GatherKind::rows, "\"cu\" operand", has(KernelRole::cu))) ||
        failed(
            together("gather(markers)", g == GatherKind::markers, "\"markers\" operand", has(KernelRole::markers))) ||
        failed(together("gather(markers)", g == GatherKind::markers, "\"mcu\" operand", has(KernelRole::mcu))))
      return failure();
    return success();
  }

  // arith(...) on an embed or gather kernel: int8 rows of a token table, a weight read by rows.
  LogicalResult verifyInt8Table() {
    if (op_.getArith() != Arithmetic::int8)
      return op_.emitOpError("arith(") << ::kime::nameOf(*op_.getArith())
                                       << ") is for linears; an embed or gather kernel takes arith(int8) only";
    const Value table = op_.getRoleOperand(kind_ == KernelClass::embed ? KernelRole::tok_table : KernelRole::x);
    if (!table || !table.getDefiningOp<WeightOp>() ||
        (kind_ == KernelClass::gather && op_.getGather() != GatherKind::rows))
      return op_.emitOpError(
          "arith(int8) stores a weight's rows as int8: a gather(rows) of a weight or an embed "
          "kernel's tok_table");
    return success();
  }

  // The program (well formed: #kime.program's verifier) reads exactly the inputs the kernel has.
  LogicalResult verifyProgram() {
    if (!op_.getProgram()) return op_.emitOpError("an eltwise kernel needs its program<...>");
    const ::kime::eltwise::Program p = op_.getProgram()->getProgram();
    const KernelRole inputs[] = {KernelRole::x, KernelRole::in1, KernelRole::in2, KernelRole::in3};
    const unsigned read = p.inputsRead();
    for (unsigned i = 0; i < 4; ++i) {
      if (!has(inputs[i]) && (read & (1u << i)))
        return op_.emitOpError("program<")
               << p.text() << "> reads " << ::kime::eltwise::inputName(int(i)) << ", which the kernel does not have";
      if (has(inputs[i]) && !(read & (1u << i)))
        return op_.emitOpError("program<")
               << p.text() << "> never reads its \"" << stringifyKernelRole(inputs[i]) << "\" operand";
    }
    return success();
  }

  LogicalResult onlyFor(StringRef choice, bool present, std::initializer_list<KernelClass> classes) {
    if (!present || llvm::is_contained(classes, kind_)) return success();
    return op_.emitOpError(aKernel(kind_)) << " takes no " << choice << "(...)";
  }

  // `what` and `with` go together: each one without the other is an error.
  LogicalResult together(StringRef what, bool a, StringRef with, bool b) {
    if (a == b) return success();
    if (a) return op_.emitOpError(aKernel(kind_)) << " with " << what << " needs its " << with;
    return op_.emitOpError(aKernel(kind_)) << " with " << with << " needs " << what;
  }

  KernelOp op_;
  KernelClass kind_;
};

}  // namespace

LogicalResult KernelOp::verify() {
  const KernelRoles& roles = kernelRoles(getKind());
  for (unsigned i = 0; i < kKernelRoleCount; ++i) {
    const auto role = KernelRole(i);
    const bool has = bool(getRoleOperand(role));
    if (has && !((roles.required | roles.optional) & roleBit(role)))
      return emitOpError(aKernel(getKind())) << " takes no \"" << stringifyKernelRole(role) << "\" operand";
    if (!has && (roles.required & roleBit(role)))
      return emitOpError(aKernel(getKind())) << " needs its \"" << stringifyKernelRole(role) << "\" operand";
  }
  return KernelChoices(*this).verify();
}
