// Tightness verdicts: the lower side's exponent against the upper side's and the paper's
// (docs/statistics.md "Verdicts").
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "ltsim/study/fit.h"

namespace ltsim {

/// tight: the two sides' intervals overlap; gap: the lower side's interval lies below the upper
/// side's; contradicts: the lower side's interval lies above the paper's exponent (or above the
/// construction's certified upper side); inconclusive: the data do not support a verdict.
enum class Verdict { kTight, kGap, kContradicts, kInconclusive };

/// "tight", "gap", "contradicts", "inconclusive".
const char* VerdictName(Verdict verdict);

struct VerdictResult {
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;
  /// gap: upper.exponent − lower.exponent and the least gap the intervals allow
  /// (upper.ci.low − lower.ci.high); NaN otherwise.
  double gap = 0.0;
  double least_gap = 0.0;
};

/// Decides in this order (docs/statistics.md):
///  1. no lower interval → inconclusive (the lower fit's reason);
///  2. lower.ci.low > paper → contradicts (the paper's exponent is below a certified lower side);
///  3. the lower interval contains 0 → inconclusive (growth not shown);
///  4. no upper interval → inconclusive;
///  5. lower.ci.low > upper.ci.high → contradicts (a lower bound above a certified upper bound:
///     the certificate or the threshold is wrong);
///  6. the intervals overlap → tight; otherwise gap.
/// `tolerance` widens every comparison (exact exponents fitted in double precision).
VerdictResult DecideVerdict(const ExponentEstimate& lower, const ExponentEstimate& upper,
                            double paper, double tolerance = 1e-9);

/// A rate row (Lemma 5.3: an error that should decay like n^paper, paper < 0): the lower side
/// is a measured lower bound on the error the rate bounds, so its exponent may not exceed the
/// paper's. Decides in this order (docs/tightness.md §5):
///  1. no lower interval → inconclusive (the lower fit's reason);
///  2. the lower interval contains 0 → inconclusive (decay not shown; checked before 3, since
///     an interval such as [−0.2, 0.1] lies above a negative rate without showing decay);
///  3. lower.ci.low > paper → contradicts (the error decays slower than the rate allows);
///  4. the lower interval contains the paper's exponent → tight (the rate is attained);
///  5. otherwise (the interval lies below it) → gap: the inputs tried decay faster than the
///     rate; `gap` = paper − lower.exponent, `least_gap` = paper − lower.ci.high. The reason
///     says whether the certified upper side (when it has an interval) confirms it.
/// A non-finite paper (no rate stated for the row) → inconclusive, with the lower interval.
VerdictResult DecideRateVerdict(const ExponentEstimate& lower, const ExponentEstimate& upper,
                                double paper, double tolerance = 1e-9);

}  // namespace ltsim
