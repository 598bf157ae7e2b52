#include "ForeignInstructions.h"

#include <regex>
#include <sstream>

namespace kime::cpu {

const char* foreignExtension(std::string_view mnemonic) {
  // AVX-VNNI: the VEX forms of the VNNI dot products (the EVEX ones are AVX512-VNNI).
  if (mnemonic.substr(0, 6) == "{vex} ") return "AVX-VNNI";
  const std::string m(mnemonic);
  if (m.rfind("tile", 0) == 0 || m.rfind("tdp", 0) == 0 || m == "ldtilecfg" || m == "sttilecfg") return "AMX";
  // AVX512-FP16: vmovw, and the half-precision forms (ph, sh; conversions to and from them), but
  // F16C's conversions (vcvtph2ps, vcvtps2ph), which every AVX2 CPU has.
  if (m == "vcvtph2ps" || m == "vcvtps2ph") return nullptr;
  static const std::regex fp16(R"(v(movw|\w*(ph|sh)[xyz]?|\w*(ph2|2ph|sh2|2sh)\w*))");
  return std::regex_match(m, fp16) ? "AVX512-FP16" : nullptr;
}

std::optional<ForeignInstruction> findForeignInstruction(std::string_view disassembly) {
  // "0000000000001000 <name>:" opens a function; "    1004:      \tvmovw\t(%r9), %xmm2" is an
  // instruction (llvm-objdump -d --no-show-raw-insn).
  static const std::regex label(R"(^[0-9a-f]+ <(.+)>:$)");
  static const std::regex insn(R"(^\s*[0-9a-f]+:\s+((\{vex\} )?[a-z0-9]+)\b.*$)");
  std::istringstream in{std::string(disassembly)};
  std::string line, function;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, label)) {
      function = m[1];
    } else if (std::regex_match(line, m, insn)) {
      if (const char* ext = foreignExtension(m[1].str())) {
        const size_t start = line.find_first_not_of(" \t", line.find(':') + 1);
        return ForeignInstruction{function, line.substr(start), ext};
      }
    }
  }
  return std::nullopt;
}

}  // namespace kime::cpu
