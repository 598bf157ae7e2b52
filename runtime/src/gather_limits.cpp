#include "kime/gather_limits.h"

namespace kime {

namespace {

// The first value of `index` in `b` that is `rows` or more, in the batch's order, or -1.
int64_t firstPast(const Batch& b, kime_plan_input index, size_t rows) {
  auto scan = [&](const auto& values) -> int64_t {
    for (auto v : values)
      if (size_t(v) >= rows) return int64_t(v);
    return -1;
  };
  switch (index) {
    case KIME_INPUT_IDS:
      return scan(b.ids);
    case KIME_INPUT_QTYPE:
      return scan(b.qtype);
    case KIME_INPUT_CU:
      return scan(b.cu);
    case KIME_INPUT_MCU:
      return scan(b.mcu);
    case KIME_INPUT_MARKERS:
      return scan(b.markers);
    case KIME_INPUT_TOKTYPE:
      if (!b.ttype.empty()) return scan(b.ttype);
      for (size_t s = 0; s < b.seqs(); ++s)  // each token its sequence's type
        if (b.cu[s + 1] > b.cu[s] && size_t(b.qtype[s]) >= rows) return int64_t(b.qtype[s]);
      return -1;
    case KIME_INPUT_TOKPOS:
      for (size_t s = 0; s < b.seqs(); ++s)
        for (uint32_t t = b.cu[s]; t < b.cu[s + 1]; ++t)
          if (t - b.cu[s] >= rows) return int64_t(t - b.cu[s]);
      return -1;
    default:
      return -1;
  }
}

}  // namespace

std::optional<Error> checkGatherLimits(const Batch& b, const std::vector<GatherLimit>& limits) {
  for (const GatherLimit& g : limits)
    if (int64_t v = firstPast(b, g.index, g.rows); v >= 0)
      return Error::batch(g.where + ": row " + std::to_string(v) + " is past the " + std::to_string(g.rows) +
                          " rows of \"" + g.table + "\"");
  return std::nullopt;
}

std::optional<Error> checkPaddingId(const Batch& b, int64_t id) {
  if (id < 0) return std::nullopt;
  for (size_t s = 0; s < b.seqs(); ++s)
    for (uint32_t t = b.cu[s]; t < b.cu[s + 1]; ++t)
      if (b.ids[t] == uint64_t(id))
        return Error::batch("sequence " + std::to_string(s) + ", token " + std::to_string(t - b.cu[s]) + ": id " +
                            std::to_string(id) +
                            " is the model's padding id, which its exported positions do not count; a batch may "
                            "not hold it");
  return std::nullopt;
}

}  // namespace kime
