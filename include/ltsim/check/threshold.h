// The first length at which two models differ by more than ε, over all strings
// (docs/theory.md §7.2).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/core/work.h"
#include "ltsim/model/transformer.h"
#include "ltsim/sim/simulator.h"

namespace ltsim {

// Limits of `ltsim threshold`, checked before any evaluation (InputError naming the limit).
// One-layer pairs, in the joint view (Δ* = lcm of the periods, τ* = max of the localities):

/// D* = S·Δ* ≤ kThresholdMaxTypes: the far counts are compositions over D* types.
inline constexpr int kThresholdMaxTypes = 64;
/// τ* ≤ kThresholdMaxLocality: each length has up to S^(τ*+1) suffixes.
inline constexpr int kThresholdMaxLocality = 10;
/// Σ_{T ≤ N} #statistics(T) ≤ kThresholdMaxStatistics (each costs one evaluation of f and g).
inline constexpr std::uint64_t kThresholdMaxStatistics = 20'000'000;
/// N = max length ≤ kThresholdMaxLength, for every pair.
inline constexpr std::uint64_t kThresholdMaxLength = 1'000'000;

// Pairs with a two-layer model (deeper models are refused):

/// Every string is checked for T = 1 … T_ex, T_ex the largest T ≤ kThresholdExhaustiveMaxLength
/// with Σ_{t ≤ T} S^t ≤ kThresholdExhaustiveStrings.
inline constexpr std::uint64_t kThresholdExhaustiveStrings = std::uint64_t{1} << 16;
inline constexpr std::uint64_t kThresholdExhaustiveMaxLength = 64;
/// Beyond T_ex: `samples_per_length` uniform random strings a length, with
/// samples · Σ_{T_ex < T ≤ N} T ≤ kThresholdMaxRandomTokens.
inline constexpr std::uint64_t kThresholdMaxRandomTokens = 100'000'000;

/// What to search.
struct ThresholdOptions {
  double epsilon = 0.0;                    ///< ε ≥ 0: disagreement is a gap > ε (strictly)
  std::uint64_t max_length = 0;            ///< N ≥ 1: lengths 1 … N are searched
  std::uint64_t seed = 1;                  ///< master seed of the random search (two layers)
  std::uint64_t samples_per_length = 100;  ///< random strings a length (two layers), ≥ 1
  /// Who computes the lengths (core/work.h; null: this process). Under MPI every rank calls
  /// FindThreshold and only the reducing rank's result is filled in.
  ItemDealer* dealer = nullptr;
};

/// How the search covered the strings.
enum class ThresholdMethod {
  /// One-layer pairs: every sufficient statistic (far type counts per (token, residue), the
  /// τ*-suffix, T mod Δ*) of every length, i.e. every string, exactly.
  kStatistics,
  /// Two-layer pairs: every string up to exhaustive_up_to, uniform random strings beyond.
  kExhaustiveRandom,
};

/// "statistics" or "exhaustive+random".
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
  /// [T − 1]: the largest ‖f(x) − g(x)‖_∞ over the strings checked at length T.
  std::vector<double> max_gap_per_length;
  /// Statistics (one-layer) or strings (two-layer) evaluated.
  std::uint64_t evaluations = 0;
  /// Random strings a length beyond exhaustive_up_to (0 for kStatistics).
  std::uint64_t samples_per_length = 0;
};

/// Number of sufficient statistics of strings of length T in the view (S, Δ, τ):
///   m = min(T, τ+1) suffix tokens, F = T − m far positions, N_r = #{1 ≤ j ≤ F : j ≡ r (Δ)},
///   #statistics(T) = S^m · Π_r C(N_r + S − 1, S − 1)
/// (the far positions of residue r are split among the S tokens). Saturates at 2^62.
std::uint64_t CountStatistics(int alphabet, int period, int locality, std::uint64_t length);

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
