// Small one-layer pairs whose first disagreement T* is known in closed form, used as the lower
// side of `ltsim tightness` (docs/tightness.md §2 derives each T*).
#pragma once

#include <cstdint>
#include <string>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// A pair of one-layer models and what it is.
struct FamilyPair {
  Transformer f, g;
  std::string family;      ///< "bump", "margin" or "positional-margin"
  std::string semantics;   ///< the semantic assumptions its T* relies on (docs/tightness.md §2)
  double predicted = 0.0;  ///< the closed-form T* (docs/tightness.md §2), 0 when not derived
  /// Theorem 4.2's average-bump pair: lim_(T→∞) E‖f − g‖_∞ under its Dirichlet prior (the
  /// quadrature of docs/families.md, average-bump; 0 for the other families).
  double average_limit = 0.0;
};

/// The expected bump E[s·max(0, w − |p − c|)] over p ~ Beta(α, α) (docs/families.md, average-bump),
/// by tanh-sinh quadrature of the bump against the Beta(α, α) density on each side of the centre:
/// the limit of the average-bump pair's expected gap.
double AverageBumpLimit(double alpha, double slope, double half_width, double centre);

/// The average-bump pair's expected gap at length T by the direct Beta-binomial sum
/// Σ_k P(n₁ = k)·s·max(0, w − |k/T − c|), n₁ ~ BetaBinomial(T, α, α) (docs/families.md,
/// average-bump).
double AverageBumpGap(double alpha, double slope, double half_width, double centre,
                      std::uint64_t length);

/// The average-bump pair of Theorem 4.2's rows (docs/families.md, average-bump): the one-head
/// hardmax bump pair with S = 2, Δ = 1, τ = 0 (every key ties, so the head reads μ₁ = n₁/T),
/// slope s, centre c = w·(1 + offset), its half-width w solved so that the limit expected gap
/// under π ~ Dir(α, α) is height·ε (`sqrt_form` false) or height·ε^(1/2) (true: the form of
/// Theorem 4.2's conclusion). Its average first disagreement (least T with E_T > ε) exceeds
/// 1/(c + w). `predicted` is that T* by AverageBumpGap under AverageGap's rule (E_T > ε +
/// kThresholdGapTolerance·max(1, ‖f‖∞, ‖g‖∞) over the strings of length T); 0 when some E_T up
/// to it lies within 10⁻⁷·ε of that boundary, or none exceeds it up to 10⁶. InputError for α ∉
/// [0.05, 20], ε ∉ (0, 1), slope ≤ 0, height ∉ (1, 10], offset ∉ [0, 1), or a limit that no bump
/// inside [0, 1] reaches.
FamilyPair MakeAverageBumpPair(double alpha, double eps, double slope, double height, double offset,
                               bool sqrt_form = false);

/// The bump pair: one hardmax head that attends to the keys at positions ≡ 0 (mod Δ) (all keys
/// when Δ = 1; logit +1 on residue 0, zero biases over the τ+1 suffix), copies the share μ₁ of
/// token 1 among them; f = μ₁, g = μ₁ + h·tri(μ₁), tri the triangle of half-width w = 2ε/h
/// centred at c = w·(1 + offset), offset ∈ [0, 1). |f − g| > ε ⇔ |μ₁ − c| < ε/h, first
/// reachable with one token 1 among the ⌊T/Δ⌋ attended keys: T* ≈ Δ/(c + ε/h) ∝ Δ·h/ε.
/// `predicted` is the exact T* (the smallest denominator of a share in the disagreement
/// interval, in rationals, for `threshold`'s verdict), 0 where a share lies within 10⁻¹¹/h of an
/// end of that interval.
/// InputError for alphabet < 2, period < 1, locality < 0, slope ≤ 0, ε ∉ (0, 1) or a bump
/// that does not fit in [0, 1].
FamilyPair MakeBumpPair(int alphabet, int period, int locality, double slope, double eps,
                        double offset);

