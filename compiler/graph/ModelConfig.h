// docs/model.md's encoder family: its config, the Graph it stands for, and random weights for it.
#ifndef KIME_GRAPH_MODELCONFIG_H
#define KIME_GRAPH_MODELCONFIG_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Graph.h"

namespace kime {

struct ModelConfig {
  int64_t vocab = 0, types = 0, hidden = 0, layers = 0, heads = 0, kvHeads = 0, ffn = 0;
  std::string norm = "rms";  // rms | layer
  double normEps = 1e-6;
  std::string act = "swiglu";  // swiglu | gelu
  std::string pos = "rope";    // rope | learned
  double ropeTheta = 10000.0;
  int64_t maxPos = 2048;
  bool bias = false;

  int64_t headDim() const { return hidden / heads; }
};

// Parses and checks a config (JSON text); `source` names it in messages.
ModelConfig parseModelConfig(const std::string& text, const std::string& source);

// The Graph of the family for `cfg`, with its weights declared as `dtype`.
Graph buildEncoderGraph(const ModelConfig& cfg, shapes::DType dtype, const std::string& name);

// Deterministic random weights for a graph's declarations, scaled as in docs/model.md's reference
// generator: tables N(0,1), matrices N(0,1/fan_in), norm gains 1+N(0,0.1), biases N(0,0.1).
// Values are rounded to each weight's dtype; the result is f32 by name.
std::map<std::string, std::vector<float>> randomWeights(const Graph& g, uint64_t seed);

}  // namespace kime

#endif  // KIME_GRAPH_MODELCONFIG_H
