#include "kime/tooling/Invariance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace kime::tooling {

BatchBuf packSequences(const std::vector<Sequence>& seqs) {
  BatchBuf b;
  for (const Sequence& s : seqs) b.push(s.ids.data(), s.ids.size(), s.markers.data(), s.markers.size(), s.qtype);
  return b;
}

namespace {

std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// One sequence's outputs, as bytes: per output, the sequence's rows of it.
struct SeqOutputs {
  std::vector<std::vector<float>> values;
  bool operator==(const SeqOutputs& o) const {
    if (values.size() != o.values.size()) return false;
    for (size_t i = 0; i < values.size(); ++i)  // memcmp is not given an empty vector's null data()
      if (values[i].size() != o.values[i].size() ||
          (!values[i].empty() && std::memcmp(values[i].data(), o.values[i].data(), values[i].size() * 4) != 0))
        return false;
    return true;
  }
};

class Checker {
 public:
  Checker(const std::vector<InvarianceTarget>& targets, const InvarianceOptions& o)
      : targets_(targets), o_(o), rng_(o.seed) {}

  InvarianceReport run() {
    for (size_t t = 0; t < targets_.size() && report_.failure.empty(); ++t)
      for (size_t b = 0; b < targets_[t].buckets.size() && report_.failure.empty(); ++b)
        for (size_t i = 0; i < o_.trials && report_.failure.empty(); ++i) checkOne(targets_[t], b);
    return report_;
  }

 private:
  size_t below(size_t n) { return n ? size_t(rng_() % n) : 0; }

  // `len` tokens (at most `markers` markers, each at a random position of it), a random type.
  Sequence randomSequence(size_t len, size_t markers) {
    Sequence s;
    for (size_t i = 0; i < len; ++i) {
      const size_t id = below(o_.vocab);
      s.ids.push_back(uint32_t(int64_t(id) == o_.paddingId && o_.vocab > 1 ? (id + 1) % o_.vocab : id));
    }
    for (size_t i = 0; i < (len ? below(markers + 1) : 0); ++i) s.markers.push_back(uint32_t(below(len)));
    s.qtype = uint8_t(below(o_.types));
    return s;
  }
  size_t capLen(size_t n) const { return o_.maxLen ? std::min(n, o_.maxLen) : n; }

  void checkOne(const InvarianceTarget& t, size_t bucketIndex) {
    const Bucket& bk = t.buckets[bucketIndex];
    // Lengths 0 to 96 mostly (attention's tiles and blocks), sometimes up to the bucket's bound.
    const size_t longest = capLen(bk.tokens);
    const size_t len = below(4) == 0 ? below(longest + 1) : below(std::min<size_t>(longest, 96) + 1);
    const Sequence s = randomSequence(len, std::min<size_t>(bk.markers, 6));
    ++report_.sequences;
    // Its first run alone: on the first target where a bucket of it holds the sequence.
    SeqOutputs alone, got;
    const bool first = fits(targets_.front(), s);
    if (!runAlone(first ? targets_.front() : t, s, alone)) return;
    if (first && &t != &targets_.front() && runAlone(t, s, got)) compare(alone, got, t.name + ", alone", s);
    std::vector<Sequence> batch;
    size_t at = 0;
    if (!surround(t, bucketIndex, s, batch, at)) return;
    Bucket used;
    if (!run(t, batch, at, got, &used)) return;
    if (!(used == bk))
      return fail(t.name + ": neighbours meant for bucket " + std::to_string(bk.tokens) + " ran in " +
                  std::to_string(used.tokens));
    compare(alone, got,
            t.name + ", bucket " + std::to_string(bk.tokens) + ", sequence " + std::to_string(at) + " of " +
                std::to_string(batch.size()),
            s);
  }

  static bool fits(const InvarianceTarget& t, const Sequence& s) {
    return t.buckets.back().holds(s.ids.size(), 1, s.markers.size());
  }
  bool runAlone(const InvarianceTarget& t, const Sequence& s, SeqOutputs& out) { return run(t, {s}, 0, out, nullptr); }

