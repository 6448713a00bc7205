// Lemma 5.3 under attack: test functions searched for the largest statistic error at a given n,
// and the error's rate over n per subsequence scheme (docs/lemma53.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ltsim/gen/input_generator.h"
#include "ltsim/io/json.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"
#include "ltsim/study/fit.h"
#include "ltsim/study/verdict.h"

namespace ltsim {

/// One attack: x fixed, z built by `method` at target n, the test function searched.
struct AttackOptions {
  std::string method = "markov";   ///< a model-free simulator (markov, blocks, uniform, truncate)
  std::uint64_t length = 100;      ///< n
  std::uint64_t block_length = 0;  ///< ℓ of markov/blocks (0 = ⌈n^(1/3)⌉)
  int alphabet = 2;
  int locality = 0;        ///< τ of the test functions
  double lipschitz = 1.0;  ///< L (ℓ1 in μ); every function has G = 1
  int iterations = 150;    ///< hill-climb proposals per window and restart
  int restarts = 2;
  int random_functions = 16;  ///< random cos functions for the baseline
  std::uint64_t seed = 0;     ///< z's seed and the search's (StreamSeed(seed, "attack"))
  /// An x longer than this is traced compressed (time buckets of relative width 5·10^(−5);
  /// docs/lemma53.md §4): memory O(windows·ln|x|), the error reported is the found function's
  /// exact one and the certified bound adds L·10^(−4). Tests lower it.
  std::uint64_t exact_trace = std::uint64_t{1} << 22;
  /// Models for model-aware simulators (frequency, test-drop-suffix); z is built in their
  /// joint view. Empty: period 1 and the test functions' τ.
  std::vector<const Transformer*> models;
};

struct AttackResult {
  double adversarial = 0.0;  ///< the largest |avg_x p − avg_z p| found (G = 1, Lipschitz L)
  double rechecked = 0.0;    ///< the same function through AverageOverPositions
  double random_best = 0.0;  ///< max over the random cos functions (the statistic's default)
  /// A certified upper bound on sup_p |avg_x p − avg_z p| over the whole class (every p with
  /// |p| ≤ G = 1 and L-Lipschitz in ℓ1 on each window's histograms, not only the searched
  /// family) for this x and z: a partial transport per window (docs/lemma53.md §4). Not a bound
  /// over other x.
  double certified = 0.0;
  double reference_rate = 0.0;  ///< (G + L)(τ + 1)/n^(1/3)
  std::uint64_t x_length = 0, z_length = 0;
  int windows = 0;       ///< windows of the test function that occur in x or z
  std::string function;  ///< the best function's parameters, for reports
};

/// The adversarial family: p(w, μ) = s_w·clamp(⟨b_w, μ⟩ − θ_w, −1, 1) with |s_w| ≤ 1 and
/// ‖b_w‖_∞ ≤ L, so |p| ≤ 1 = G and |p(w, μ) − p(w, μ')| ≤ L‖μ − μ'‖₁. The error is
/// Σ_w s_w·D_w(b_w, θ_w), so s_w = sign(D_w) and each window's |D_w| is climbed on its own.
/// `method` may be any name MakeSimulator knows; model-aware ones need `models`.
AttackResult AttackStatistic(const Source& x, const AttackOptions& options);

/// The transport bound of AttackResult::certified for two sets of histograms of one window:
/// `x` holds count_x points (S values each, flattened) of mass 1/tx each, `z` count_z points of
/// mass 1/tz. Returns an upper bound on sup |Σ_x p(μ)/tx − Σ_z p(μ)/tz| over p with |p| ≤ G
/// and |p(μ) − p(μ')| ≤ L‖μ − μ'‖₁: L·(transport of the common mass, lexicographic
/// north-west-corner coupling, each pair's cost capped at 2G) + G·|mass_x − mass_z|.
double WindowTransportBound(const std::vector<double>& x, std::uint64_t tx,
                            const std::vector<double>& z, std::uint64_t tz, int alphabet,
                            double lipschitz, double size_bound = 1.0);

/// A hill climb over x's generator (docs/lemma53.md §2): from `start`, `proposals` seeded moves
/// of the spec (the kind, α, noise, pattern, parents or the generator's seed; length and
/// alphabet fixed), each kept when the adversarial error of AttackStatistic with `attack` (the
/// same z seed and function search) grows. Deterministic in (start, attack, proposals, seed).
struct InputSearchResult {
  InputSpec spec;       ///< the x found
  AttackResult result;  ///< its attack
  int accepted = 0;     ///< moves kept
};
InputSearchResult SearchAdversarialInput(const InputSpec& start, const AttackOptions& attack,
                                         int proposals, std::uint64_t seed);

/// A sweep over n per scheme and input family (docs/lemma53.md §2).
struct AttackSweepOptions {
  std::vector<std::string> methods = {"markov", "blocks", "uniform", "truncate"};
  std::vector<std::uint64_t> lengths = {16, 160, 1600, 16000};
  /// The input families: fixed ones (the same x at every n) and the run families that adapt to
  /// n (runs, long-runs, stride; AdaptedInput).
  std::vector<InputKind> inputs = {InputKind::kUniform, InputKind::kMarkov,   InputKind::kPeriodic,
                                   InputKind::kRuns,    InputKind::kLongRuns, InputKind::kStride};
  std::uint64_t x_length = 320000;
  int alphabet = 2, locality = 0;
  double lipschitz = 1.0;
  int seeds = 2;  ///< z seeds per (method, n, input)
  int iterations = 60, restarts = 1, random_functions = 4;
  /// > 0: per (scheme, n, z seed) a further family `searched`, SearchAdversarialInput with this
  /// many proposals from the fixed family with the largest error there; 0: fixed families only.
  int x_search = 0;
  int threads = 0;
  std::uint64_t seed = 0;
  /// Called with (cells finished, cells) as attacks end; never changes the result.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

/// One attack of a sweep: the error found, the certified bound on the same x and z, and the
/// options that replay it (with the input spec).
struct AttackCell {
  double error = 0.0, certified = 0.0;
  AttackOptions options;  ///< models empty (the sweep's schemes are model-free)
};

struct AttackSeries {
  std::string method;
  std::string input;                ///< an input family, or "worst" (the max over families per n)
  std::vector<SeriesPoint> points;  ///< per n: one sample per z seed (the error)
  ExponentEstimate rate;            ///< log-log slope of the error in n
  /// Per n: the largest certified bound (AttackResult::certified) over the z seeds (and, for
  /// "worst", the families): every test function's error on these x and z is at most it.
  std::vector<double> certified;
};

struct AttackSweepResult {
  AttackSweepOptions options;
  std::vector<AttackSeries> series;  ///< per method: "worst" first, then each family
  /// Whether markov's worst-case interval contains −1/3, and the schemes whose interval lies
  /// below markov's on every family (docs/lemma53.md §3).
  std::string markov_rate_verdict;
  std::vector<std::string> beats_markov_everywhere;
  std::vector<InputSpec> inputs;  ///< the x of each input family (in options.inputs order)
  /// The x of each family at each n, at input·N + n (fixed families: the same spec every n).
  std::vector<InputSpec> adapted_inputs;
  const InputSpec& Input(std::size_t input, std::size_t n) const;
  /// With x_search: the x found per (method·N + n)·K + seed, and its cell.
  std::vector<InputSpec> searched_inputs;
  std::vector<AttackCell> searched_cells;
  /// Every attack, at ((method·N + n)·I + input)·K + seed (N lengths, I inputs, K seeds).
  std::vector<AttackCell> cells;
  const AttackCell& Cell(std::size_t method, std::size_t n, std::size_t input,
                         std::size_t seed) const;
};

AttackSweepResult RunAttackSweep(const AttackSweepOptions& options);

/// ℓ(n) = ⌈n^(1/3)⌉, the block length of markov and blocks (docs/theory.md §4.5).
std::uint64_t Lemma53BlockLength(std::uint64_t n);

/// The x of a family at target length n (docs/lemma53.md §2): runs get mean run length ℓ(n),
/// long-runs 4ℓ(n), stride runs of half the stride of `blocks` at n ((|x| − τ − 1)/⌈(n − τ −
/// 1)/ℓ(n)⌉); a fixed family is returned unchanged.
InputSpec AdaptedInput(const InputSpec& base, std::uint64_t n, int locality);

/// A scheme's worst-case series in a sweep: per n one sample per z seed, the largest error over
/// the families (and the searched x) as the lower side and the largest certified bound as the
/// upper side; an error at or below 10^(−12) is censored below.
struct WorstCaseSeries {
  std::vector<SeriesPoint> lower, upper;
};
WorstCaseSeries Lemma53WorstSeries(const AttackSweepResult& sweep, std::size_t method);

/// Lemma 5.3's one decision rule (docs/statistics.md §4), used by `statistic --sweep` and
/// `tightness --theorem 5.3` alike: the worst-case series fitted log-log (bootstrap seeded by the
/// sweep's seed and the scheme, so the same sweep gives the same intervals in both), then
/// DecideRateVerdict against −1/3 at the resolution kLemma53Resolution·1/3; the reason ends with
/// the families, the n range and its decades, the z seeds, |x| and the sweep's seed.
struct Lemma53Decision {
  ExponentEstimate lower, upper;
  VerdictResult verdict;
};
inline constexpr double kLemma53Resolution = 0.01;
Lemma53Decision DecideLemma53Rate(const AttackSweepResult& sweep, std::size_t method);

/// The options as `statistic --sweep --json` records them (docs/lemma53.md §2); `inputs` is
/// the families' names joined by commas.
io::Json AttackSweepOptionsToJson(const AttackSweepOptions& options);

}  // namespace ltsim
