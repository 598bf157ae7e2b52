// The per-token and per-row index arrays both backends stage for a batch (model_impl.h).
#include "model_impl.h"

namespace kime {

size_t stagedRows(size_t i, const Bucket& b) {
  switch (InputId(i + size_t(KIME_INPUT_TOKSEQ))) {
    case KIME_INPUT_TOKSEQ:
    case KIME_INPUT_TOKPOS:
    case KIME_INPUT_TOKTYPE:
      return b.tokens;
    case KIME_INPUT_MARKER_ROWS:
    case KIME_INPUT_OUT_MARKER_ROWS:
      return b.markers;
    case KIME_INPUT_FIRST_ROWS:
    case KIME_INPUT_OUT_FIRST_ROWS:
      return b.seqs;
    default:
      return b.seqs + b.markers;  // the output rows
  }
}

void stageIndices(const Batch& b, int32_t* const* arrays) {
  auto a = [&](InputId id) { return arrays[stagedIndex(id)]; };
  int32_t *tokseq = a(KIME_INPUT_TOKSEQ), *tokpos = a(KIME_INPUT_TOKPOS), *markerRows = a(KIME_INPUT_MARKER_ROWS),
          *firstRows = a(KIME_INPUT_FIRST_ROWS), *outRows = a(KIME_INPUT_OUT_ROWS), *outSeq = a(KIME_INPUT_OUT_SEQ),
          *outPos = a(KIME_INPUT_OUT_POS), *outFirst = a(KIME_INPUT_OUT_FIRST_ROWS),
          *outMarkers = a(KIME_INPUT_OUT_MARKER_ROWS), *toktype = a(KIME_INPUT_TOKTYPE);
  const size_t S = b.seqs();
  for (size_t i = 0; i < S; ++i) {
    for (uint32_t t = b.cu[i]; t < b.cu[i + 1]; ++t) {
      tokseq[t] = int32_t(i);
      tokpos[t] = int32_t(t - b.cu[i]);
      toktype[t] = b.ttype.empty() ? int32_t(b.qtype[i]) : int32_t(b.ttype[t]);
    }
    const bool empty = b.cu[i + 1] == b.cu[i];
    firstRows[i] = outRows[i] = empty ? -1 : int32_t(b.cu[i]);
    outSeq[i] = int32_t(i);
    outPos[i] = 0;
    outFirst[i] = empty ? -1 : int32_t(i);
    for (uint32_t j = b.mcu[i]; j < b.mcu[i + 1]; ++j) {
      markerRows[j] = outRows[S + j] = int32_t(b.cu[i] + b.markers[j]);
      outSeq[S + j] = int32_t(i);
      outPos[S + j] = int32_t(b.markers[j]);
      outMarkers[j] = int32_t(S + j);
    }
  }
}

}  // namespace kime
