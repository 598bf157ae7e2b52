// Random valid Graphs from a seed, for differential testing of the compiler against the
// reference evaluator (in the manner of NNSmith): random widths, heads, kv heads, head sizes and
// depth, pre- and post-norm blocks, parallel and gated branches, activations of sums, RoPE by
// positions or token ids, learned tables, norms and linears on token, sequence and marker rows,
// multi-layer heads, and gathers by every index the batch gives. Every Graph passes checkGraph.
#ifndef KIME_GRAPH_RANDOMGRAPH_H
#define KIME_GRAPH_RANDOMGRAPH_H

#include <cstdint>

#include "Graph.h"

namespace kime {

enum class GraphFamily {
  Any,      // any op in any position the format allows
  Encoder,  // the encoder family's shapes only (buildEncoderGraph of a random config)
};

// The Graph of `seed`; the same seed gives the same Graph. Its learned tables (positions, marker
// positions) have at least `maxTokens` rows, so that batches of buckets up to that many tokens
// stay inside them. `format` limits the ops to those of that Graph format (Any only): with 1, a
// seed gives the Graph it gave before format 2.
Graph randomGraph(uint64_t seed, GraphFamily family, int64_t maxTokens, int format = Graph::kFormat);

}  // namespace kime

#endif  // KIME_GRAPH_RANDOMGRAPH_H
