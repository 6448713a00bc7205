// Parameter sweeps of the needed length against Theorem 4.1's exponents (theory.md §2, §7).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/bounds/registry.h"
#include "ltsim/fuzz/input_generator.h"
#include "ltsim/fuzz/model_generator.h"

namespace ltsim {

/// What a sweep varies and how each point is measured.
struct SweepOptions {
  std::string parameter;       ///< scale, alphabet, period, locality or eps
  std::vector<double> values;  ///< the grid of the parameter (positive: the fit is log-log)
  double eps = 0.01;           ///< ε of the needed length (unless parameter == eps)
  int pairs = 4;               ///< K random pairs per point
  std::uint64_t seed = 0;
  std::uint64_t x_length = 20000;  ///< |x|, fixed over the sweep
  std::uint64_t fixed_n = 500;     ///< n at which sim is also recorded
  InputKind input = InputKind::kStress;
  double delta = 0.01;  ///< perturbation of g = f + δ·N(0, 1)
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
  int index = 0;              ///< k in 0..K−1
  std::uint64_t seed = 0;     ///< StreamSeed(seed, "sweep", point·K + k) (point 0 for eps)
  std::uint64_t needed = 0;   ///< smallest grid n with max(sim_f, sim_g) ≤ ε (|x| if none)
  bool reached = false;       ///< whether some n < |x| met ε
  double sim_at_fixed = 0.0;  ///< max(sim_f, sim_g) at n = fixed_n
  ConstantMap constants;      ///< the pair's constants (registry.h) with eps, n, T
};

/// One grid point: the worst case over its K pairs.
struct SweepPoint {
  double value = 0.0;         ///< the parameter
  double fit_x = 0.0;         ///< the regressor: the value, or for `scale` the largest L
  std::uint64_t needed = 0;   ///< max over pairs of the needed length
  int witness = 0;            ///< the pair attaining it
  double sim_at_fixed = 0.0;  ///< max over pairs
  double bound = 0.0;         ///< thm4.1-length at the point's S, Δ, τ, ε and largest L
  double ours = 0.0;          ///< frequency-length at the same constants
  double ratio = 0.0;         ///< needed / bound (NaN when every pair has L = 0)
  std::vector<SweepPair> pairs;
};

/// Least-squares fit log y = a + b·log x with a two-sided confidence interval on b from
/// Student's t with m − 2 degrees of freedom (NaN bounds when m < 3).
struct ExponentFit {
  double slope = 0.0, intercept = 0.0;
  double lower = 0.0, upper = 0.0;  ///< the interval on the slope
  double standard_error = 0.0;
  int points = 0;
};

/// Everything a sweep reports.
struct SweepResult {
  SweepOptions options;
  std::vector<SweepPoint> points;
  ExponentFit fit;
  double paper_exponent = 0.0;      ///< Thm 4.1's second term in this parameter
  double empirical_constant = 0.0;  ///< max over points of needed / bound (NaN ratios skipped)
  int constant_point = 0;           ///< the point attaining it
};

/// The parameters a sweep accepts, in order.
const std::vector<std::string>& SweepParameters();

/// Thm 4.1's exponent of the parameter in L²Δ⁷|Σ|⁶τ²/ε²: scale (via L) 2, period 7,
/// alphabet 6, locality 2, eps −2. InputError for an unknown parameter.
double PaperExponent(const std::string& parameter);

/// Fits log y against log x (all positive) at confidence `level` (theory.md §7: is the
/// measured exponent the paper's?). Needs ≥ 2 points with distinct x.
ExponentFit FitExponent(const std::vector<double>& x, const std::vector<double>& y,
                        double level = 0.95);

/// The smallest n on the geometric grid n_k = ⌈n₀·2^(k/4)⌉ (n₀ = τ + 2, capped at |x|)
/// at which the `frequency` simulator gives max(sim_f, sim_g) ≤ ε, by binary search (it
/// assumes the condition is monotone in n, which the construction's η ≤ 2(|K| + m)/Θ
/// suggests but does not guarantee). n = |x| when no smaller grid n meets ε.
std::uint64_t NeededLength(const Transformer& f, const Transformer& g, const Source& x, double eps,
                           bool* reached);

/// Runs the sweep: per point K seeded one-layer hardmax pairs (perturbed, grid weights) and
/// inputs, their needed lengths, the worst case, the bound and the fit. Pure in the options.
/// InputError for bad options (unknown parameter, fewer than 2 values, non-positive values).
SweepResult RunSweep(const SweepOptions& options);

}  // namespace ltsim
