// The options of a tool built on LLVM's command line library: its own options go in the tool's
// category, and --help lists them only (LLVM registers hundreds of its own, which it hides).
#ifndef KIME_TOOLS_COMMON_TOOLOPTIONS_H
#define KIME_TOOLS_COMMON_TOOLOPTIONS_H

#include "llvm/Support/CommandLine.h"

namespace kime::tools {

// The category every option of the tool names with cl::cat(toolOptions()).
inline llvm::cl::OptionCategory& toolOptions() {
  static llvm::cl::OptionCategory category("Options");
  return category;
}

// Parses argv with everything but the tool's own options (and --help, --version) hidden.
inline void parseToolOptions(int argc, char** argv, const char* overview) {
  llvm::cl::HideUnrelatedOptions(toolOptions());
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);
}

}  // namespace kime::tools

#endif  // KIME_TOOLS_COMMON_TOOLOPTIONS_H
