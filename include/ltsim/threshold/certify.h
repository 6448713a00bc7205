// Agreement of two one-layer models at every length, or their exact first disagreement
// (docs/theory.md §12).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/joint_view.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {

/// Contexts (T mod Δ*, last τ*+1 tokens) the limit search refines one by one: Δ*·S^(τ*+1) ≤ this.
inline constexpr std::uint64_t kCertifyMaxContexts = std::uint64_t{1} << 16;

/// What to decide.
struct CertifyOptions {
  double epsilon = 0.0;    ///< ε ≥ 0
  std::uint64_t seed = 1;  ///< printed; the decision uses no randomness
  int threads = 0;         ///< the exact threshold's threads (results never depend on them)
  /// T₀ to start from: lengths ≤ T₀ by the exact threshold, longer ones by the limit search;
  /// raised ×8 (up to kThresholdMaxLength) while a finite range of lengths blocks the decision.
  std::uint64_t initial_length = 1000;
  /// The largest T₀ (and the longest exact search for T*): ≤ kThresholdMaxLength.
  std::uint64_t max_exact_length = kThresholdMaxLength;
  /// Evaluations of each exact run at a raised T₀ (the threshold's max_evaluations): a pair
  /// near ε everywhere stops raising T₀ where this budget ends, and the limit search covers
  /// the rest. The search for T* itself has no such budget.
  std::uint64_t extension_evaluations = 20'000'000;
  /// Evaluations of the first exact run and of the search for T* (the threshold's
  /// max_evaluations): when spent, T₀ stays where the first run stopped, and a disagreement
  /// found beyond is reported as first_disagreement_at_most.
  std::uint64_t exact_evaluations = 4'000'000'000;
  /// A supremum whose certified bracket [lower, upper] ∋ ε has upper − lower ≤ tolerance is
  /// `undecided`; the search refines until the bracket is that narrow or ε lies outside it.
  double tolerance = 1e-6;
  /// Seconds (0: none) after which the exact threshold runs stop as if their evaluation budget
  /// were spent (a window can hold far more evaluations than the budget checked between
  /// windows), and the limit search stops between boxes (then `undecided`, reason "time
  /// budget", stopped_by kTimeBudget). A decision reached under it depends on timing, never its
  /// soundness.
  double time_budget = 0.0;
  /// Boxes of the limit search refined before it stops (then `undecided`, reason "budget").
  std::uint64_t max_boxes = 2'000'000;
  /// Called now and then (each exact window, every 1024 boxes): boxes bounded so far and a
  /// line saying where the decision stands.
  std::function<void(std::uint64_t, const std::string&)> progress;
};

enum class CertifyVerdict { kAgrees, kDisagrees, kUndecided };

/// "agrees-at-every-length", "disagrees", "undecided".
const char* CertifyVerdictName(CertifyVerdict verdict);

/// What ended an undecided search before it reached a decision.
enum class CertifyStop {
  kNone,              ///< it did not stop early (decided, or undecided by tolerance/resolution)
  kTimeBudget,        ///< time_budget passed (exact runs or the limit search)
  kBoxBudget,         ///< max_boxes boxes of the limit search
  kEvaluationBudget,  ///< the first exact run's evaluations, before the lengths ≤ τ* + 1
};

/// "none", "time budget", "box budget", "evaluation budget".
const char* CertifyStopName(CertifyStop stop);

/// A statistic some string has: its length, joint-view far counts and suffix.
struct CertifyStatistic {
  std::uint64_t length = 0;
  TypeCounts counts;  ///< in the joint view
  double gap = std::numeric_limits<double>::quiet_NaN();
};

struct CertifyResult {
  CertifyVerdict verdict = CertifyVerdict::kUndecided;
  JointView view;
  /// disagrees: the exact first disagreement (nullopt only when it lies beyond
  /// max_exact_length or exact_evaluations ran out before it; then first_disagreement_at_most
  /// holds a length whose statistic disagrees).
  std::optional<std::uint64_t> first_disagreement;
  std::optional<std::uint64_t> first_disagreement_at_most;
  /// disagrees: the threshold's witness at T* (or the statistic at first_disagreement_at_most).
  std::vector<Run> witness;
  double witness_gap = std::numeric_limits<double>::quiet_NaN();
  /// A gap some string attains (evaluated), and that string's statistic.
  double sup_gap_lower = 0.0;
  CertifyStatistic lower_statistic;
  /// A certified bound on ‖f(x) − g(x)‖_∞ over every string of every length.
  double sup_gap_upper = std::numeric_limits<double>::infinity();
  /// Lengths ≤ exact_up_to were searched exactly by the threshold (its certified bound there:
  /// exact_bound); longer ones are covered by the limit search's boxes (limit_bound).
  std::uint64_t exact_up_to = 0;
  double exact_bound = 0.0;
  double limit_bound = std::numeric_limits<double>::infinity();
  std::uint64_t boxes = 0;           ///< boxes of the limit search bounded
  std::uint64_t threshold_runs = 0;  ///< exact threshold runs (T₀ raised in between)
  std::uint64_t threshold_evaluations = 0;
  /// f and g have the same parameters (SameFunction): the gap is 0 at every length, decided
  /// without a search (docs/theory.md §12.10).
  bool identical = false;
  /// undecided: "tolerance" (bracket ≤ tolerance), "budget" (boxes or evaluations), "time
  /// budget", "resolution" or "rounding".
  std::string reason;
  /// undecided by a budget: which one stopped the decision (kNone otherwise).
  CertifyStop stopped_by = CertifyStop::kNone;
  /// The last exact threshold run that stopped before its length (T₀ then stays where it
  /// stopped, §12.7): why (kNone: every exact run completed). Nothing certified depends on it.
  ThresholdStop exact_stopped = ThresholdStop::kNone;
  /// The length that stopped run had searched to (0 when none stopped).
  std::uint64_t exact_stopped_at = 0;
  /// That run was the one confirming a disagreement the limit search found (T* ≤ its length
  /// then lies beyond where it stopped), not one extending T₀.
  bool exact_stopped_confirming = false;
  double tolerance = 0.0;
  double seconds = 0.0;
};

/// The decision of docs/theory.md §12 for a one-layer pair: agreement within ε at every
/// length (certified), the exact first disagreement, or `undecided` with the bracket of the
/// supremum. InputError / OptionError (before any evaluation) for two-layer models, `log` bias
/// scaling, and the threshold's limits (D*, τ*) and kCertifyMaxContexts.
CertifyResult Certify(const Transformer& f, const Transformer& g, const CertifyOptions& options);

/// Certify's checks alone (the errors Certify throws before evaluating anything), for callers
/// that run other work first.
void CheckCertifyInputs(const Transformer& f, const Transformer& g, const CertifyOptions& options);

}  // namespace ltsim
