// The kernel ops' operands by role, and kernels found identical by their specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kime/IR/KimeDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "pipeline/Lowering.h"

namespace kime {
namespace {

using mlir::kime::KernelRole;

// Sets each choice the kernel's op has, so that it prints.
void setEveryChoice(mlir::Operation* op) {
  mlir::MLIRContext* ctx = op->getContext();
  mlir::Builder b(ctx);
  const std::pair<const char*, mlir::Attribute> choices[] = {
      {"norm", mlir::kime::NormKindAttr::get(ctx, NormKind::rms)},
      {"eps", b.getF64FloatAttr(1e-6)},
      {"heads", b.getI64IntegerAttr(2)},
      {"kv_heads", b.getI64IntegerAttr(1)},
      {"scale", b.getF64FloatAttr(0.5)},
      {"rows", mlir::kime::HeadRowsAttr::get(ctx, HeadRows::first)},
      {"gather", mlir::kime::GatherKindAttr::get(ctx, GatherKind::rows)},
      {"program", mlir::kime::ProgramAttr::get(ctx, *eltwise::Program::parse("x"))},
      {"rope_heads", b.getI64IntegerAttr(2)},
      {"rope_theta", b.getF64FloatAttr(1e4)}};
  for (const auto& [name, value] : choices)
    if (llvm::is_contained(op->getName().getAttributeNames(), mlir::StringAttr::get(ctx, name)))
      mlir::kime::setKernelChoice(op, name, value);
}

// The builder passes the roles in the order of the op's operands; each role of its class must
// reach the operand of its name, in the accessors, in the operand segments and in the printed
// form, and a role of no operand of the op is never reached.
template <class Op>
void expectRolesReachTheirOperands() {
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
  mlir::Operation* created = mlir::kime::createKernel(b, b.getUnknownLoc(), types[0], Op::kKernelClass, "k", byRole);
  auto op = mlir::cast<Op>(created);
  auto k = mlir::cast<mlir::kime::KernelOpInterface>(created);
  EXPECT_EQ(k.getKernelClass(), Op::kKernelClass);

  setEveryChoice(created);
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, mlir::OpPrintingFlags().assumeVerified());  // every role at once: not a valid kernel
  std::set<KernelRole> own(std::begin(Op::kRoles), std::end(Op::kRoles));
  for (unsigned i = 0; i < std::size(Op::kRoles); ++i) {
    const KernelRole role = Op::kRoles[i];
    const std::string name = mlir::kime::stringifyKernelRole(role).str();
    EXPECT_EQ(k.getRoleOperand(role), byRole[unsigned(role)]) << name;
    ASSERT_EQ(op.getODSOperands(i).size(), 1u) << name;
    EXPECT_EQ(op.getODSOperands(i).front(), byRole[unsigned(role)]) << name;
    const std::string printed = " " + name + "(%arg" + std::to_string(unsigned(role)) + " : !kime.tensor<[" +
                                std::to_string(100 + unsigned(role)) + "], f32>)";
    EXPECT_NE(text.find(printed), std::string::npos) << printed << " not in " << text;
  }
  for (unsigned r = 0; r < mlir::kime::kKernelRoleCount; ++r) {
    if (!own.count(KernelRole(r))) {
      EXPECT_FALSE(k.getRoleOperand(KernelRole(r))) << r;
    }
  }
  module->erase();
}

TEST(KernelOp, EachRoleReachesTheOperandOfItsName) {
  expectRolesReachTheirOperands<mlir::kime::EmbedKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::NormKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::LinearKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::AttentionKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::HeadKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::SelectKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::GatherKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::EltwiseKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::RopeKernelOp>();
  expectRolesReachTheirOperands<mlir::kime::PoolKernelOp>();
}

// The ops' roles are KernelRole's order (what the printed form and the byRole builder assume).
TEST(KernelOp, EachOpsRolesAreInRoleOrder) {
  auto ordered = [](const auto& roles) { return std::is_sorted(std::begin(roles), std::end(roles)); };
  EXPECT_TRUE(ordered(mlir::kime::EmbedKernelOp::kRoles));
  EXPECT_TRUE(ordered(mlir::kime::LinearKernelOp::kRoles));
  EXPECT_TRUE(ordered(mlir::kime::HeadKernelOp::kRoles));
  EXPECT_TRUE(ordered(mlir::kime::GatherKernelOp::kRoles));
}

KernelSpec linearSpec() {
  KernelSpec s;
  s.in = 256, s.out = 1024;
  LinearSpec l;
  l.panel = 16, l.act = Activation::gelu;
  s.choices = l;
  return s;
}

TEST(KernelRegistry, EqualSpecsAreOneKernelAndAnyDifferenceIsAnother) {
  KernelRegistry reg{{}, [](const KernelSpec&) { return true; }};
  const KernelSpec a = linearSpec();
  EXPECT_EQ(reg.intern(a), 0);
  EXPECT_EQ(reg.intern(linearSpec()), 0);
  KernelSpec bias = a, rows = a, theta = a, kind = a;
  bias.as<LinearSpec>().bias = true;
  rows.as<LinearSpec>().fewRows = true;
  theta.as<LinearSpec>().rope.heads = 4, theta.as<LinearSpec>().rope.theta = 1e4;
  KernelSpec theta2 = theta;
  theta2.as<LinearSpec>().rope.theta = 5e5;
  kind.choices = NormSpec{};
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
  few.as<LinearSpec>().fewRows = true;
  KernelRegistry never;
  EXPECT_EQ(never.intern(linearSpec()), 0);
  EXPECT_EQ(never.intern(few), 0);
  EXPECT_FALSE(never.specs[0].as<LinearSpec>().fewRows);
  int asked = 0;
  KernelRegistry differs{{}, [&](const KernelSpec& s) { return ++asked, s.in == 256; }};
  EXPECT_EQ(differs.intern(linearSpec()), 0);
  EXPECT_EQ(differs.intern(few), 1);
  EXPECT_TRUE(differs.specs[1].as<LinearSpec>().fewRows);
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace kime
