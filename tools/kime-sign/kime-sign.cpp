// kime-sign ARTIFACT --key KEY.key [-o OUT]: signs an artifact built elsewhere (or signs it again
// with another key): the same bytes kime-compile --sign would have written.
#include <iostream>

#include "artifact/ArtifactReader.h"
#include "artifact/Signing.h"
#include "common/ToolOptions.h"
#include "kime/plan.h"
#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

static cl::opt<std::string> artifactPath(cl::cat(kime::tools::toolOptions()), cl::Positional, cl::Required,
                                         cl::desc("<artifact.kime>"));
static cl::opt<std::string> keyPath(cl::cat(kime::tools::toolOptions()), "key", cl::Required,
                                    cl::desc("the secret key to sign with (kime-keygen's)"), cl::value_desc("KEY.key"));
static cl::opt<std::string> outPath(cl::cat(kime::tools::toolOptions()), "o",
                                    cl::desc("write the signed artifact here (default: replace the artifact, "
                                             "atomically, once signed)"),
                                    cl::value_desc("OUT.kime"));

int main(int argc, char** argv) {
  kime::tools::parseToolOptions(argc, argv,
                                "kime-sign: adds (or replaces) an artifact's signature, an Ed25519 signature over "
                                "everything in it\n");
  try {
    const kime::SecretKey key = kime::readSecretKey(keyPath);
    std::vector<kime::Section> sections = kime::readArtifact(artifactPath);
    const bool resigned = kime::findSection(sections, KIME_SECTION_SIGNATURE) != nullptr;
    kime::signSections(sections, key);
    const std::string out = outPath.empty() ? std::string(artifactPath) : std::string(outPath);
    kime::writeArtifact(out, sections);
    std::cerr << "kime-sign: " << out << " signed by key " << kime::keyId(key.publicKey)
              << (resigned ? " (its former signature replaced)" : "") << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-sign: error: " << e.what() << "\n";
    return 1;
  }
}