  bool run(const InvarianceTarget& t, const std::vector<Sequence>& batch, size_t at, SeqOutputs& out, Bucket* used) {
    const BatchBuf packed = packSequences(batch);
    const Batch b = packed.batch();
    Outputs o;
    if (auto err = t.exec->run(b, o, used)) {
      // A batch the model refuses (a gather of a table with fewer rows than its vocabulary, say)
      // checks nothing: counted, not a failure.
      if (err->kind == ErrorKind::Batch) return ++report_.refused, false;
      return fail(t.name + ": " + err->text()), false;
    }
    out.values.resize(o.size());
    for (size_t i = 0; i < o.size() && i < o_.outputs.size(); ++i) {
      const size_t w = o_.outputs[i].width;
      const bool perMarker = o_.outputs[i].kind == OutputKind::PerMarker;
      const size_t from = (perMarker ? b.mcu[at] : at) * w, to = (perMarker ? b.mcu[at + 1] : at + 1) * w;
      out.values[i].assign(o[i].begin() + long(from), o[i].begin() + long(to));
    }
    return true;
  }

  bool surround(const InvarianceTarget& t, size_t bucketIndex, const Sequence& s, std::vector<Sequence>& batch,
                size_t& at);

  void compare(const SeqOutputs& want, const SeqOutputs& got, const std::string& where, const Sequence& s) {
    ++report_.runs;
    if (want == got) return;
    ++report_.differing;
    float worst = 0;
    for (size_t i = 0; i < want.values.size() && i < got.values.size(); ++i)
      for (size_t k = 0; k < want.values[i].size() && k < got.values[i].size(); ++k)
        worst = std::max(worst, std::abs(want.values[i][k] - got.values[i][k]));
    if (report_.failure.empty())
      report_.failure = "a sequence of " + std::to_string(s.ids.size()) + " tokens (" + where +
                        ") differs from its run alone by up to " + shortNumber(worst);
  }
  void fail(const std::string& what) {
    if (report_.failure.empty()) report_.failure = what;
  }

  const std::vector<InvarianceTarget>& targets_;
  InvarianceOptions o_;
  std::mt19937_64 rng_;
  InvarianceReport report_;
};

// Neighbours around `s` that no smaller bucket of the stage holds but bucket `bucketIndex` does:
// more tokens than the smaller buckets allow where it can, else more sequences or markers.
bool Checker::surround(const InvarianceTarget& t, size_t bucketIndex, const Sequence& s, std::vector<Sequence>& batch,
                       size_t& at) {
  const Bucket& bk = t.buckets[bucketIndex];
  Bucket before{};
  for (size_t i = 0; i < bucketIndex; ++i) {
    before.tokens = std::max(before.tokens, t.buckets[i].tokens);
    before.seqs = std::max(before.seqs, t.buckets[i].seqs);
    before.markers = std::max(before.markers, t.buckets[i].markers);
  }
  const size_t slots = bk.seqs - 1;
  const size_t most = std::min<size_t>(bk.tokens, s.ids.size() + slots * capLen(bk.tokens));
  size_t lo = s.ids.size();
  if (bucketIndex && before.tokens + 1 <= most) lo = std::max<size_t>(lo, before.tokens + 1);
  const size_t tokens = lo + below(most - lo + 1);
  // Enough neighbours for the tokens; past the smaller buckets' sequences where tokens do not
  // tell them apart.
  size_t rest = tokens - s.ids.size(), n = slots ? 1 + below(slots) : 0;
  while (n < slots && (rest > n * capLen(bk.tokens) || (bucketIndex && tokens <= before.tokens && n < before.seqs)))
    ++n;
  if (rest && !n) return false;
  size_t markers = bk.markers - s.markers.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t left = n - i - 1;
    size_t len = i + 1 == n ? rest : std::min(capLen(bk.tokens), below(rest + 1));
    if (rest - len > left * capLen(bk.tokens)) len = rest - left * capLen(bk.tokens);
    rest -= len;
    batch.push_back(randomSequence(len, std::min<size_t>(markers, 4)));
    markers -= batch.back().markers.size();
  }
  at = below(n + 1);
  batch.insert(batch.begin() + ptrdiff_t(at), s);
  return true;
}

}  // namespace

InvarianceReport checkBatchInvariance(const std::vector<InvarianceTarget>& targets, const InvarianceOptions& o) {
  if (targets.empty()) return {};
  return Checker(targets, o).run();
}

}  // namespace kime::tooling
