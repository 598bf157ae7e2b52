// The bucket file: stages of buckets, their bounds and order. A bad file must end in a
// CompileError naming the file, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "buckets/Buckets.h"
#include "support/Diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)kime::parseBuckets(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const kime::CompileError&) {
  }
  return 0;
}
