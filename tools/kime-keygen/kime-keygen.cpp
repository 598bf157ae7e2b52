// kime-keygen -o NAME: a new Ed25519 key pair for signing artifacts: NAME.key (secret: keep it on
// the build machine, readable by its owner only) and NAME.pub (give it to the runtimes that
// should trust what it signs). Never overwrites a file.
#include <iostream>

#include "artifact/Signing.h"
#include "common/ToolOptions.h"
#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

static cl::opt<std::string> stem(cl::cat(kime::tools::toolOptions()), "o", cl::Required,
                                 cl::desc("write NAME.key and NAME.pub (neither may exist)"), cl::value_desc("NAME"));

int main(int argc, char** argv) {
  kime::tools::parseToolOptions(argc, argv, "kime-keygen: a key pair for signing artifacts (Ed25519)\n");
  try {
    const kime::PublicKey key = kime::writeKeyPair(stem);
    std::cout << "wrote " << stem << ".key (secret) and " << stem << ".pub: key " << kime::keyId(key) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-keygen: error: " << e.what() << "\n";
    return 1;
  }
}
