// The threshold's limits, every one checked before any evaluation (InputError or OptionError
// naming the limit; the limits themselves are in ltsim/threshold/threshold.h).
#pragma once

#include <cstdint>
#include <utility>

#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim::threshold {

/// True when either model has two layers (the string search).
bool TwoLayerPair(const Transformer& f, const Transformer& g);

/// ε, N, depth, outputs and alphabets: every pair.
void CheckCommon(const Transformer& f, const Transformer& g, const ThresholdOptions& options);

/// Δ* = lcm of the periods and τ* = max of the localities, within the exact searches' limits
/// on the types D* = S·Δ* and on τ* (both searches, pruned or not).
std::pair<long long, int> CheckTypeLimits(const Transformer& f, const Transformer& g);

/// The full enumeration: Σ_{n ≤ T ≤ N} #statistics(T) ≤ kThresholdMaxStatistics.
void CheckStatisticsLimits(const Transformer& f, const Transformer& g, std::uint64_t min_length,
                           std::uint64_t max_length);

/// T_ex: the largest T ≤ min(N, kThresholdExhaustiveMaxLength) with Σ_{t ≤ T} S^t within the
/// exhaustive budget.
std::uint64_t ExhaustiveLength(int alphabet, std::uint64_t max_length);

/// The string search: samples, the reference evaluator's length, the random tokens read.
void CheckStringLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o);

/// The pruned search: contexts Δ*·S^(τ*+1) and the leaf size.
void CheckCellLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o);

}  // namespace ltsim::threshold
