// Sufficient statistics of one-layer pairs: counting them with saturating arithmetic,
// realising one as a string, and the gap of two outputs (docs/theory.md §7.2).
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"

namespace ltsim::threshold {

using Uint128 = unsigned __int128;
/// Counts of statistics saturate here (CountStatistics).
inline constexpr std::uint64_t kSaturated = std::uint64_t{1} << 62;

std::uint64_t SaturatingMul(std::uint64_t a, std::uint64_t b);
std::uint64_t SaturatingAdd(std::uint64_t a, std::uint64_t b);

/// C(n + k, k), the number of ways to split n positions among k + 1 tokens; saturating.
std::uint64_t Multichoose(std::uint64_t n, int k);

/// N_r = #{1 ≤ j ≤ far : j ≡ r (mod Δ)}.
std::uint64_t ClassSize(std::uint64_t far, int period, int r);

/// A string with these statistics: each residue class's far positions take its tokens in
/// increasing order, then the suffix. Checked by recounting.
std::vector<Token> Realise(const TypeCounts& counts);

/// ‖a − b‖_∞, and +∞ when either output is not finite (weights that are finite can still
/// overflow an output): such a string disagrees beyond any ε, and NaN never hides it.
double Gap(const Vector& a, const Vector& b);

/// The summands of one attention sum of an evaluator from type counts: D + τ + 1 (the present
/// types and the suffix), the `terms` of MakeOneLayerRounding (docs/theory.md §8.7).
inline std::uint64_t RoundingTerms(const Transformer& m) {
  return static_cast<std::uint64_t>(m.types()) + static_cast<std::uint64_t>(m.locality) + 1;
}

}  // namespace ltsim::threshold
