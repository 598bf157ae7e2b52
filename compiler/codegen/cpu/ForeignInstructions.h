// Instructions a target's CPUs may lack, found in the target's compiled kernels. Halide 14 has
// VNNI and AVX512-BF16 only under its Sapphire Rapids feature, which also makes LLVM compile for
// a Sapphire Rapids: free to use its AVX512-FP16, AVX-VNNI (VEX) and AMX, which other CPUs that
// run x86-64-avx512vnni and x86-64-avx512bf16 lack (AMD Zen 4 faults on vmovw). Codegen gives
// that feature only to the kernels that need it and checks what they became.
#ifndef KIME_CODEGEN_CPU_FOREIGNINSTRUCTIONS_H
#define KIME_CODEGEN_CPU_FOREIGNINSTRUCTIONS_H

#include <optional>
#include <string>
#include <string_view>

namespace kime::cpu {

struct ForeignInstruction {
  std::string function;     // the symbol it is in
  std::string instruction;  // its line, as disassembled
  std::string extension;    // e.g. "AVX512-FP16"
};

// The extension of an x86 mnemonic (AT&T, as llvm-objdump prints it, "{vex} " included) among
// AVX512-FP16, AVX-VNNI and AMX; nullptr for any other.
const char* foreignExtension(std::string_view mnemonic);

// The first instruction of those extensions in `llvm-objdump -d --no-show-raw-insn` output.
std::optional<ForeignInstruction> findForeignInstruction(std::string_view disassembly);

}  // namespace kime::cpu

#endif  // KIME_CODEGEN_CPU_FOREIGNINSTRUCTIONS_H
