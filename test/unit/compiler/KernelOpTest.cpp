// kime.kernel's operands by role, and kernels found identical by their specs.
#include <gtest/gtest.h>

#include "kime/IR/KimeDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "pipeline/Lowering.h"

namespace kime {
namespace {

using mlir::kime::KernelRole;

// The builder passes the roles in the order of the op's operands; each role must reach the
// operand of its name, in the accessors, in the operand segments and in the printed form.
TEST(KernelOp, EachRoleReachesTheOperandOfItsName) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::kime::KimeDialect, mlir::func::FuncDialect>();
  mlir::OpBuilder b(&ctx);
  auto module = mlir::ModuleOp::create(b.getUnknownLoc());
  // Each role's value has its own width, so that the printed form tells them apart.
  std::vector<mlir::Type> types;
  for (unsigned r = 0; r < mlir::kime::kKernelRoleCount; ++r)
    types.push_back(mlir::kime::KimeTensorType::fromShape(&ctx, {{shapes::Dim::fixed(100 + r)}, shapes::DType::F32}));
  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<mlir::func::FuncOp>(b.getUnknownLoc(), "f", b.getFunctionType(types, {}));
  b.setInsertionPointToStart(fn.addEntryBlock());
  std::vector<mlir::Value> byRole(fn.getArguments().begin(), fn.getArguments().end());
  auto op = b.create<mlir::kime::KernelOp>(b.getUnknownLoc(), types[0], mlir::kime::KernelClass::linear, "k", byRole);

  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, mlir::OpPrintingFlags().assumeVerified());  // a linear with every role is invalid
  for (unsigned r = 0; r < mlir::kime::kKernelRoleCount; ++r) {
    const auto role = KernelRole(r);
    const std::string name = mlir::kime::stringifyKernelRole(role).str();
    EXPECT_EQ(op.getRoleOperand(role), byRole[r]) << name;
    ASSERT_EQ(op.getODSOperands(r).size(), 1u) << name;
    EXPECT_EQ(op.getODSOperands(r).front(), byRole[r]) << name;
    const std::string printed =
        " " + name + "(%arg" + std::to_string(r) + " : !kime.tensor<[" + std::to_string(100 + r) + "], f32>)";
    EXPECT_NE(text.find(printed), std::string::npos) << printed << " not in " << text;
  }
  module->erase();
}

TEST(KernelRoles, EachClassTakesWhatItRequires) {
  for (int c = 0; c < KIME_CLASS_COUNT; ++c) {
    const mlir::kime::KernelRoles& roles = mlir::kime::kernelRoles(mlir::kime::KernelClass(c));
    EXPECT_NE(roles.required, 0u) << kime_kernel_class_names[c];
    EXPECT_EQ(roles.required & roles.optional, 0u) << kime_kernel_class_names[c];
  }
}

KernelSpec linearSpec() {
  KernelSpec s;
  s.kind = KIME_CLASS_LINEAR, s.in = 256, s.out = 1024, s.panel = 16, s.act = Activation::gelu;
  return s;
}

TEST(KernelRegistry, EqualSpecsAreOneKernelAndAnyDifferenceIsAnother) {
  KernelRegistry reg{{}, [](const KernelSpec&) { return true; }};
  const KernelSpec a = linearSpec();
  EXPECT_EQ(reg.intern(a), 0);
  EXPECT_EQ(reg.intern(linearSpec()), 0);
  KernelSpec bias = a, rows = a, theta = a, kind = a;
  bias.bias = true;
  rows.fewRows = true;
  theta.ropeHeads = 4, theta.ropeTheta = 1e4;
  KernelSpec theta2 = theta;
  theta2.ropeTheta = 5e5;
  kind.kind = KIME_CLASS_NORM;
  EXPECT_EQ(reg.intern(bias), 1);
  EXPECT_EQ(reg.intern(rows), 2);
  EXPECT_EQ(reg.intern(theta), 3);
  EXPECT_EQ(reg.intern(theta2), 4);
  EXPECT_EQ(reg.intern(kind), 5);
  EXPECT_EQ(reg.intern(theta), 3);
  EXPECT_EQ(reg.specs.size(), 6u);
  EXPECT_EQ(reg.name(3), "k3_linear");
}

// A few-row linear is a kernel of its own only where codegen says its code differs.
TEST(KernelRegistry, AFewRowKernelIsApartOnlyWhereItsCodeDiffers) {
  KernelSpec few = linearSpec();
  few.fewRows = true;
  KernelRegistry never;
  EXPECT_EQ(never.intern(linearSpec()), 0);
  EXPECT_EQ(never.intern(few), 0);
  EXPECT_FALSE(never.specs[0].fewRows);
  int asked = 0;
  KernelRegistry differs{{}, [&](const KernelSpec& s) { return ++asked, s.in == 256; }};
  EXPECT_EQ(differs.intern(linearSpec()), 0);
  EXPECT_EQ(differs.intern(few), 1);
  EXPECT_TRUE(differs.specs[1].fewRows);
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace kime
