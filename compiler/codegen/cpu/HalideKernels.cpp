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
  if (s.kind == KIME_CLASS_EMBED) return embedKernel(s, isa);
  if (s.kind == KIME_CLASS_LINEAR) return linearKernel(s, isa);
  if (s.kind == KIME_CLASS_ATTENTION) return attentionKernel(s, isa);
  if (s.kind == KIME_CLASS_HEAD) return headKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_SELECT) return selectKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_NORM) return normKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_GATHER) return gatherKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_ELTWISE) return eltwiseKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_ROPE) return ropeKernel(s, rowSchedule(s, isa));
  if (s.kind == KIME_CLASS_POOL) return poolKernel(s, rowSchedule(s, isa));
  throw CompileError(std::string("internal: no CPU kernel for class \"") + className(s.kind) + "\"");
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
      throw CompileError(std::string("internal: the CPU ") + className(s.kind) + " kernel has no parameter \"" +
                         slot.name + "\"");
    // A linear's weights are bf16 with --cpu-precision bf16, int8 with int8; every other type is the slot's.
    const bool narrowWeight = (s.bf16() && p->type == BFloat(16)) || (s.int8() && p->type == Int(8));
    if (!narrowWeight &&
        (p->type.code() != kime_dtype_codes[slot.dtype] || p->type.bits() != kime_dtype_bits[slot.dtype]))
      throw CompileError(std::string("internal: the CPU ") + className(s.kind) + " kernel's \"" + slot.name +
                         "\" is not " + kime_dtype_names[slot.dtype]);
    out.push_back(*p);
  }
  return out;
}

}  // namespace kime::cpu
