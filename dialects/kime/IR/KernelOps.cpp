// The kernel ops (KimeKernel.td): each class's verifier, making a kernel of a class, and its
// choices. What ODS says of an op (its operands and attributes, which are required) is not
// checked again here: only the choices that go together.
#include "kime/IR/KimeDialect.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::kime;

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

Operation* mlir::kime::createKernel(OpBuilder& b, Location loc, Type result, KernelClass kind, StringRef node,
                                    ArrayRef<Value> byRole) {
  assert(byRole.size() == kKernelRoleCount && "one value (or null) per role");
  switch (kind) {
    case KernelClass::embed:
      return b.create<EmbedKernelOp>(loc, result, node, byRole);
    case KernelClass::norm:
      return b.create<NormKernelOp>(loc, result, node, byRole);
    case KernelClass::linear:
      return b.create<LinearKernelOp>(loc, result, node, byRole);
    case KernelClass::attention:
      return b.create<AttentionKernelOp>(loc, result, node, byRole);
    case KernelClass::head:
      return b.create<HeadKernelOp>(loc, result, node, byRole);
    case KernelClass::select:
      return b.create<SelectKernelOp>(loc, result, node, byRole);
    case KernelClass::gather:
      return b.create<GatherKernelOp>(loc, result, node, byRole);
    case KernelClass::eltwise:
      return b.create<EltwiseKernelOp>(loc, result, node, byRole);
    case KernelClass::rope:
      return b.create<RopeKernelOp>(loc, result, node, byRole);
    case KernelClass::pool:
      return b.create<PoolKernelOp>(loc, result, node, byRole);
  }
  llvm_unreachable("a kernel class with no op");
}

void mlir::kime::setKernelChoice(Operation* kernel, StringRef name, Attribute value) {
  if (!llvm::is_contained(kernel->getName().getAttributeNames(), StringAttr::get(kernel->getContext(), name)))
    llvm::report_fatal_error("internal: " + kernel->getName().getStringRef() + " has no choice " + name);
  kernel->setAttr(name, value);
}

namespace {

// "a linear kernel", "an attention kernel": how the messages name a kernel.
std::string aKernel(KernelOpInterface k) {
  StringRef name = stringifyKernelClass(k.getKernelClass());
  return (StringRef("aeiou").contains(name.front()) ? "an " : "a ") + name.str() + " kernel";
}

// `what` and `with` go together: each one without the other is an error.
LogicalResult together(KernelOpInterface k, StringRef what, bool a, StringRef with, bool b) {
  if (a == b) return success();
  if (a) return k->emitOpError(aKernel(k)) << " with " << what << " needs its " << with;
  return k->emitOpError(aKernel(k)) << " with " << with << " needs " << what;
}

// The program (well formed: #kime.program's verifier) reads exactly the inputs the kernel has.
LogicalResult verifyProgram(KernelOpInterface k, ProgramAttr program) {
  const ::kime::eltwise::Program p = program.getProgram();
  const KernelRole inputs[] = {KernelRole::x, KernelRole::in1, KernelRole::in2, KernelRole::in3};
  const unsigned read = p.inputsRead();
  for (unsigned i = 0; i < 4; ++i) {
    const bool has = bool(k.getRoleOperand(inputs[i]));
    if (!has && (read & (1u << i)))
      return k->emitOpError("program<") << p.text() << "> reads " << ::kime::eltwise::inputName(int(i))
                                        << ", which the kernel does not have";
    if (has && !(read & (1u << i)))
      return k->emitOpError("program<") << p.text() << "> never reads its \"" << stringifyKernelRole(inputs[i])
                                        << "\" operand";
  }
  return success();
}

// arith(...) on an embed or gather kernel: int8 rows of a token table, a weight read by rows.
LogicalResult verifyInt8Table(KernelOpInterface k, Arithmetic arith, Value table, bool byRows) {
  if (arith != Arithmetic::int8)
    return k->emitOpError("arith(") << ::kime::nameOf(arith)
                                    << ") is for linears; an embed or gather kernel takes arith(int8) only";
  if (!table.getDefiningOp<WeightOp>() || !byRows)
    return k->emitOpError(
        "arith(int8) stores a weight's rows as int8: a gather(rows) of a weight or an embed kernel's tok_table");
  return success();
}

}  // namespace

LogicalResult EmbedKernelOp::verify() {
  return getArith() ? verifyInt8Table(*this, *getArith(), getTokTable(), true) : success();
}

LogicalResult NormKernelOp::verify() {
  return together(*this, "norm(layer, ...)", getNorm() == NormKind::layer, "\"norm_bias\" operand",
                  bool(getNormBias()));
}

LogicalResult LinearKernelOp::verify() {
  const bool swiglu = getAct() == Activation::swiglu, rope = getRopeHeads().has_value();
  if (failed(together(*this, "act(swiglu)", swiglu, "\"weight_up\" operand", bool(getWeightUp()))) ||
      failed(together(*this, "act(swiglu)", swiglu, "\"bias_up\" operand", swiglu || bool(getBiasUp()))) ||
      failed(together(*this, "rope(...)", rope, "theta", getRopeTheta().has_value())) ||
      failed(together(*this, "rope(...)", rope, "\"cu\" operand", bool(getCu()))))
    return failure();
  return getProgram() ? verifyProgram(*this, *getProgram()) : success();
}

LogicalResult HeadKernelOp::verify() {
  const bool norm = getNorm().has_value(), markerRows = getRows() == HeadRows::markers;
  if (failed(together(*this, "norm(...)", norm, "eps", getEps().has_value())) ||
      failed(together(*this, "norm(...)", norm, "\"norm_weight\" operand", bool(getNormWeight()))) ||
      failed(together(*this, "norm(layer, ...)", getNorm() == NormKind::layer, "\"norm_bias\" operand",
                      bool(getNormBias()))) ||
      failed(together(*this, "rows(markers)", markerRows, "\"markers\" operand", bool(getMarkers()))) ||
      failed(together(*this, "rows(markers)", markerRows, "\"mcu\" operand", bool(getMcu()))))
    return failure();
  return success();
}

// gather(rows) takes its index; the others cu, and gather(markers) the markers and mcu too.
LogicalResult GatherKernelOp::verify() {
  const GatherKind g = getGather();
  if (failed(together(*this, "gather(rows)", g == GatherKind::rows, "\"index\" operand", bool(getIndex()))) ||
      failed(together(*this, "gather(seqs|first|markers)", g != GatherKind::rows, "\"cu\" operand", bool(getCu()))) ||
      failed(together(*this, "gather(markers)", g == GatherKind::markers, "\"markers\" operand", bool(getMarkers()))) ||
      failed(together(*this, "gather(markers)", g == GatherKind::markers, "\"mcu\" operand", bool(getMcu()))))
    return failure();
  return getArith() ? verifyInt8Table(*this, *getArith(), getX(), g == GatherKind::rows) : success();
}

LogicalResult EltwiseKernelOp::verify() { return verifyProgram(*this, getProgram()); }
