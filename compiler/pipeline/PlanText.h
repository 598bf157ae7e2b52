// A bucket's plan as text: what kime-compile --emit=plan prints.
#ifndef KIME_PIPELINE_PLANTEXT_H
#define KIME_PIPELINE_PLANTEXT_H

#include <string>

#include "Lowering.h"
#include "WeightPacker.h"

namespace kime {

// A line for the bucket, then one per kernel call: its kernel, node, arguments and output (an
// input in:NAME[ROWS], a weight w:NAME[SHAPE] with its layout's mark, an arena range
// @OFFSET[ROWS, COLS]), then where the outputs lie.
std::string planText(const BucketPlan& p, const KernelRegistry& k, const WeightPacker& w,
                     const std::vector<GraphOutput>& outputs);

}  // namespace kime

#endif  // KIME_PIPELINE_PLANTEXT_H
