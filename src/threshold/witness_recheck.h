// The threshold's witness: set from a string or statistics, re-evaluated as a string, and
// rechecked in 50 digits (eval/precise.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim::threshold {

/// The witness in 50 digits: confirmed when its precise gap exceeds ε.
void RecheckWitness(const Transformer& f, const Transformer& g, double epsilon,
                    ThresholdResult& result);

/// Sets the first disagreement and its witness (`found_gap`: the gap the search saw there),
/// re-evaluates it as a string and rechecks it.
void SetWitness(const Transformer& f, const Transformer& g, std::uint64_t length,
                std::vector<Run> runs, double found_gap, double epsilon, ThresholdResult& result);

}  // namespace ltsim::threshold
