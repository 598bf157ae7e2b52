// The kime dialect: its types and ops (generated from KimeBase.td, KimeTypes.td, KimeOps.td).
#ifndef KIME_IR_KIMEDIALECT_H
#define KIME_IR_KIMEDIALECT_H

#include "kime/core/Eltwise.h"
#include "kime/core/KernelChoices.h"
#include "kime/core/Shapes.h"
#include "kime/plan.h"
#include "llvm/ADT/Hashing.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kime::shapes {
// Lets !kime.tensor keep its dimensions uniqued in the MLIR context.
inline llvm::hash_code hash_value(const Dim& d) {
  return llvm::hash_combine(static_cast<int>(d.sym), d.value, d.bound);
}
}  // namespace kime::shapes

namespace kime::eltwise {
// Lets #kime.program keep its steps uniqued in the MLIR context.
inline llvm::hash_code hash_value(const Step& s) {
  return llvm::hash_combine(s.isInput, s.index, static_cast<int>(s.fn));
}
}  // namespace kime::eltwise

#include "kime/IR/KimeDialect.h.inc"
#include "kime/IR/KimeEnums.h.inc"

namespace mlir::kime {
// The verifier of every op of EltwiseOpInterface: its function's shape rule.
LogicalResult verifyEltwiseOp(Operation* op);

// A kernel's choices are the enums of kime/core/KernelChoices.h (KimeAttrs.td wraps them).
using ::kime::Activation;
using ::kime::Arithmetic;
using ::kime::GatherKind;
using ::kime::HeadRows;
using ::kime::NormKind;

// A choice's name as a keyword (`rms`, `int8`); `none` is not a value an attribute holds.
template <class E>
FailureOr<E> parseChoiceKeyword(AsmParser& parser) {
  const SMLoc at = parser.getCurrentLocation();
  StringRef word;
  if (failed(parser.parseKeyword(&word))) return failure();
  const std::optional<E> e = ::kime::parseChoice<E>(std::string_view(word.data(), word.size()));
  const E first = ::kime::choiceHasNone<E>() ? E(1) : E(0);
  if (!e || *e < first)
    return parser.emitError(at) << "expected " << ::kime::ChoiceNames<E>::what << " " << ::kime::choiceList<E>(first)
                                << ", not '" << word << "'";
  return *e;
}

// The kernel ops' `choice` directive: a choice attribute by its value's name alone.
template <class A>
ParseResult parseChoice(OpAsmParser& parser, A& attr) {
  auto e = parseChoiceKeyword<decltype(A().getValue())>(parser);
  if (failed(e)) return failure();
  attr = A::get(parser.getContext(), *e);
  return success();
}
template <class A>
void printChoice(OpAsmPrinter& printer, Operation*, A attr) {
  if (!attr) {
    printer << "<<NULL ATTRIBUTE>>";  // as MLIR prints a required attribute not yet set
    return;
  }
  printer << ::kime::nameOf(attr.getValue());
}
}  // namespace mlir::kime

#include "kime/IR/KimeInterfaces.h.inc"

#define GET_TYPEDEF_CLASSES
#include "kime/IR/KimeTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kime/IR/KimeAttrs.h.inc"

namespace mlir::kime {
// The builder every kernel op shares: its operands from `byRole` (one value or null per
// KernelRole) in the op's order (`roles`, the op's kRoles), with their segment sizes where it
// has optional ones.
template <class Properties, bool kSegments, size_t N>
void buildKernel(OpBuilder& b, OperationState& state, Type result, StringRef node, ArrayRef<Value> byRole,
                 const KernelRole (&roles)[N]) {
  auto& props = state.getOrAddProperties<Properties>();
  props.node = b.getStringAttr(node);
  for (size_t i = 0; i < N; ++i) {
    const Value v = byRole[size_t(roles[i])];
    if (v) state.addOperands(v);
    if constexpr (kSegments) props.operandSegmentSizes[i] = v ? 1 : 0;
  }
  state.addTypes(result);
}
}  // namespace mlir::kime

#define GET_OP_CLASSES
#include "kime/IR/KimeOps.h.inc"

namespace mlir::kime {

// The element type of a dtype (f32, f16, bf16, ui32, ui8) and back.
Type elementTypeOf(MLIRContext* ctx, ::kime::shapes::DType t);
std::optional<::kime::shapes::DType> dtypeOf(Type t);

// The number of kernel operand roles (KernelRole).
constexpr unsigned kKernelRoleCount = getMaxEnumValForKernelRole() + 1;

// A new kernel of class `kind` (the op of that class) at the builder's insertion point, its
// operands from `byRole` (one value or null per role); its choices are set afterwards.
Operation* createKernel(OpBuilder& b, Location loc, Type result, KernelClass kind, StringRef node,
                        ArrayRef<Value> byRole);

// Sets choice `name` (`norm`, `eps`, `act`, `rope_heads`, ...) of a kernel; a choice its class
// does not have is an internal error, never a silent discardable attribute.
void setKernelChoice(Operation* kernel, StringRef name, Attribute value);

}  // namespace mlir::kime

#endif  // KIME_IR_KIMEDIALECT_H
