// The expected gap E‖f(x) − g(x)‖_∞ of two one-layer models under the Dirichlet prior of
// Theorem 4.2, at every length, by an exact sum over sufficient statistics (docs/theory.md §13).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ltsim/model/joint_view.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// N ≤ kAverageMaxLength, and (S + 2)·(N + 1) ≤ kAverageMaxTableEntries: the log tables of
/// docs/theory.md §13.1 hold that many doubles.
inline constexpr std::uint64_t kAverageMaxLength = 1'000'000;
inline constexpr std::uint64_t kAverageMaxTableEntries = std::uint64_t{1} << 25;
/// Contexts Δ*·S^(τ*+1) ≤ kAverageMaxContexts (each holds one table per model).
inline constexpr std::uint64_t kAverageMaxContexts = std::uint64_t{1} << 16;

/// What to compute.
struct AverageOptions {
  /// α_s > 0, one per token of the joint alphabet: π ~ Dir(α) once per string, then the
  /// tokens i.i.d. from π.
  std::vector<double> alphas;
  std::uint64_t max_length = 0;   ///< N ≥ 1: lengths 1 … N
  std::optional<double> epsilon;  ///< ε ≥ 0: first_average_disagreement is searched when set
  std::uint64_t seed = 1;         ///< printed; the sum uses no randomness
  int threads = 0;                ///< oneTBB threads (0: every core); results never depend on it
  /// Statistics evaluated one by one, summed over lengths in increasing order: the first length
  /// whose statistics would pass this budget, and every longer one, is bracketed per context
  /// by the certified range of the gap over the context (docs/theory.md §13.4) instead.
  std::uint64_t max_statistics = 200'000'000;
  /// Called now and then: lengths done, lengths in all.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

struct AverageResult {
  JointView view;
  /// [T − 1]: a lower and an upper bound on E‖f(x) − g(x)‖_∞ over strings of length T, equal
  /// (the exact sum, up to the double rounding of docs/theory.md §13.5) where
  /// exact_per_length[T − 1] is true.
  std::vector<double> lower, upper;
  std::vector<bool> exact_per_length;
  /// [T − 1]: Σ of the probabilities of the evaluated statistics (1 up to rounding on exact
  /// lengths; its distance from 1 is a measured check of the pmf, not a bound).
  std::vector<double> mass;
  double max_mass_error = 0.0;  ///< max over exact lengths of |mass − 1|
  /// The longest T with every length ≤ T exact (0: none).
  std::uint64_t exact_up_to = 0;
  std::uint64_t statistics_evaluated = 0;
  std::uint64_t statistics_pruned = 0;  ///< in bracketed lengths (saturating)
  /// With ε: the least T with lower > ε + tolerance and upper ≤ ε + tolerance at every shorter
  /// length (nullopt: none, or undecided); `decided` is false when some upper bound passes
  /// ε + tolerance while its lower bound does not, before any decided length.
  std::optional<std::uint64_t> first_average_disagreement;
  bool decided = true;
  double seconds = 0.0;
  int threads = 1;
};

/// The Dirichlet-multinomial expectation of docs/theory.md §13 for a one-layer pair (every
/// attention mode, both bias scalings). InputError for two-layer models ("not exact for two
/// layers"), different alphabets or outputs, and over the threshold's type limits or
/// kAverageMaxContexts; OptionError (alphas, max_length, epsilon, max_statistics) for bad
/// options. Everything is checked before any evaluation.
AverageResult AverageGap(const Transformer& f, const Transformer& g, const AverageOptions& options);

}  // namespace ltsim
