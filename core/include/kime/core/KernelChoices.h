// The choices a kernel makes, each spelled once: the command line (--cpu-precision), kime-fuse's
// options, the IR's attributes (KimeAttrs.td wraps these enums; it does not redefine them), the
// KernelSpec that codegen reads, the manifest's source section and the reference evaluator all
// name them through this header.
#ifndef KIME_CORE_KERNELCHOICES_H
#define KIME_CORE_KERNELCHOICES_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kime {

// A linear's CPU arithmetic, and with int8 the storage of a token table (a weight gathered by the
// token ids): f32; bf16 (each pair of inputs rounded to bf16 for one dot-product instruction, the
// sums f32); int8 (weights per output channel, rows quantized at run time, int32 sums:
// compiler/quant/Int8.h); int8pairs (int8 whose linear weights are bounded in pairs, so that AVX2
// sums u8 x s8 pairs in i16 without saturating: quant/Int8.h). Which linears may take which:
// LinearArithmetic.h.
enum class Arithmetic : uint8_t { f32, bf16, int8, int8pairs };

// Whether an arithmetic's linears are int8 (int8, int8pairs).
constexpr bool isInt8(Arithmetic a) { return a == Arithmetic::int8 || a == Arithmetic::int8pairs; }

// The norm in front of a norm or head kernel's rows; none: the kernel has none.
enum class NormKind : uint8_t { none, rms, layer };

// A linear's activation after its matmul; none: the kernel has none.
enum class Activation : uint8_t { none, gelu, swiglu };

// The rows a head reads: each marked token, or each sequence's first token; none: not a head.
enum class HeadRows : uint8_t { none, markers, first };

// The rows a gather kernel takes: a table's rows by an index (gather_rows), each token's sequence
// row (expand_seqs), each sequence's first token (first_rows), each marked token
// (gather_markers); none: not a gather.
enum class GatherKind : uint8_t { none, rows, seqs, first, markers };

// Each enum's names, by value, and what the enum is called in messages.
template <class E>
struct ChoiceNames;
template <>
struct ChoiceNames<Arithmetic> {
  static constexpr const char* what = "arithmetic";
  static constexpr const char* names[] = {"f32", "bf16", "int8", "int8pairs"};
};
template <>
struct ChoiceNames<NormKind> {
  static constexpr const char* what = "norm";
  static constexpr const char* names[] = {"none", "rms", "layer"};
};
template <>
struct ChoiceNames<Activation> {
  static constexpr const char* what = "activation";
  static constexpr const char* names[] = {"none", "gelu", "swiglu"};
};
template <>
struct ChoiceNames<HeadRows> {
  static constexpr const char* what = "head rows";
  static constexpr const char* names[] = {"none", "markers", "first"};
};
template <>
struct ChoiceNames<GatherKind> {
  static constexpr const char* what = "gather";
  static constexpr const char* names[] = {"none", "rows", "seqs", "first", "markers"};
};

template <class E>
constexpr size_t choiceCount() {
  return sizeof(ChoiceNames<E>::names) / sizeof(ChoiceNames<E>::names[0]);
}

// Whether the enum's first value is `none` (the kernel makes no such choice): not a value an
// attribute holds.
template <class E>
constexpr bool choiceHasNone() {
  return std::string_view(ChoiceNames<E>::names[0]) == "none";
}

template <class E>
constexpr const char* nameOf(E e) {
  return ChoiceNames<E>::names[size_t(e)];
}

// The value named `name`, or nothing.
template <class E>
std::optional<E> parseChoice(std::string_view name) {
  for (size_t i = 0; i < choiceCount<E>(); ++i)
    if (name == ChoiceNames<E>::names[i]) return E(i);
  return std::nullopt;
}

// The names from `first` on, for messages: "f32, bf16 or int8".
template <class E>
std::string choiceList(E first = E(0)) {
  std::string s;
  for (size_t i = size_t(first); i < choiceCount<E>(); ++i)
    s += std::string(i == size_t(first) ? "" : i + 1 == choiceCount<E>() ? " or " : ", ") + ChoiceNames<E>::names[i];
  return s;
}

}  // namespace kime

#endif  // KIME_CORE_KERNELCHOICES_H
