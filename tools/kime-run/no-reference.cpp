// A runtime-only build of kime-run has no reference evaluator.
#include <iostream>

#include "common/Args.h"

namespace kime::tools {

int runReference(const Args&) {
  std::cerr << "kime-run: --reference needs the compiler side of kime; this is a runtime-only build\n";
  return 2;
}

}  // namespace kime::tools
