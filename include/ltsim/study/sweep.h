// Parameter sweeps of the needed length against Theorem 4.1's exponents
// (docs/theory.md §2.1, §7.4; the statistics of docs/statistics.md §5).
// Each pair of a point is found by a short search (search.h) or drawn at random; a point keeps
// every pair's needed length with its censoring, and the fit sees only uncensored points.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ltsim/bounds/registry.h"
#include "ltsim/core/progress.h"
#include "ltsim/core/types.h"
#include "ltsim/core/work.h"
#include "ltsim/fuzz/campaign.h"
#include "ltsim/gen/input_generator.h"
#include "ltsim/gen/model_generator.h"
#include "ltsim/io/json.h"
#include "ltsim/model/transformer.h"
#include "ltsim/study/fit.h"
#include "ltsim/study/parameter.h"
#include "ltsim/study/simulator_check.h"

namespace ltsim {

/// What a sweep varies and how each point is measured.
///
/// `margin`: pairs are drawn on the grid with `finite` attention of `precision_bits` p, then
/// each model's logits are rescaled so γ(f) = γ(g) = the value exactly (margin_pair.h; the
/// search keeps it after every move). Thm 4.1's first term is 2^(p/γ), so the fit there is
/// ln n = a + b/γ (log-linear in 1/γ), compared with b = p·ln 2; a power law in γ is not its
/// shape. Every other parameter is fitted log-log against Thm 4.1's second term.
struct SweepOptions {
  /// scale, alphabet, period, locality, eps or margin (n is Lemma 5.3's, refused here)
  StudyParameter parameter = StudyParameter::kScale;
  std::vector<double> values;  ///< the grid of the parameter (positive)
  double eps = 0.01;           ///< ε of the needed length (unless parameter == eps)
  /// K per point: restarts of the search, or random pairs when search is false.
  int pairs = 4;
  /// true: per point, K hill climbs (objective `needed`, proposals `logits`: L and the
  /// parameter stay fixed, the structure and x move) of `iterations` proposals each;
  /// false: the max over K random pairs.
  bool search = true;
  int iterations = 16;
  int threads = 0;  ///< oneTBB arena size over (point, pair); 0 = all. Never changes results.
  /// Who computes the (point, pair) cells (core/work.h; null: this process). Under MPI every
  /// rank calls RunSweep; only the reducing rank's result is filled in.
  ItemDealer* dealer = nullptr;
  /// Called with (pairs finished, points × K) as they end; never changes the result.
  ProgressCallback progress;
  int precision_bits = 8;  ///< p of the margin sweep's `finite` attention
  std::uint64_t seed = 0;
  std::uint64_t x_length = 20000;  ///< |x| (the first |x| when max_x_length grows it)
  /// > x_length: every pair's x grows ×4 (GrowSimulatorLength, docs/statistics.md §5) until its
  /// needed n stops growing, reaches the pair's upper side, or |x| reaches this cap; the pair
  /// keeps its worst step. 0: |x| fixed.
  std::uint64_t max_x_length = 0;
  std::uint64_t fixed_n = 500;  ///< n at which sim is also recorded
  InputKind input = InputKind::kStress;
  double delta = 0.01;  ///< perturbation of g = f + δ·N(0, 1)
  /// Non-empty: every (point, pair) writes a needed-length point witness
  /// `out_dir`/<parameter>/p<i>_m<k>.point.json (point_witness.h, docs/witnesses.md §6), and
  /// SweepPair::witness names it. Empty: none.
  std::string out_dir;
  /// A user's one-layer pair (`sweep --pair F G`): measured as given at every point, so only
  /// `eps` can be swept and `search` must be false; the K "pairs" of a point are then K inputs
  /// x of the family `input`, the same at every point (seeds as for random pairs). Null: pairs
  /// are drawn from `base`.
  std::shared_ptr<const UserPair> pair;
  /// The base model: one layer, hardmax, grid weights; the swept field is overwritten.
  ModelSpec base = [] {
    ModelSpec spec;
    spec.alphabet = 2;
    spec.period = 1;
    spec.locality = 1;
    spec.scale = 1.0;
    spec.grid = 1.0;
    return spec;
  }();
};

/// One pair of one point: the witness a worst case names.
struct SweepPair {
  int index = 0;  ///< k in 0..K−1
  /// StreamSeed(seed, "sweep", point·K + k) (point 0 for eps and margin: the same starting
  /// pairs at every point): the random pair's engine, or
  /// the master seed of that restart's search (restart 0 of SearchOptions with this seed).
  std::uint64_t seed = 0;
  std::uint64_t x_length = 0;  ///< |x| of the witness (a search may shorten x)
  bool x_explicit = false;     ///< whether the search made x explicit runs
  int accepted = 0;            ///< the search's accepted proposals (0 for random pairs)
  std::uint64_t needed = 0;    ///< smallest grid n with max(sim_f, sim_g) ≤ ε (|x| if none)
  bool reached = false;        ///< whether some n < |x| met ε
  double sim_at_fixed = 0.0;   ///< max(sim_f, sim_g) at n = fixed_n
  ConstantMap constants;       ///< the pair's constants (registry.h) with eps, n, T
  /// With max_x_length: every |x| tried and its needed n, in order, and why the growth
  /// stopped ("stopped growing", "upper side", "cap"); empty with |x| fixed.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> x_steps;
  std::string x_stop;
  // Derived by RunSweep from the fields above (never dealt between processes):
  /// above: no n < |x| met ε (needed = |x|, a cap); below: the grid's first n,
  /// NeededLengthGrid(τ + 2, |x|).front(), already met ε (a floor); none otherwise.
  Censoring censoring = Censoring::kNone;
  /// log₂ T_hard = p/γ of a pair with `finite` attention (p > 0); NaN for hardmax.
  double log2_t_hard = std::numeric_limits<double>::quiet_NaN();
  bool hardmax_regime = true;  ///< |x| ≥ kHardmaxRegimeMargin·T_hard (always for hardmax)
  /// Upper side: the construction's certified length for this pair, the registry's
  /// frequency-length; for `finite` attention at least thm4.1-hardmax 2^(p/γ).
  double upper_side = 0.0;
  /// With SweepOptions::out_dir: the pair (f, g) and its x (explicit runs, or the spec's string
  /// materialised) as measured, dealt with the cell; empty otherwise.
  Transformer f, g;
  InputSpec input;
  std::vector<Run> x_runs;
  /// The point witness, relative to out_dir: <parameter>/p<i>_m<k>.point.json ("" without)
  std::string witness_file;
};

/// One grid point: every pair's sample and, for the legacy keys, the worst case over its K pairs.
struct SweepPoint {
  double value = 0.0;         ///< the parameter
  double fit_x = 0.0;         ///< the regressor: the value; for `scale` the largest L; margin 1/γ
  std::uint64_t needed = 0;   ///< max over pairs of the needed length
  int witness = 0;            ///< the pair attaining it
  double sim_at_fixed = 0.0;  ///< max over pairs
  double bound = 0.0;         ///< thm4.1-length at the point's S, Δ, τ, ε and largest L
  double ours = 0.0;          ///< frequency-length at the same constants
  double ratio = 0.0;         ///< needed / bound (NaN when every pair has L = 0)
  std::vector<SweepPair> pairs;
  /// "simulator on found x": every pair's needed length with its censoring; regressor fit_x.
  SeriesPoint simulator;
  /// "upper side": every pair's certified length (SweepPair::upper_side), never censored.
  SeriesPoint upper_side;
  Censoring censoring = Censoring::kNone;  ///< PointCensoring(simulator)
  Spread spread;                           ///< min / median / max of the simulator samples
  Spread upper_spread;                     ///< the same for the upper side
  bool hardmax_regime = true;              ///< every pair's x is in the hardmax regime
  double t_hard = std::numeric_limits<double>::quiet_NaN();  ///< largest T_hard (finite pairs)
  bool in_fit = false;  ///< whether the point entered the simulator's fit
  /// Why not (empty when it did): "censored above", "censored below", "outside the hardmax
  /// regime", "L = 0".
  std::string excluded;
};

/// Everything a sweep reports.
struct SweepResult {
  SweepOptions options;
  std::vector<SweepPoint> points;
  /// The simulator on found x: FitSeries over the points in the hardmax regime with a positive
  /// regressor (censored points never enter); log-log, margin log-linear in 1/γ.
  ExponentEstimate simulator;
  /// rises / not shown / degenerate (DecideTrend; for eps in 1/ε: the needed length should
  /// grow as ε shrinks).
  TrendVerdict trend;
  ExponentEstimate upper_side;  ///< the same fit of the points' certified lengths
  int points_outside_regime = 0;
  /// Thm 4.1's exponent: its second term in this parameter, or for margin p·ln 2 (the slope of
  /// ln 2^(p/γ) in 1/γ).
  double paper_exponent = 0.0;
  /// max over the uncensored samples (one pair's needed length, censored neither above nor
  /// below) of needed / the point's bound, as tightness takes its constants (docs/statistics.md
  /// §5): a censored length is a bound, not a value; NaN when no sample qualifies.
  double empirical_constant = 0.0;
  int constant_point = 0;  ///< the point attaining it
  int constant_pair = 0;   ///< the pair attaining it
};

/// The parameters a sweep accepts, in order.
const std::vector<StudyParameter>& SweepParameters();

/// Thm 4.1's exponent of the parameter in L²Δ⁷|Σ|⁶τ²/ε²: scale (via L) 2, period 7,
/// alphabet 6, locality 2, eps −2; margin: p·ln 2, the slope of ln 2^(p/γ) in 1/γ (its first
/// term). OptionError("parameter") for n, which is not a parameter of Theorem 4.1.
double PaperExponent(StudyParameter parameter, int precision_bits = 8);

/// Whether a parameter is fitted log-linearly in 1/value (margin) rather than log-log.
inline bool FitsInverseValue(StudyParameter parameter) {
  return parameter == StudyParameter::kMargin;
}

/// Runs the sweep: per point K seeded one-layer pairs (perturbed, grid weights; hardmax, or
/// finite with the margin) and inputs, each searched (or not), their needed lengths with
/// censoring, the hardmax regime, the spread, the worst case, the bounds and the fits. Pure in the
/// options; (point, pair) run in parallel (oneTBB), identical for any thread count. InputError for
/// bad options (unknown parameter, fewer than 2 values, non-positive values).
SweepResult RunSweep(const SweepOptions& options);

/// One line naming the points whose x lies outside the hardmax regime (|x| <
/// kHardmaxRegimeMargin·T_hard) with their T_hard and the |x| that would reach it; "" when
/// every point is inside.
std::string HardmaxRegimeWarning(const SweepResult& result);

/// The options as `sweep --json` and sweep.json record them (docs/formats.md §3.5).
io::Json SweepOptionsToJson(const SweepOptions& options);

/// The construction's certified length for a pair (the upper side of sweeps and tightness):
/// the registry's frequency-length, and for `finite` attention at least thm4.1-hardmax
/// 2^(p/γ), below which the certificate does not apply (docs/theory.md §2.4); +∞ for a `finite`
/// pair with near-ties, which no length certifies for every x (docs/theory.md §2.6).
double CertifiedLength(const ConstantMap& constants);

}  // namespace ltsim
