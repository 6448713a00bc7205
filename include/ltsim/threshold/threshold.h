// The first length at which two models differ by more than ε, over all strings
// (docs/theory.md §7.2).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/core/work.h"
#include "ltsim/io/recheck.h"
#include "ltsim/model/joint_view.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

// Limits of `ltsim threshold`, checked before any evaluation (InputError naming the limit).
// One-layer pairs, in the joint view (Δ* = lcm of the periods, τ* = max of the localities):

/// D* = S·Δ* ≤ kThresholdMaxTypes: the far counts are compositions over D* types.
inline constexpr int kThresholdMaxTypes = 64;
/// τ* ≤ kThresholdMaxLocality: each length has up to S^(τ*+1) suffixes.
inline constexpr int kThresholdMaxLocality = 10;
/// Full enumeration (prune = false, the enumeration before pruning existed):
/// Σ_{T ≤ N} #statistics(T) ≤ kThresholdMaxStatistics (each costs one evaluation of f and g).
inline constexpr std::uint64_t kThresholdMaxStatistics = 20'000'000;
/// Pruned search: Δ*·S^(τ*+1) contexts (T mod Δ*, last τ*+1 tokens) ≤ kThresholdMaxContexts.
inline constexpr std::uint64_t kThresholdMaxContexts = std::uint64_t{1} << 20;
/// A statistic disagrees when gap > ε + kThresholdGapTolerance·max(1, ‖f(x)‖_∞, ‖g(x)‖_∞):
/// a gap within rounding of ε (0.060000000000000005 at ε = 0.06) is not a disagreement. The
/// same relative 1e-9 as the fuzz and search rechecks (fuzz/recheck.cpp, search_witness_io.h).
inline constexpr double kThresholdGapTolerance = 1e-9;
/// N = max length ≤ kThresholdMaxLength, for every pair.
inline constexpr std::uint64_t kThresholdMaxLength = 10'000'000;

// Pairs with a two-layer model (deeper models are refused):

/// Every string is checked for T = 1 … T_ex, T_ex the largest T ≤ kThresholdExhaustiveMaxLength
/// with Σ_{t ≤ T} S^t ≤ kThresholdExhaustiveStrings.
inline constexpr std::uint64_t kThresholdExhaustiveStrings = std::uint64_t{1} << 16;
inline constexpr std::uint64_t kThresholdExhaustiveMaxLength = 64;
/// Beyond T_ex: `samples_per_length` uniform random strings a length, with
/// samples · Σ_{T_ex < T ≤ N} T ≤ kThresholdMaxRandomTokens.
inline constexpr std::uint64_t kThresholdMaxRandomTokens = 100'000'000;
/// The path search (ThresholdOptions::two_layer_paths) covers lengths 1 … N' for the largest
/// N' ≤ N whose DAG (docs/theory.md §11.5) has at most kThresholdPathMaxNodes nodes and whose
/// estimated memory (the y¹ tables, and per thread the arrays of a set over every node) stays
/// ≤ kThresholdPathMaxBytes; longer lengths get the random strings above.
inline constexpr std::uint64_t kThresholdPathMaxNodes = std::uint64_t{1} << 25;
inline constexpr std::uint64_t kThresholdPathMaxBytes = std::uint64_t{3} << 30;

