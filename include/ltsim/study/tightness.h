// `ltsim tightness`: per parameter of a theorem, the lower side (certified first disagreement T*
// of pairs), the upper side (the construction's certified length), the paper's exponent and a
// verdict (docs/tightness.md); for Lemma 5.3, the statistic error's rate in n per scheme (§5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/core/progress.h"
#include "ltsim/core/types.h"
#include "ltsim/io/json.h"
#include "ltsim/study/fit.h"
#include "ltsim/study/parameter.h"
#include "ltsim/study/verdict.h"

namespace ltsim {

struct TightnessOptions {
  Theorem theorem = Theorem::k41;          ///< 4.1, 5.2 or 5.3 (docs/tightness.md)
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
  bool validate = true;                  ///< run the frequency simulator on found x per point
  std::uint64_t max_x_length = 200'000;  ///< cap on |x| of the simulator check
  std::string out;                       ///< witness directory ("" writes none)
  /// 5.3: the subsequence schemes, one row each (empty: markov, blocks, uniform, truncate).
  std::vector<std::string> schemes;
  /// 5.3: |x| of every input family (uniform, markov, periodic; docs/tightness.md §5).
  std::uint64_t statistic_x_length = 320'000;
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
};

/// The frequency simulator on the worst x found for a point (neither bound).
struct SimulatorCheck {
  std::uint64_t needed = 0;  ///< smallest grid n meeting ε (|x| if none)
  std::uint64_t x_length = 0;
  bool reached = false;            ///< some n < |x| met ε
  double certified = 0.0;          ///< the upper side at this point
  bool within_certificate = true;  ///< needed ≤ certified
  std::string x_kind;              ///< which candidate attained it
  bool hardmax_regime = true;      ///< |x| ≥ T_hard with margin (4×)
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
};

struct TightnessResult {
  TightnessOptions options;
  std::vector<TightnessRow> rows;
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
