// `ltsim tightness`: per parameter of a theorem, the lower side (certified first disagreement T*
// of pairs), the upper side (the construction's certified length), the paper's exponent and a
// verdict (docs/tightness.md); for Lemma 5.3, the statistic error's rate in n per scheme (§5).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/core/progress.h"
#include "ltsim/core/types.h"
#include "ltsim/io/json.h"
#include "ltsim/study/fit.h"
#include "ltsim/study/parameter.h"
#include "ltsim/study/simulator_check.h"
#include "ltsim/study/verdict.h"

namespace ltsim {

struct TightnessOptions {
  Theorem theorem = Theorem::k41;          ///< 4.1, 4.2, 5.2 or 5.3 (docs/tightness.md)
  std::vector<StudyParameter> parameters;  ///< empty: every parameter of the theorem
  std::uint64_t seed = 1;                  ///< master seed of the family members and inputs
  int threads = 0;                         ///< oneTBB arena; 0 = all; never changes results
  int seeds = 3;                           ///< family members (seeded) per point
  int points = 5;                          ///< grid points per parameter
  bool points_given = false;  ///< false: the period row keeps 4 points (D* = 10 is slow)
  /// Per exact threshold (pruned, up to T = 10^6): the statistics it may evaluate; a pair
  /// still agreeing when they are spent is a censored point (T* > the length reached).
  std::uint64_t statistics_budget = 1'000'000;
  int precision_bits = 4;  ///< p of the margin row's finite attention
  /// Heads of the class the eps and scale rows are measured in: 1 = the one-head bump
  /// family, 2 or 3 = the nested family with that many heads (docs/families.md), whose T*
  /// grows like (L/ε)^heads.
  int heads = 2;
  bool validate = true;  ///< run the frequency simulator on found x per point
  /// Cap on |x| of the simulator check: |x| grows 4× a step from min(cap, max(10^4, 4·T_hard))
  /// until the needed n stops growing, reaches the upper side or |x| reaches this cap.
  std::uint64_t max_x_length = 200'000;
  /// 4.1: also fit ln T* = a + Σ_j b_j·ln x_j jointly over the lower-side samples of every
  /// requested row but margin (docs/tightness.md §3, `--joint`).
  bool joint = false;
  std::string out;  ///< witness directory ("" writes none)
  /// 5.3: the subsequence schemes, one row each (empty: markov, blocks, uniform, truncate).
  std::vector<std::string> schemes;
  /// 5.3: |x| of every input family (docs/tightness.md §5; the run families are streamed, so up
  /// to 10^9).
  std::uint64_t statistic_x_length = 320'000;
  /// 5.3: the largest n of the n rows' grid (from 16, evenly in log).
  std::uint64_t statistic_max_n = 16'000;
  /// 5.3: the z length of the locality row (τ varied at this n).
  std::uint64_t statistic_locality_n = 1'000;
  /// 4.2: the Dirichlet α₀ of the eps rows, one row each (empty: 0.5, 1, 2).
  std::vector<double> alphas0;
  /// 4.2: the longest length of the exact average computation (docs/theory.md §13); a member
  /// whose expected gap stays ≤ ε up to it is censored (T* > it).
  std::uint64_t average_max_length = 4096;
  /// 4.1: a user's family directory (docs/tightness.md §7): one row over its members, fitted in
  /// the parameter their meta records, instead of the built-in rows ("" = the built-in rows).
  std::string family_dir;
  std::string family_parameter;  ///< its meta key ("" = the one meta.params key that varies)
  double family_eps = 0.0;       ///< > 0: every member's ε (0: each member's meta.eps)
  /// Called with (units finished, units) as members and checks end; never changes the result.
  ProgressCallback progress;
};

/// One sample: a family member's number at a point and the file that replays it.
struct TightnessSample {
  Sample sample;                    ///< value and censoring
  std::uint64_t seed = 0;           ///< the member's seed
  double lipschitz = 0.0;           ///< L of the pair
  std::uint64_t checked_up_to = 0;  ///< lower side: the N searched
  std::string witness;              ///< the point witness file ("" without --out)
  std::vector<Run> string;          ///< lower side: the string at T* (run-length)
  std::string input;                ///< 5.3: the input family attaining the worst error
  /// 4.1: the pair's own values of the parameters the rows vary (the joint fit's regressors;
  /// 0 when not recorded): ε, Δ, S and τ (L is `lipschitz`).
  double eps = 0.0, period = 0.0, alphabet = 0.0, locality = 0.0;
  /// A user's family: the member's directory name and the T* its meta records (if any).
  std::string name;
  std::optional<std::uint64_t> recorded;
  /// 4.2: the largest expected gap over the lengths computed (measured, exact sums), the length
  /// up to which they were computed, and the pair's limit of the expected gap (quadrature).
  double later_gap = 0.0;
  std::uint64_t later_up_to = 0;
  double average_limit = 0.0;
  double alpha0 = 0.0;  ///< 4.2: the prior's α₀
};

struct TightnessPoint {
  double value = 0.0;      ///< the parameter
  double regressor = 0.0;  ///< what the fit uses (1/ε, L, Δ, S, τ, 1/γ)
  std::vector<TightnessSample> lower, upper;
  SimulatorCheck simulator;
  /// 5.2: the simulator on found x, one sample per x (neither bound; empty when not run).
  std::vector<TightnessSample> simulator_samples;
};

/// An empirical constant (T*·ε/(Δ·L) and the like) and the sample attaining its largest value.
struct EmpiricalConstant {
  std::string name;
  double value = 0.0;
  int point = -1, sample = -1;
  std::string witness;
};

struct TightnessRow {
  Theorem theorem = Theorem::k41;
  StudyParameter parameter = StudyParameter::kEps;
  std::string name;      ///< unique per result: the parameter (4.1), "n_<scheme>" (5.3)
  std::string scheme;    ///< 5.3: the subsequence scheme ("" for 4.1)
  std::string quantity;  ///< what the points measure: "length" or "statistic error"
  /// The sides' labels and the lower side's source ("" = the Theorem 4.1 labels).
  std::string lower_label, upper_label, lower_source;
  std::string regressor;     ///< "1/eps", "L", "Delta", "S", "tau", "1/gamma"
  std::string fit;           ///< "log-log" or "log-linear (ln N = a + b/gamma)"
  std::string class_text;    ///< the class the row is measured in
  std::string family;        ///< the lower side's family
  std::string semantics;     ///< the assumptions its T* relies on
  std::string upper_source;  ///< what the upper side is
  std::vector<TightnessPoint> points;
  ExponentEstimate lower, upper;
  double paper = 0.0;
  std::string paper_source;
  VerdictResult verdict;
  EmpiricalConstant constant;
  std::vector<std::string> warnings;
  /// 5.2: what the simulator samples are and their fit in the row's regressor ("" when the
  /// row has none).
  std::string simulator_source;
  ExponentEstimate simulator;
  /// 4.2: the conclusion's form: the later expected gap (each member's largest over the lengths
  /// computed, beyond its T*) fitted log-log against ε (eps rows), beside the paper's 1/2 of
  /// O(ε^(1/2)); `conclusion.reason` says what it shows. NaN exponent on other rows.
  ExponentEstimate conclusion;
  double conclusion_paper = std::numeric_limits<double>::quiet_NaN();
  double alpha0 = 0.0;  ///< 4.2 eps rows: the prior's α₀ (0 elsewhere)
  /// A user's family row: its directory ("" for the built-in rows); `name` is then the meta key
  /// of its parameter.
  std::string family_dir;
};

/// 4.1 `--joint`: ln T* = a + Σ_j b_j·ln x_j over the uncensored lower-side samples of every
/// requested row but margin, each sample with its own pair's values of every parameter the
/// rows vary (docs/tightness.md §3).
struct TightnessJoint {
  std::vector<std::string> parameters;  ///< the regressors: "1/eps", "L", "Delta", "S", "tau"
  std::vector<std::string> rows;        ///< the rows whose samples enter
  std::vector<std::string> left_out;    ///< rows left out and why ("margin: ...")
  /// The rows' families, in order: one intercept each (rows of different families share the
  /// exponents, not the constant).
  std::vector<std::string> families;
  std::vector<double> family_intercepts;  ///< a of each family (empty without a fit)
  /// One sample: its row, point, member, regressor values (in `parameters` order) and T*.
  struct Observation {
    std::string row;
    int point = 0, member = 0;
    std::vector<double> values;
    Sample sample;
  };
  std::vector<Observation> observations;  ///< every sample of the rows (censored ones too)
  int dropped = 0;           ///< samples with a regressor ≤ 0 (no logarithm; e.g. τ = 0)
  std::string dropped_note;  ///< which values ("tau = 0 in 30 samples")
  JointFit fit;              ///< b_j with t intervals (FitJoint; the family indicators dropped)
  std::string reason;        ///< why there are no exponents or intervals ("" when there are)
};

struct TightnessResult {
  TightnessOptions options;
  std::vector<TightnessRow> rows;
  std::optional<TightnessJoint> joint;  ///< with options.joint (4.1 only)
};

/// The parameters of a theorem, in order (4.1: eps, scale, period, alphabet, locality, margin;
/// 5.2: k, positional-margin; 5.3: n).
std::vector<StudyParameter> TightnessParameters(Theorem theorem);

/// Runs every row. Pure in the options (witness files aside); points and members run in
/// parallel, stored by index. InputError for an unknown theorem or parameter, seeds < 1,
/// points < 3 or a budget of 0.
TightnessResult RunTightness(const TightnessOptions& options);

/// The options as `tightness --json` and tightness.json record them (docs/tightness.md).
io::Json TightnessOptionsToJson(const TightnessOptions& options);

}  // namespace ltsim
