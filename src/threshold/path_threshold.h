// The exact first disagreement of a pair with a two-layer model, over paths of first-layer
// nodes (docs/theory.md §11.5).
#pragma once

#include <cstdint>

#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim::threshold {

/// The longest N' ≤ max_length within the path search's limits (kThresholdPathMaxNodes and
/// kThresholdPathMaxBytes at `threads` threads); 0 when not even length 1 fits.
std::uint64_t PathSearchLength(const Transformer& f, const Transformer& g, std::uint64_t max_length,
                               int threads);

/// FindThreshold for pairs with a two-layer model (ThresholdMethod::kPaths): every string of
/// length ≤ min(N, PathSearchLength) is evaluated or covered by a certified bound, the
/// witness is re-evaluated as a string and rechecked in 50 digits; longer lengths get
/// options.samples_per_length random strings each (exhaustive_up_to says where the exact part
/// ends). The caller has checked the common limits.
ThresholdResult FindByPaths(const Transformer& f, const Transformer& g,
                            const ThresholdOptions& options);

}  // namespace ltsim::threshold
