// kime runtime: the batch a model runs on, its checks, and what it produces.
//
// The contract every kime runtime keeps (docs/batch.md):
//   - A `Batch` is flattened: sequence `s` is tokens `cu[s]..cu[s+1]` of `ids` and markers
//     `mcu[s]..mcu[s+1]` of `markers`; each marker is a position within its own sequence;
//     `qtype[s]` is the question type of sequence `s`.
//   - `checkBatch` finds the first inconsistency, with fixed wording, so that a backend can
//     index without checks afterwards.
//   - `Error` is one of four kinds; `Error::text()` is the text to show a person.
//
// Nothing here allocates unless it reports an error.
#ifndef KIME_BATCH_H
#define KIME_BATCH_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kime {

// A read-only view of `size` elements at `data` (C++17 has no std::span).
template <typename T>
struct Span {
  const T* data = nullptr;
  size_t size = 0;

  Span() = default;
  Span(const T* d, size_t n) : data(d), size(n) {}
  Span(const std::vector<T>& v) : data(v.data()), size(v.size()) {}  // NOLINT: implicit on purpose
  const T& operator[](size_t i) const { return data[i]; }
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
  bool empty() const { return size == 0; }
};

// One packed batch, borrowed from the caller.
struct Batch {
  Span<uint32_t> ids;      // token ids of every sequence, end to end
  Span<uint32_t> cu;       // sequence starts in `ids`, with the total at the end
  Span<uint32_t> markers;  // marker positions of every sequence, end to end
  Span<uint32_t> mcu;      // sequence starts in `markers`, with the total at the end
  Span<uint8_t> qtype;     // the question type of each sequence
  // Optional: a type per token (sentence pairs: 0 for the first text, 1 for the second), read by a
  // Graph's token_types; empty: each token has its sequence's qtype.
  Span<uint8_t> ttype = {};

  size_t seqs() const { return cu.size == 0 ? 0 : cu.size - 1; }
  size_t tokens() const { return ids.size; }
  size_t markerCount() const { return markers.size; }
};

// A shape bucket: upper bounds on tokens, sequences and markers.
struct Bucket {
  uint32_t tokens = 0, seqs = 0, markers = 0;

  bool holds(size_t t, size_t s, size_t m) const { return t <= tokens && s <= seqs && m <= markers; }
  bool operator==(const Bucket& o) const { return tokens == o.tokens && seqs == o.seqs && markers == o.markers; }
};

// "{tokens 128, seqs 8, markers 32}": how messages and listings name a bucket.
std::string describe(const Bucket& b);

// The four kinds of failure: an inconsistent batch, a batch no bucket of the stage holds, something
// the model, artifact or machine cannot do, a device or kernel failure.
enum class ErrorKind {
  Batch,        // the batch is inconsistent
  NoBucket,     // no bucket of the stage holds the batch
  Unsupported,  // the graph uses something the backend lacks, or weights of the wrong shape
  Device,       // the device or its driver failed
};

struct Error {
  ErrorKind kind;
  // Batch, Unsupported, Device: the message after the kind's prefix.
  // NoBucket: the stage name.
  std::string detail;
  // NoBucket only: the batch's counts, and the stage's largest bucket (all zero when unknown).
  size_t tokens = 0, seqs = 0, markers = 0;
  Bucket largest;

  static Error batch(std::string m) { return {ErrorKind::Batch, std::move(m), 0, 0, 0, {}}; }
  static Error unsupported(std::string m) { return {ErrorKind::Unsupported, std::move(m), 0, 0, 0, {}}; }
  static Error device(std::string m) { return {ErrorKind::Device, std::move(m), 0, 0, 0, {}}; }
  static Error noBucket(std::string stage, size_t t, size_t s, size_t m, Bucket largest = {}) {
    return {ErrorKind::NoBucket, std::move(stage), t, s, m, largest};
  }

  // The text to show, e.g. "bad batch: cu and mcu must start at 0". NoBucket adds the
  // stage's largest bucket when it is known.
  std::string text() const;
};

// Checks that the pieces of `b` agree with each other and with the model's `vocab` and `types`,
// and that no sequence is longer than `maxLen` tokens (the model's learned positions; 0: no
// limit). Returns the first problem as an `ErrorKind::Batch` error, or nothing when the batch
// is sound.
[[nodiscard]] std::optional<Error> checkBatch(const Batch& b, size_t vocab, size_t types, size_t maxLen = 0);

// Where an output's rows are: one per marker of the batch, or one per sequence (kime.h's
// kime_output_kind, same numbers).
enum class OutputKind : uint8_t { PerMarker = 0, PerSequence = 1 };

// "per-marker" or "per-sequence".
const char* outputKindName(OutputKind kind);

// One of a model's outputs: its name (the Graph's), whose rows it has, and the f32 values in a row.
struct OutputDesc {
  std::string name;
  OutputKind kind = OutputKind::PerMarker;
  size_t width = 1;

  bool operator==(const OutputDesc& o) const { return name == o.name && kind == o.kind && width == o.width; }
  // The batch's rows of it: its markers or its sequences.
  size_t rows(size_t seqs, size_t markers) const { return kind == OutputKind::PerMarker ? markers : seqs; }
};

// Whether `outputs` are the seed's contract: "logits" (one value per marker), then "act" (two per
// sequence). kime_executor_run's and the Python (logits, act) pair's models.
bool isSeedContract(const std::vector<OutputDesc>& outputs);

// The index of output `name`, or -1.
int outputIndex(const std::vector<OutputDesc>& outputs, const std::string& name);

// What a batch produces: each of the model's outputs (Model::outputs(), in that order) as its rows
// (the batch's markers or sequences, in batch order) times its width values, row-major. Reused
// across batches, so once it has grown it does not allocate. T is float for the runtime, double
// for the compiler's f64 reference.
template <typename T>
struct OutputValues {
  std::vector<std::vector<T>> values;

  size_t size() const { return values.size(); }
  std::vector<T>& operator[](size_t i) { return values[i]; }
  const std::vector<T>& operator[](size_t i) const { return values[i]; }
};
using Outputs = OutputValues<float>;

// "logits[3]" or "act[2][1]": how messages name value `index` of output `o` (by row, and by column
// where it is wider than one).
std::string describeOutputValue(const OutputDesc& o, size_t index);

// Calls f(got, want, output, index) for each value of each output; false (and no call) where the
// two do not hold the same outputs of the same sizes.
template <typename A, typename B, typename F>
bool forEachOutputValue(const OutputValues<A>& got, const OutputValues<B>& want, F&& f) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i].size() != want[i].size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t k = 0; k < want[i].size(); ++k) f(double(got[i][k]), double(want[i][k]), i, k);
  return true;
}

}  // namespace kime

#endif  // KIME_BATCH_H
