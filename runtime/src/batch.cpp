#include "kime/batch.h"

namespace kime {

std::string Error::text() const {
  switch (kind) {
    case ErrorKind::Batch:
      return "bad batch: " + detail;
    case ErrorKind::NoBucket: {
      std::string t = "no " + detail + " bucket holds " + std::to_string(tokens) + " tokens, " + std::to_string(seqs) +
                      " sequences and " + std::to_string(markers) + " markers";
      if (largest.tokens)
        t += " (its largest bucket holds " + std::to_string(largest.tokens) + " tokens, " +
             std::to_string(largest.seqs) + " sequences and " + std::to_string(largest.markers) + " markers)";
      return t;
    }
    case ErrorKind::Unsupported:
      return "unsupported: " + detail;
    case ErrorKind::Device:
      return "device: " + detail;
  }
  return detail;
}

std::string describe(const Bucket& b) {
  return "{tokens " + std::to_string(b.tokens) + ", seqs " + std::to_string(b.seqs) + ", markers " +
         std::to_string(b.markers) + "}";
}

const char* outputKindName(OutputKind kind) { return kind == OutputKind::PerMarker ? "per-marker" : "per-sequence"; }

bool isSeedContract(const std::vector<OutputDesc>& outputs) {
  return outputs.size() == 2 && outputs[0] == OutputDesc{"logits", OutputKind::PerMarker, 1} &&
         outputs[1] == OutputDesc{"act", OutputKind::PerSequence, 2};
}

int outputIndex(const std::vector<OutputDesc>& outputs, const std::string& name) {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == name) return int(i);
  return -1;
}

std::string describeOutputValue(const OutputDesc& o, size_t index) {
  if (o.width == 1) return o.name + "[" + std::to_string(index) + "]";
  return o.name + "[" + std::to_string(index / o.width) + "][" + std::to_string(index % o.width) + "]";
}

namespace {

bool endsBeforeStart(const Batch& b, size_t i) { return b.cu[i + 1] < b.cu[i] || b.mcu[i + 1] < b.mcu[i]; }

}  // namespace

std::optional<Error> checkBatch(const Batch& b, size_t vocab, size_t types, size_t maxLen) {
  auto bad = [](std::string m) { return std::optional<Error>(Error::batch(std::move(m))); };
  const size_t s = b.seqs();
  if (b.cu.empty() || b.cu[0] != 0 || b.mcu.empty() || b.mcu[0] != 0) return bad("cu and mcu must start at 0");
  if (b.mcu.size != s + 1 || b.qtype.size != s)
    return bad(std::to_string(s) + " sequences but " + std::to_string(b.mcu.size) + " mcu and " +
               std::to_string(b.qtype.size) + " qtype");
  if (b.cu[s] != b.ids.size || b.mcu[s] != b.markers.size) return bad("cu and mcu must end at the totals");
  for (size_t i = 0; i < s; ++i) {
    if (endsBeforeStart(b, i)) return bad("sequence " + std::to_string(i) + " ends before it starts");
    if (b.qtype[i] >= types)
      return bad("sequence " + std::to_string(i) + " has type " + std::to_string(b.qtype[i]) + " of " +
                 std::to_string(types));
    // Both lists end at their totals, so a start past the total means that some later sequence
    // steps back. The seed would index out of range here; report that later sequence instead.
    if (b.mcu[i + 1] > b.markers.size) {
      size_t j = i + 1;
      while (j < s && !endsBeforeStart(b, j)) ++j;
      return bad("sequence " + std::to_string(j) + " ends before it starts");
    }
    const uint32_t len = b.cu[i + 1] - b.cu[i];
    if (maxLen && len > maxLen)
      return bad("sequence " + std::to_string(i) + " has " + std::to_string(len) + " tokens, past the model's " +
                 std::to_string(maxLen) + " positions");
    for (size_t k = b.mcu[i]; k < b.mcu[i + 1]; ++k)
      if (b.markers[k] >= len)
        return bad("marker " + std::to_string(b.markers[k]) + " is past sequence " + std::to_string(i) + " of " +
                   std::to_string(len) + " tokens");
  }
  for (uint32_t id : b.ids)
    if (id >= vocab)
      return bad("token id " + std::to_string(id) + " is past the vocabulary of " + std::to_string(vocab));
  if (!b.ttype.empty() && b.ttype.size != b.ids.size)
    return bad(std::to_string(b.ttype.size) + " token types for " + std::to_string(b.ids.size) + " tokens");
  for (size_t t = 0; t < b.ttype.size; ++t)
    if (b.ttype[t] >= types)
      return bad("token " + std::to_string(t) + " has type " + std::to_string(b.ttype[t]) + " of " +
                 std::to_string(types));
  return std::nullopt;
}

}  // namespace kime
