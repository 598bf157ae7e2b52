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
LogicalResult TokenTypesOp::verify() { return check(*this, shapes::inferTokenTypes(shapeOf(getCu()))); }
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

#include "kime/IR/KimeInterfaces.cpp.inc"
