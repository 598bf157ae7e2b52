//===- KimeInterfaces.td - what passes read off any kime kernel -----------===//
#ifndef KIME_INTERFACES_TD
#define KIME_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Kime_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::mlir::kime";
  let description = [{
    What the passes after kime-fuse and the compiler's lowering read off a kernel: its class,
    its operands by role, and the arena offset kime-plan-memory gives its result.
  }];
  let methods = [
    InterfaceMethod<"The kernel's class (plan.h's numbering).", "::mlir::kime::KernelClass",
                    "getKernelClass", (ins), "", [{ return ConcreteOp::kKernelClass; }]>,
    InterfaceMethod<"The Graph node the kernel ends at.", "::llvm::StringRef", "getNodeName", (ins), "",
                    [{ return $_op.getNode(); }]>,
    InterfaceMethod<"The operand playing `role`, or null (the op's `kRoles` are its operands' roles).",
                    "::mlir::Value", "getRoleOperand", (ins "::mlir::kime::KernelRole":$role), "", [{
      for (unsigned i = 0; i < std::size(ConcreteOp::kRoles); ++i)
        if (ConcreteOp::kRoles[i] == role) {
          auto operands = $_op.getODSOperands(i);
          return operands.empty() ? ::mlir::Value() : *operands.begin();
        }
      return {};
    }]>,
    InterfaceMethod<"The result's byte offset in the arena, once planned.",
                    "std::optional<int64_t>", "getArenaOffset", (ins), "", [{ return $_op.getOffset(); }]>,
    InterfaceMethod<"Places the result at `offset` in the arena.", "void", "setArenaOffset",
                    (ins "int64_t":$offset), "", [{ $_op.setOffset(offset); }]>,
  ];
}

def Kime_EltwiseOpInterface : OpInterface<"EltwiseOpInterface"> {
  let cppNamespace = "::mlir::kime";
  let description = [{
    A Graph op that applies one elementwise function (kime/core/Eltwise.h) to its operands, f32
    tensors of one shape: what kime-fuse puts into a program.
  }];
  let methods = [
    InterfaceMethod<"The function the op applies.", "::kime::eltwise::Fn", "getFn">,
  ];
  let verify = [{ return ::mlir::kime::verifyEltwiseOp($_op); }];
}

#endif // KIME_INTERFACES_TD
