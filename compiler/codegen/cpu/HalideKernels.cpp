#include "HalideKernels.h"

#include <algorithm>

#include "ClassKernels.h"
#include "GenericKernels.h"

#include "support/Diagnostic.h"

// Each class's pipeline (ClassKernels.h, GenericKernels.h), by the spec's class.
namespace kime::cpu {

using namespace Halide;

namespace {

HalideKernel buildAnyKernel(const KernelSpec& s, const IsaInfo& isa) {
  const KernelShape& shape = s;
  const RowSchedule rows = rowSchedule(s, isa);
  return std::visit(Overloaded{[&](const EmbedSpec& c) { return embedKernel(shape, c, rows); },
                               [&](const NormSpec& c) { return normKernel(shape, c, rows); },
                               [&](const LinearSpec& c) { return linearKernel(shape, c, isa); },
                               [&](const AttentionSpec& c) { return attentionKernel(shape, c, isa); },
                               [&](const HeadSpec& c) { return headKernel(shape, c, rows); },
                               [&](const SelectSpec&) { return selectKernel(shape, rows); },
                               [&](const GatherSpec& c) { return gatherKernel(shape, c, rows); },
                               [&](const EltwiseSpec& c) { return eltwiseKernel(shape, c, rows); },
                               [&](const RopeSpec& c) { return ropeKernel(shape, c, rows); },
                               [&](const PoolSpec&) { return poolKernel(shape, rows); }},
                    s.choices);
}

}  // namespace

HalideKernel buildKernel(const KernelSpec& s, const IsaInfo& isa) {
  HalideKernel k = buildAnyKernel(s, isa);
  k.args = slotArgs(s, k.args);
  return k;
}

std::vector<Argument> slotArgs(const KernelSpec& s, const std::vector<Argument>& params) {
  // plan.h's slots of the spec, in order, but the output (the pipeline's own).
  std::vector<kime_arg_slot> slots = argSlots(s);
  slots.pop_back();
  std::vector<Argument> out;
  for (const kime_arg_slot& slot : slots) {
    auto p = std::find_if(params.begin(), params.end(), [&](const Argument& a) { return a.name == slot.name; });
    if (p == params.end())
      throw CompileError(std::string("internal: the CPU ") + className(s.kind()) + " kernel has no parameter \"" +
                         slot.name + "\"");
    // A linear's weights are bf16 with --cpu-precision bf16, int8 with int8; every other type is the slot's.
    const bool narrowWeight =
        (s.arith() == Arithmetic::bf16 && p->type == BFloat(16)) || (isInt8(s.arith()) && p->type == Int(8));
    if (!narrowWeight &&
        (p->type.code() != kime_dtype_codes[slot.dtype] || p->type.bits() != kime_dtype_bits[slot.dtype]))
      throw CompileError(std::string("internal: the CPU ") + className(s.kind()) + " kernel's \"" + slot.name +
                         "\" is not " + kime_dtype_names[slot.dtype]);
    out.push_back(*p);
  }
  return out;
}

}  // namespace kime::cpu
