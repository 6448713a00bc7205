// The proven length of `balanced-blocks` for two-layer pairs of the class of docs/theory.md
// §4.8: the a-priori constants computed from the weights and the bound B(n, ℓ) they give.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "ltsim/bounds/registry.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// The constants of one model in the bound of docs/theory.md §4.8 (NaN with `reason` when the
/// model is outside the class). They are added to ModelConstants under the names in brackets.
struct TwoLayerLengthConstants {
  std::string reason;           ///< why the model is outside the class ("" inside)
  double omega = kNaNLength;    ///< Ω = ReadoutLipschitz (docs/theory.md §4.7)  [tl_omega]
  double lambda1 = kNaNLength;  ///< Λ₁ = Lip(MLP₁)·Σ_h r_h  [tl_lambda1]
  /// Λ_T = Lip(MLP₁)·Σ_{h token-dominated} r_h·e^(ρ_h) (0 without such heads)  [tl_lambda_t]
  double lambda_t = kNaNLength;
  double zeta_a = kNaNLength;      ///< a = max_h a_h in ζ_h(i) ≤ a·i^(−γ)  [tl_zeta_a]
  double zeta_gamma = kNaNLength;  ///< γ = min_h γ_h  [tl_zeta_gamma]
  double s1 = kNaNLength;          ///< Σ_g r^O_g·r₁·‖M_g‖ (the query's move)  [tl_s1]
  double s2 = kNaNLength;  ///< Σ_g e^(R_g)·(‖O_g‖ + 4 r^O_g Q_g) (coupled pairs)  [tl_s2]
  double s3 = kNaNLength;  ///< Σ_g 6·e^(R_g)·r^O_g (unmatched mass)  [tl_s3]
  double e2 = kNaNLength;  ///< e₂ = max(1, max e^(φ₂)): the second layer's near-key mass  [tl_e2]
  static constexpr double kNaNLength = std::numeric_limits<double>::quiet_NaN();
};

/// The constants of `model` (two layers; docs/theory.md §4.8 lists the class and each formula).
TwoLayerLengthConstants ComputeTwoLayerLengthConstants(const Transformer& model);

/// One length with the proof's parameters: z-length n, block length ℓ, the first segment's
/// share ε₀ and the segments' growth δ (both only in the proof), and the bound B at them.
struct TwoLayerPlan {
  double n = std::numeric_limits<double>::infinity();
  double block = 0, eps0 = 0, delta = 0, bound = std::numeric_limits<double>::infinity();
};

/// B(n, ℓ, ε₀, δ) of docs/theory.md §4.8 at the pair's constants (tl_* keys, S, Delta, tau):
/// for every x, ‖f(x) − f(z)‖_∞ ≤ B for each model when z = balanced-blocks(x) at target n and
/// block length ℓ (a multiple of Δ). +∞ where the proof's conditions fail; NaN outside the class.
double TwoLayerSimulationBound(const ConstantMap& c, double n, double block, double eps0,
                               double delta);

/// The smallest n (on the grid 2^(j/16)) with min over (ℓ, ε₀, δ) on their grids of B ≤ ε, and
/// those parameters; n = +∞ when none up to 10^300; NaN outside the class.
TwoLayerPlan TwoLayerLengthPlan(const ConstantMap& c);

}  // namespace ltsim
