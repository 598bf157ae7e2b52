// The check of the Sapphire Rapids kernels (ForeignInstructions.h) finds the instructions of
// AVX512-FP16, AVX-VNNI and AMX in llvm-objdump's output, names the function they are in, and
// passes the AVX-512, VNNI, BF16 and F16C ones those targets' CPUs all have.
#include <gtest/gtest.h>

#include "codegen/cpu/ForeignInstructions.h"

namespace kime::cpu {
namespace {

TEST(ForeignInstructions, NamesTheExtensionOfEachForeignMnemonic) {
  for (const char* m : {"vmovw", "vmovsh", "vaddph", "vfmadd231ph", "vcvtph2psx", "vcvtps2phx", "vcvtsh2ss",
                        "vcvtss2sh", "vcvtdq2ph", "vfpclassphz", "vrcpsh"})
    EXPECT_STREQ(foreignExtension(m), "AVX512-FP16") << m;
  EXPECT_STREQ(foreignExtension("{vex} vpdpbusd"), "AVX-VNNI");
  for (const char* m : {"tdpbusd", "tileloadd", "tilezero", "ldtilecfg"}) EXPECT_STREQ(foreignExtension(m), "AMX") << m;
}

TEST(ForeignInstructions, PassesWhatEveryCpuOfTheTargetsHas) {
  for (const char* m : {"vpdpbusd", "vdpbf16ps", "vcvtneps2bf16", "vcvtph2ps", "vcvtps2ph", "vpshufb", "vpshufhw",
                        "vmovshdup", "vphaddw", "vpmaddubsw", "vpmovsxbw", "vpermt2ps", "vshufps", "vfmadd231ps",
                        "vpbroadcastw", "push", "vpshldw", "vpunpckhwd"})
    EXPECT_EQ(foreignExtension(m), nullptr) << m;
}

TEST(ForeignInstructions, FindsTheFirstOneAndItsFunction) {
  const char* text =
      "kernels.so:\tfile format elf64-x86-64\n\n"
      "Disassembly of section .text:\n\n"
      "0000000000001000 <k0_linear_entry>:\n"
      "    1000:      \tvpdpbusd\t%zmm1, %zmm2, %zmm3\n"
      "    1006:      \tvcvtph2ps\t%xmm0, %ymm1\n\n"
      "0000000000001040 <k3_gather_entry>:\n"
      "    1040:      \tvpmovsxbd\t%xmm2, %xmm2\n"
      "    1045:      \tvmovw\t(%r9,%rsi), %xmm2\n"
      "    104b:      \t{vex} vpdpbusd\t%ymm1, %ymm2, %ymm3\n";
  std::optional<ForeignInstruction> f = findForeignInstruction(text);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->function, "k3_gather_entry");
  EXPECT_EQ(f->instruction, "vmovw\t(%r9,%rsi), %xmm2");
  EXPECT_EQ(f->extension, "AVX512-FP16");
}

TEST(ForeignInstructions, FindsNoneInCodeOfTheTargetsOwnExtensions) {
  EXPECT_FALSE(
      findForeignInstruction("0000000000001000 <k0_linear_entry>:\n"
                             "    1000:      \tvpdpbusd\t%zmm1, %zmm2, %zmm3\n"
                             "    1006:      \tvdpbf16ps\t%zmm1, %zmm2, %zmm3\n"));
}

}  // namespace
}  // namespace kime::cpu