/// What to search.
struct ThresholdOptions {
  double epsilon = 0.0;                    ///< ε ≥ 0: disagreement is a gap > ε (strictly)
  std::uint64_t max_length = 0;            ///< N ≥ 1: lengths 1 … N are searched
  std::uint64_t seed = 1;                  ///< master seed of the random search (two layers)
  std::uint64_t samples_per_length = 100;  ///< random strings a length (two layers), ≥ 1
  /// Who computes the lengths (core/work.h; null: this process). Under MPI every rank calls
  /// FindThreshold and only the reducing rank's result is filled in. --no-prune and
  /// two-layer searches split their lengths; the pruned search deals each window's tasks to
  /// ranks that share decisions (MPI: ItemDealer::Shares) and runs on the reducing process
  /// alone for shards (docs/distributed.md §2).
  ItemDealer* dealer = nullptr;
  /// One-layer pairs: prune cells of the count lattice by the certified bound
  /// (docs/theory.md §11); false = evaluate every statistic (the full enumeration, with
  /// its kThresholdMaxStatistics limit).
  bool prune = true;
  /// Threads (oneTBB; 0 = every core). Every result is the same for any number.
  int threads = 0;
  /// Pruned search: stop after the window in which the evaluations pass this budget
  /// (checked_up_to then says how far the search is exact; `complete` is false).
  std::uint64_t max_evaluations = 4'000'000'000;
  /// Pruned search: lengths are enumerated statistic by statistic while their cumulative
  /// count stays ≤ this (so short lengths get exact per-length maxima), then cells.
  std::uint64_t full_statistics = 200'000;
  /// Cells with at most this many statistics are enumerated rather than bounded (≥ 1).
  double leaf_statistics = 16;
  /// Tests: count the statistics of every pruned cell one by one (statistics_pruned_counted).
  bool count_pruned = false;
  /// Two-layer pairs: search every string as a path of first-layer nodes with certified
  /// bounds (docs/theory.md §11.5, ThresholdMethod::kPaths); false = every string up to T_ex,
  /// then random strings (kExhaustiveRandom, the search before the path search existed).
  bool two_layer_paths = true;
  /// Path search: sets with at most this many paths are enumerated rather than bounded (≥ 1).
  double leaf_paths = 16;
  /// Path search: lengths whose strings number at most this in all are enumerated string by
  /// string first (so their per-length maxima are exact).
  std::uint64_t full_strings = 4096;
  /// Called after each window of lengths: last length done, N, evaluations, seconds.
  std::function<void(std::uint64_t, std::uint64_t, std::uint64_t, double)> progress;
  /// n ∈ [1, N]: only lengths n … N are searched (a model trained at length n is judged from
  /// n on); shorter lengths are neither searched nor reported.
  std::uint64_t min_length = 1;
  /// Seconds ≥ 0 (0: none): the search stops once they have passed and reports what it has
  /// certified so far (`stopped`, `complete` false). The pruned search (in one process) stops
  /// inside a window and keeps every length that all of its tasks finished; the other searches
  /// stop between lengths. A stopped result depends on timing, not only on the inputs.
  double time_budget = 0.0;
  /// When set and true (e.g. by a signal handler), the search stops as for `time_budget`.
  const std::atomic<bool>* stop = nullptr;
};

/// Why a search ended before N with no disagreement found.
enum class ThresholdStop {
  kNone,         ///< it did not stop early
  kEvaluations,  ///< max_evaluations
  kTimeBudget,   ///< time_budget
  kSignal,       ///< the `stop` flag
};

/// "none", "evaluation budget", "time budget", "signal".
const char* ThresholdStopName(ThresholdStop stop);

/// How the search covered the strings.
enum class ThresholdMethod {
  /// One-layer pairs: every sufficient statistic (far type counts per (token, residue), the
  /// τ*-suffix, T mod Δ*) of every length, i.e. every string, exactly.
  kStatistics,
  /// Two-layer pairs: every string up to exhaustive_up_to, uniform random strings beyond.
  kExhaustiveRandom,
  /// Two-layer pairs: every string as a path of first-layer nodes, evaluated or covered by a
  /// certified bound over sets of paths (docs/theory.md §11.5) up to exhaustive_up_to; beyond
  /// the path search's limits, uniform random strings (`samples_per_length`).
  kPaths,
};

/// "statistics", "exhaustive+random" or "paths".
const char* ThresholdMethodName(ThresholdMethod method);

/// The outcome of a search. A disagreement is a value, not an error.
struct ThresholdResult {
  ThresholdMethod method = ThresholdMethod::kStatistics;
  /// The joint view searched: S, Δ* = lcm of the periods, τ* = max of the localities.
  JointView view;
  /// The smallest T ≤ N with a string x, |x| = T, ‖f(x) − g(x)‖_∞ > ε among the strings
  /// checked; nullopt if none. The search stops at the end of that length.
  std::optional<std::uint64_t> first_disagreement;
  /// A string of length first_disagreement realising the largest gap seen at that length
  /// (empty if none), run-length encoded.
  std::vector<Run> witness;
  /// f and g on the witness and their gap, re-evaluated on the witness string itself.
  Vector f_witness, g_witness;
  double gap = std::numeric_limits<double>::quiet_NaN();
  /// The last length searched: first_disagreement, else N.
  std::uint64_t checked_up_to = 0;
  /// Every string of length ≤ exhaustive_up_to was checked (statistics: = checked_up_to).
  std::uint64_t exhaustive_up_to = 0;
  /// Every string of every length ≤ checked_up_to was checked (so first_disagreement, or
  /// its absence up to N, is exact).
  bool exhaustive = false;
  /// [T − 1]: the largest ‖f(x) − g(x)‖_∞ over the strings *evaluated* at length T: a lower
  /// bound on that length's largest gap, attained by a string (NaN: none evaluated there, or
  /// T < min_length). Exact where every statistic of T was evaluated and at T*.
  std::vector<double> max_gap_per_length;
  /// [T − 1]: a certified upper bound on the largest gap over every string of length T: the
  /// largest of max_gap_per_length[T − 1] and the bounds of the pruned cells that hold a
  /// statistic of length T (docs/theory.md §11.4); equal to the lower bound where T was
  /// enumerated. NaN where no bound is known (two-layer lengths searched at random, T <
  /// min_length).
  std::vector<double> gap_upper_per_length;
  /// The first length searched (options.min_length).
  std::uint64_t min_length = 1;
  /// Statistics (one-layer) or strings (two-layer) evaluated.
  std::uint64_t evaluations = 0;
  /// Random strings a length beyond exhaustive_up_to (0 for kStatistics).
  std::uint64_t samples_per_length = 0;

