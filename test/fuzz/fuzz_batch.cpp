// Batches: the batch JSON reader, then the batch check (docs/batch.md) and a run through the C API on a
// real compiled model (KIME_FUZZ_MODEL names its artifact; scripts/fuzz.sh compiles one) with
// whatever arrays and counts the input makes: ids past the vocabulary, cu not rising, markers
// out of their sequence, mcu and qtype lengths that disagree, per-token types of any length and
// value. An input that is not JSON is read as the five arrays directly: its first five bytes are
// their lengths, the rest their values, and what is left a type per token.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kime/batch.h"
#include "kime/kime.h"
#include "kime/tooling/BatchFile.h"

namespace {

kime_executor* executor() {
  static kime_executor* e = [] {
    kime_executor* made = nullptr;
    const char* path = std::getenv("KIME_FUZZ_MODEL");
    kime_model* m = nullptr;
    kime_error err;
    if (!path || kime_model_open(path, &m, &err) != KIME_OK) return made;
    kime_executor_options o;
    kime_executor_options_init(&o);
    o.threads = 1;
    if (kime_executor_create(m, &o, &made, &err) != KIME_OK) made = nullptr;
    kime_model_release(m);
    return made;
  }();
  return e;
}

// The five arrays straight from the bytes.
kime::tooling::OwnedBatch rawBatch(const uint8_t* data, size_t size) {
  kime::tooling::OwnedBatch b;
  if (size < 5) return b;
  size_t at = 5;
  auto take = [&](std::vector<uint32_t>& v, size_t n) {
    for (size_t i = 0; i < n && at + 2 <= size; ++i, at += 2)
      v.push_back(uint32_t(data[at]) | uint32_t(data[at + 1]) << 8);
  };
  take(b.ids, data[0]);
  take(b.cu, data[1] % 16);
  take(b.markers, data[2] % 32);
  take(b.mcu, data[3] % 16);
  for (size_t i = 0; i < size_t(data[4] % 16) && at < size; ++i) b.qtype.push_back(data[at++]);
  while (at < size && b.ttype.size() < b.ids.size()) b.ttype.push_back(data[at++]);
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kime::tooling::OwnedBatch b;
  if (size && data[0] == '{') {
    try {
      b = kime::tooling::parseBatchJson(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    } catch (const std::runtime_error&) {
      return 0;
    }
  } else {
    b = rawBatch(data, size);
  }
  (void)kime::checkBatch(b.view(), 4096, 4, 512);
  if (kime_executor* e = executor()) {
    kime_batch batch = {b.ids.data(),     b.ids.size(), b.cu.data(),  b.cu.size(),    b.markers.data(),
                        b.markers.size(), b.mcu.data(), b.mcu.size(), b.qtype.data(), b.qtype.size()};
    std::vector<float> logits(b.markers.size() + 1), act(2 * b.qtype.size() + 2);
    kime_error err;
    (void)kime_executor_run(e, &batch, logits.data(), logits.size(), act.data(), act.size(), nullptr, &err);
    if (!b.ttype.empty()) {  // the C API reads ids_len types: the batch's, cut or padded to that
      std::vector<uint8_t> types = b.ttype;
      types.resize(b.ids.size(), 1);
      float* outputs[2] = {logits.data(), act.data()};
      const size_t caps[2] = {logits.size(), act.size()};
      (void)kime_executor_run_typed(e, &batch, types.data(), outputs, caps, 2, nullptr, &err);
    }
  }
  return 0;
}
