// The gathers of a model whose index comes from the batch and may pass its table: what the
// compiler finds in a Graph (gatherLimits), the manifest carries, and the runtime checks each
// batch against before a plan runs.
#ifndef KIME_GATHER_LIMITS_H
#define KIME_GATHER_LIMITS_H

#include <optional>
#include <string>
#include <vector>

#include "kime/batch.h"
#include "kime/plan.h"

namespace kime {

// A gather of a model whose index comes from the batch (token ids, types, positions, cu, mcu
// or markers: plan.h's KIME_INPUT_IDS, _QTYPE, _TOKPOS, _CU, _MCU, _MARKERS) into a table of
// `rows` rows, where checkBatch (batch.h) does not already keep the index inside it. `where`
// names the node, `table` the table, as the reference evaluator's message does.
struct GatherLimit {
  kime_plan_input index = KIME_INPUT_IDS;
  size_t rows = 0;
  std::string where, table;
};

// The first gather of `limits` (in their order, the graph's) that some index value of `b` passes,
// as an `ErrorKind::Batch` error: "node 4 (gather_rows "x"): row 9 is past the 8 rows of "t"".
// `b` must have passed checkBatch.
[[nodiscard]] std::optional<Error> checkGatherLimits(const Batch& b, const std::vector<GatherLimit>& limits);

// The first token of `b` whose id is the model's padding id `id` (a Graph's padding_id; -1: none),
// as an `ErrorKind::Batch` error naming its sequence and position. `b` must have passed checkBatch.
[[nodiscard]] std::optional<Error> checkPaddingId(const Batch& b, int64_t id);

}  // namespace kime

#endif  // KIME_GATHER_LIMITS_H
