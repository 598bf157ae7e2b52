// A build without the CUDA Toolkit: CUDA C++ is still written (--emit=cuda), PTX is not.
#include "CudaKernels.h"
#include "support/Diagnostic.h"

namespace kime::cuda {

bool canMakePtx() { return false; }

std::string compileToPtx(const std::string& source, const std::string& arch) {
  checkArch(arch);  // throws: this build has no NVRTC
  return {};
}

std::string ptxToolchain() { return {}; }

}  // namespace kime::cuda
