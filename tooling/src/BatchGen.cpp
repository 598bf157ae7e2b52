#include "kime/tooling/BatchGen.h"

#include <algorithm>
#include <random>

namespace kime::tooling {

namespace {

struct Gen {
  std::mt19937_64 rng;
  size_t vocab, types;
  int64_t avoid = -1;  // an id never drawn (the next one is, where vocab has one)

  size_t below(size_t n) { return n ? size_t(rng() % n) : 0; }
  uint32_t id() {
    const size_t v = below(vocab);
    return uint32_t(int64_t(v) == avoid && vocab > 1 ? (v + 1) % vocab : v);
  }
  void push(OwnedBatch& b, size_t len, size_t markers) {
    if (b.cu.empty()) b.cu.push_back(0), b.mcu.push_back(0);
    for (size_t i = 0; i < len; ++i) b.ids.push_back(id());
    for (size_t i = 0; i < (len ? markers : 0); ++i) b.markers.push_back(uint32_t(below(len)));
    b.cu.push_back(uint32_t(b.ids.size()));
    b.mcu.push_back(uint32_t(b.markers.size()));
    b.qtype.push_back(uint8_t(below(types)));
  }
};

OwnedBatch empty() { return {{}, {0}, {}, {0}, {}}; }

}  // namespace

std::vector<NamedBatch> bucketBatches(const Bucket& bk, size_t vocab, size_t types, size_t maxLen, uint64_t seed,
                                      int64_t avoidId) {
  Gen g{std::mt19937_64(seed), vocab, types, avoidId};
  const size_t cap = maxLen ? std::min<size_t>(maxLen, bk.tokens) : bk.tokens;
  std::vector<NamedBatch> out;

  // At the bounds: seqs sequences sharing the tokens (capped per sequence), all the markers.
  {
    OwnedBatch b = empty();
    size_t left = bk.tokens, marks = bk.markers;
    for (size_t s = 0; s < bk.seqs; ++s) {
      size_t len = std::min(cap, left / (bk.seqs - s) + (s < left % (bk.seqs - s) ? 1 : 0));
      size_t m = len ? std::min(marks, (marks + (bk.seqs - s) - 1) / (bk.seqs - s)) : 0;
      g.push(b, len, m);
      left -= len, marks -= m;
    }
    out.push_back({"at the bounds", std::move(b)});
  }
  // Ragged: an empty sequence, a length-1 one, one without markers, the rest random.
  {
    OwnedBatch b = empty();
    size_t seqs = std::max<size_t>(1, std::min<size_t>(bk.seqs, 6));
    size_t budget = bk.tokens, marks = bk.markers;
    for (size_t s = 0; s < seqs; ++s) {
      size_t len = s == 0 ? 0 : s == 1 ? 1 : 1 + g.below(std::min(cap, std::max<size_t>(budget / seqs, 1)));
      len = std::min(len, budget);
      size_t m = s == 2 ? 0 : std::min(marks, len ? 1 + g.below(3) : 0);
      g.push(b, len, m);
      budget -= len, marks -= m;
    }
    out.push_back({"ragged", std::move(b)});
  }
  // One long sequence (up to 1024 tokens: the reference's attention is quadratic in it).
  {
    OwnedBatch b = empty();
    size_t len = std::min<size_t>(cap, 1024);
    g.push(b, len, std::min<size_t>(bk.markers, 4));
    out.push_back({"one sequence of " + std::to_string(len) + " tokens", std::move(b)});
  }
  out.push_back({"empty batch", empty()});
  return out;
}

OwnedBatch uniformBatch(size_t seqs, size_t len, size_t markersPerSeq, size_t vocab, size_t types, uint64_t seed,
                        int64_t avoidId) {
  Gen g{std::mt19937_64(seed), vocab, types, avoidId};
  OwnedBatch b = empty();
  for (size_t s = 0; s < seqs; ++s) g.push(b, len, markersPerSeq);
  return b;
}

}  // namespace kime::tooling
