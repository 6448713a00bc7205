// The three searches FindThreshold chooses between (docs/theory.md §7.2, §11), each called
// after its limits have been checked.
#pragma once

#include <cstdint>

#include "ltsim/model/joint_view.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"
#include "threshold/length_search.h"

namespace ltsim::threshold {

/// Every statistic of one length in the view, evaluated (the full enumeration's odometer).
LengthOutcome SearchStatistics(const Transformer& f, const Transformer& g, const JointView& view,
                               std::uint64_t length, double epsilon, std::uint64_t& evaluations);

/// One-layer pairs, every statistic of every length (prune = false).
ThresholdResult FindByStatistics(const Transformer& f, const Transformer& g,
                                 const ThresholdOptions& options);

/// One-layer pairs, cells of the count lattice pruned by their certified bound (prune = true).
ThresholdResult FindByCells(const Transformer& f, const Transformer& g,
                            const ThresholdOptions& options);

/// Pairs with a two-layer model: every string up to T_ex, random strings beyond.
ThresholdResult FindByStrings(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options);

}  // namespace ltsim::threshold
