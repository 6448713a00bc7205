// The Theorem 4.2 rows of `ltsim tightness --theorem 4.2` (docs/tightness.md §8).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/construct/families.h"
#include "ltsim/study/tightness.h"
#include "ltsim/study/verdict.h"

namespace ltsim {

/// The eps rows' grid: ε = 0.05/2^(1.5 i), i < points (0.05 … 0.05/64 at 5 points).
std::vector<double> Theorem42EpsGrid(int points);

/// The alpha0 row's grid of 1/α₀: 0.25·2^i, i < points (α₀ = 4 … 0.25 at 5 points).
std::vector<double> Theorem42InverseAlphaGrid(int points);

/// One member's lower side: the exact average first disagreement of `pair` under Dir(α, α)
/// (AverageGap, lengths 64, 256, … up to o.average_max_length; censored above when no length
/// up to it has E_T > ε), with the later gap (the largest E_T over lengths up to at least 4·T*
/// within the cap) and the direct Beta-binomial T* of the builder as `recorded`. With o.out,
/// writes the pair and `row/p<i>_m<k>.average.json` (the `ltsim average` command that
/// recomputes it).
TightnessSample AverageLowerSide(const TightnessOptions& o, const std::string& row, int point,
                                 int member, std::uint64_t seed, const FamilyMember& pair,
                                 double alpha, double eps);

/// A Theorem 4.2 row's verdict: DecideRateVerdict of the sides against `paper` at resolution
/// 1% of max(1, |paper|), except that an ε-form row (`eps_form`: later gap ~ κ·ε, a conclusion
/// stronger than the paper's O(ε^(1/2))) is never tight or contradicts: those become
/// inconclusive with `capped` set (docs/tightness.md §8).
struct Theorem42Verdict : VerdictResult {
  bool capped = false;  ///< an ε-form row's tight / contradicts turned inconclusive
};
Theorem42Verdict DecideTheorem42Verdict(const ExponentEstimate& lower,
                                        const ExponentEstimate& upper, double paper, bool eps_form);

/// The eps rows (one per α₀ of o.alphas0, default 0.5, 1, 2) and the alpha0 row, those in
/// o.parameters: lower side AverageLowerSide of the average-bump family, no upper side, the
/// paper's exponent of thm4.2, the later gap against ε beside the paper's ε^(1/2), and a verdict.
/// Identical for any o.threads.
std::vector<TightnessRow> RunTheorem42Rows(const TightnessOptions& o);

}  // namespace ltsim