/// The margin pair: f and g use `finite` p-bit attention; one head gives token 0 logit 0 and
/// token 1 logit −γ (f) or −γ(1 + η) (g), and both read the attention share of token 1.
/// Below T_hard(g) = 2^(p/(γ(1+η))) both weights survive and differ by at most a factor
/// T^(γη); from T_hard(g) on g drops token 1 while f keeps it (weight ≈ 2^(−p)), so with
/// one 0 and T − 1 ones the gap is ≥ 1/2 once γ ≤ 0.8: T* = ⌈2^(p/(γ(1+η)))⌉ for ε < 1/2
/// (decided by the evaluators' exact rule, FiniteDropLength). `predicted` is 0 when no integer
/// lies in [T_hard(g), T_hard(f)) or f's share there is not above 1/2: no closed form then.
/// InputError for γ ∉ (0, 0.8], bits ∉ [1, 30], η ∉ (0, 0.1].
FamilyPair MakeMarginPair(double margin, int bits, double eta);

/// The query's share q(T) = 1/(1 + (T − 1)·T^(−φ)) of a softmax head under `log` bias scaling
/// whose only logit term is the self bias φ·ln T (the other T − 1 keys have logit 0), computed
/// as the evaluators do (weights exp(a − a*) relative to the query's). q(1) = 1.
double SelfShare(double phi, std::uint64_t length);

/// The positional-margin pair (docs/tightness.md §5): alphabet {0, 1}, Δ = 1, τ = 0, one
/// softmax head with `log` bias scaling, M = 0 and self bias φ = 1 − γ_pos (token-dominated:
/// the set {φ, 1} of docs/model.md §4.5 has margin γ_pos). The head copies the token one-hots,
/// so with query token 0 the attended mass on token 0 is u = q(T) + (1 − q(T))·n₀/(T − 1) ≥ q(T)
/// (n₀ the earlier 0s), with equality for x = 1^(T−1) 0. One MLP unit: f = ReLU(θ − a·u −
/// 2θ·[x_T = 1]), θ = κε; g = the same model with a zero readout. So |f − g| > ε iff x_T = 0
/// and a·u < (κ − 1)ε (up to FindThreshold's 1e-9 tolerance, which the builder applies), first
/// reachable when q(T) < δ = (κ − 1)ε/a:
///   T* = min{T : a·q(T) < (κ − 1)ε} ≈ ((1 − δ)/δ)^(1/γ_pos),
/// q being decreasing in T for φ < 1; sup |f − g| = θ (approached as T → ∞). InputError for
/// γ_pos ∉ (0, 1), slope a ≤ 0, ε ∉ (0, 1), κ ∉ (1, 10], δ ∉ (0, 1/2], a closed form beyond
/// T = 10^9, or a deciding comparison within 10^(−12) of the boundary (rounding could move T*
/// there).
FamilyPair MakePositionalMarginPair(double positional_margin, double slope, double eps,
                                    double height);

/// A two-layer pair for Theorem 5.2's attention-norm and positional-margin rows (docs/tightness.md
/// §5): alphabet {0, 1}, Δ = 1, τ = 0. Layer 1 (softmax, `log` scaling): one head with
/// M = norm·e₀e₀ᵀ (a key 0 seen from a query 0 has content logit `norm`, every other pair 0: the
/// first layer's attention norm is ‖M‖ = norm) and self bias φ = 1 − γ_pos (token-dominated,
/// margin γ_pos), copying the token one-hots. Layer 2 (softmax, no scaling): one head with M = 0
/// and self bias ln(10^5), so up to T ≈ 10^5 it reads mostly the last position's first-layer
/// output, carried to a new coordinate. One MLP unit as in MakePositionalMarginPair reads that
/// coordinate u: f = ReLU(θ − a·u − 2θ·[x_T = 1]), θ = κε; g = the same model with a zero
/// readout. So f and g differ by more than ε once a·u < (κ − 1)ε, as the one-layer pair, with
/// u ≈ the first layer's share of the query, about e^(norm)·T^(−γ_pos). Its first disagreement
/// is not derived (`predicted` is 0). InputError for γ_pos ∉ (0, 1), norm < 0, slope ≤ 0,
/// ε ∉ (0, 1), κ ∉ (1, 10].
FamilyPair MakeTwoLayerMarginPair(double positional_margin, double norm, double slope, double eps,
                                  double height);

/// The two-layer model a one-layer pair stands for in Theorem 5.2's rows: `model` with a second
/// softmax layer of one head whose M and O are zero and no MLP. That layer adds O·(attention) =
/// 0 to the residual stream, so the function is the same (tested); its C(f) is the two-layer
/// formula of docs/model.md §4.7. (A layer needs at least one head in a model file.)
Transformer WithIdentitySecondLayer(const Transformer& model);

}  // namespace ltsim