  // How the one-layer statistics were covered (kStatistics). Every statistic of every length
  // ≤ checked_up_to is either evaluated or inside a cell whose certified bound is ≤ ε (or, at
  // first_disagreement, ≤ the largest gap found there):
  bool pruned = false;  ///< the pruned search ran (options.prune)
  /// The period of the statistics searched: Δ*, or its smallest divisor Δ' such that both
  /// models' input vectors depend on the residue only mod Δ' (the statistic counts below are
  /// of that view).
  int search_period = 0;
  std::uint64_t statistics_total = 0;      ///< Σ_{T ≤ checked_up_to} #statistics(T), saturating
  std::uint64_t statistics_evaluated = 0;  ///< evaluated one by one
  std::uint64_t statistics_pruned = 0;     ///< total − evaluated: covered by a cell's bound
  std::uint64_t statistics_pruned_counted = 0;  ///< counted cell by cell (options.count_pruned)
  /// Statistics whose double gap lay within the rounding bound of ε + tolerance, or with an
  /// attention decision rounding could flip, decided in 50 digits (docs/theory.md §8.7).
  std::uint64_t statistics_precise = 0;
  std::uint64_t cells = 0, cells_pruned = 0;
  double max_pruned_bound = 0.0;  ///< the largest certified bound of a pruned cell

  // How the two-layer path search covered the strings (kPaths): every string of every length
  // ≤ exhaustive_up_to was evaluated or lies in a set of paths whose certified bound is ≤ ε (at
  // first_disagreement: ≤ the largest gap found there).
  struct PathSearch {
    std::uint64_t nodes = 0;  ///< nodes of the DAG built (layers 1 … the last searched)
    std::uint64_t enumerated_up_to = 0;  ///< lengths whose every string was evaluated one by one
    std::uint64_t sets = 0;              ///< sets of paths bounded or enumerated
    std::uint64_t sets_pruned = 0;       ///< sets whose certified bound settled them
    std::uint64_t leaves = 0;            ///< sets enumerated path by path
    std::uint64_t programs = 0;          ///< dynamic programmes over sets of paths
    std::uint64_t limit_length = 0;      ///< the longest N within the path search's limits
  } paths;
  /// false when a budget or a signal stopped the search before N (no verdict beyond
  /// checked_up_to; `stopped` says why).
  bool complete = true;
  ThresholdStop stopped = ThresholdStop::kNone;
  int threads = 1;  ///< threads used (results do not depend on it)

  /// The witness re-evaluated in 50 digits (eval/precise.h).
  struct Recheck {
    /// kAgrees: the precise gap exceeds ε (written "confirmed", kRecheckClaimNames).
    RecheckStatus status = RecheckStatus::kNone;
    std::string precise_gap;  ///< decimal text, 40 digits
    std::string note;
  } recheck;
};

/// Number of sufficient statistics of strings of length T in the view (S, Δ, τ):
///   m = min(T, τ+1) suffix tokens, F = T − m far positions, N_r = #{1 ≤ j ≤ F : j ≡ r (Δ)},
///   #statistics(T) = S^m · Π_r C(N_r + S − 1, S − 1)
/// (the far positions of residue r are split among the S tokens). Saturates at 2^62.
std::uint64_t CountStatistics(int alphabet, int period, int locality, std::uint64_t length);

/// The verdict rule: gap > ε + kThresholdGapTolerance·max(1, ‖f‖_∞, ‖g‖_∞).
bool ThresholdDisagrees(double gap, double epsilon, const Vector& f, const Vector& g);

/// The first disagreement of f and g up to options.max_length (docs/theory.md §7.1: "agreement
/// within ε on every string of length ≤ N, exhaustively checked where the model class allows
/// it, otherwise searched").
///
/// One-layer pairs (any attention modes): f(x) depends only on x's statistics in its own view
/// (docs/theory.md §2.2), hence on the statistics in the joint view, which are enumerated in order
/// of length: #statistics(T) evaluations instead of S^T. Every statistic is realised by a
/// string, so the search is exact; the witness is checked to have those statistics and is
/// re-evaluated as a string. Pairs with a two-layer model: every string up to T_ex, then
/// `samples_per_length` uniform strings of each length, drawn from
/// StreamSeed(seed, "threshold", T) (Boost.Random), so the result is a function of the seed.
///
/// InputError (one line naming the limit) for: different alphabets or output counts, ε < 0
/// or non-finite, N outside [1, kThresholdMaxLength], a model deeper than two layers, and any
/// limit above; nothing is evaluated before every check has passed.
ThresholdResult FindThreshold(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options);

}  // namespace ltsim
