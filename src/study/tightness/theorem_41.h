// Theorem 4.1's rows of `ltsim tightness` and the parts its user-family row shares
// (docs/tightness.md §3, §7).
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/model/transformer.h"
#include "ltsim/study/tightness.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {

/// A member's certified T*: the pruned exact search (docs/theory.md §11) up to 10^6, stopped
/// after the window in which its evaluated statistics pass `budget`; then T* > checked_up_to is
/// a censored point.
ThresholdResult MemberThreshold(const Transformer& f, const Transformer& g, double eps,
                                std::uint64_t budget);

/// A row's verdict from its fitted sides and the paper's exponent (docs/statistics.md §4):
/// exponents closer than 1% of max(1, |paper|) are not told apart; a contradiction of the upper
/// side on a grid where every lower length stays below the certified one is inconclusive.
void JudgeRow(TightnessRow& row);

/// One row per o.parameters (eps, scale, period, alphabet, locality, margin): K seeded family
/// members a point, their exact T* and certified lengths, the simulator check on the first
/// member's found x (with o.validate), the fits and the verdict. Witnesses under
/// out/<parameter>/ when o.out is set. Identical for any o.threads.
std::vector<TightnessRow> RunTheorem41Rows(const TightnessOptions& o);

}  // namespace ltsim
