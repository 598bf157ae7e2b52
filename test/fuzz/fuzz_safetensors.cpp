// safetensors: the header (JSON), offsets, dtypes, sizes, duplicate or overlapping tensors, then
// every floating-point tensor read as floats. A bad checkpoint must end in a CompileError, never a crash.
#include <cstddef>
#include <cstdint>

#include "checkpoint/Safetensors.h"
#include "support/Diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto ck = kime::Checkpoint::fromBytes(data, size, "fuzz.safetensors");
    double sum = 0;
    for (const kime::TensorView& t : ck->tensors())
      if (t.dtype != kime::shapes::DType::U32 && t.dtype != kime::shapes::DType::U8)
        for (float v : t.toFloat()) sum += v;
    (void)sum;
  } catch (const kime::CompileError&) {
  }
  return 0;
}
