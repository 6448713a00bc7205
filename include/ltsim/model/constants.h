// Constants computed from the weights (docs/model.md §4).
#pragma once

#include <string>
#include <vector>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// Regime of a first-layer head under `log` bias scaling (docs/model.md §4.6).
enum class HeadRegime { kTokenDominated, kBalanced, kPositionDominated };

/// "token-dominated", "balanced" or "position-dominated".
const char* HeadRegimeName(HeadRegime regime);

/// γ(f), Section 4: the smallest positive gap (> θ) between two logits a query type can
/// see — far keys of every type, suffix keys with φ[t], the query with φ[0] — minimised
/// over heads and query types (s, r) of the first layer. +∞ when no set has a gap; NaN
/// (not computed) when LogitMarginWork exceeds kMaxLogitMarginWork.
double LogitMargin(const Transformer& model);

/// The logits γ(f) sorts: heads × query types × |𝒜| = H·D·(D + S·τ + 1), quadratic in D.
double LogitMarginWork(const Transformer& model);
/// γ(f) is computed only up to this many logits (about a second; docs/formats.md §6.1):
/// an S = 65535 model has 2.6·10^11 of them and reports γ as not computed.
inline constexpr double kMaxLogitMarginWork = 1 << 27;

/// T_hard = 2^(p/γ(f)) for a model whose first layer is `finite` with p bits (+∞ if it
/// overflows); 1 when γ = ∞. Only meaningful for `finite` layers: NaN otherwise. From T_hard on
/// every key more than θ below the maximum is dropped; `finite` then equals its hardmax twin
/// when ν(f) = 0, and is within FiniteHardmaxDistance of it otherwise (NearTieSpread).
double HardmaxLength(const Transformer& model);

/// log₂ T_hard = p/γ, finite even when T_hard overflows a double; NaN if not `finite`.
double Log2HardmaxLength(const Transformer& model);

/// ν(f), the near-tie spread: the largest difference in (0, θ] between two elements of one set
/// 𝒜_h(y, r) of LogitMargin (first layer); 0 when every such difference is 0 or above θ, NaN
/// when LogitMarginWork exceeds kMaxLogitMarginWork. Hardmax treats such keys as ties (weight 1);
/// `finite` gives them i^(−d) ∈ [i^(−ν), 1], so it equals its hardmax twin past T_hard only when
/// ν = 0 (docs/model.md §4.3, docs/theory.md §2.6).
double NearTieSpread(const Transformer& model);

/// log₂ T_split = p/ν: from T_split = 2^(p/ν) on, `finite` may drop a key that hardmax keeps
/// (+∞ when ν = 0, NaN if the first layer is not `finite` or ν is not computed).
double Log2SplitLength(const Transformer& model);

/// Whether a query position T lies in the window T_hard ≤ T < T_split of a `finite` first layer
/// with `none` bias scaling, decided with the exact rounding rule (FiniteKeyDropped): every key
/// more than θ below the maximum is dropped at T and every key within θ kept. False for other
/// modes and when γ or ν is not computed.
bool InFiniteHardmaxWindow(const Transformer& model, double length);

/// The bound of docs/theory.md §2.6 on the ℓ1 distance between a `finite` first-layer head's
/// attention and its hardmax twin's at a query position T ≥ 1, for T_hard ≤ T < T_split:
/// 2·tanh(ν·ln T/4) (0 when ν = 0). +∞ outside that window (T < T_hard, T ≥ T_split, `log` bias
/// scaling, a margin not computed), NaN when the first layer is not `finite`.
double FiniteHardmaxDistance(const Transformer& model, double length);

/// L(f) = ‖W‖·(1 + ‖B‖‖A‖)·Σ_h ‖O_h‖·R with R = max_{s,r} ‖E_s + P_r‖ (spectral norms),
/// the Lipschitz constant of a one-layer model with respect to the per-head attention
/// distributions in ℓ1: ‖f(x) − f(z)‖_∞ ≤ L(f)·max_h ‖α_h(x) − α_h(z)‖₁. NaN if depth ≠ 1.
double LipschitzConstant(const Transformer& model);

/// γ_pos(f), Section 5: min over first-layer heads of (largest − second largest) of the set
/// {φ_h[t]} ∪ {1}; +∞ when every such set has one element (or there are no heads).
double PositionalMargin(const Transformer& model);

/// Regime of each first-layer head: by max_t φ_h[t] against 1.
std::vector<HeadRegime> HeadRegimes(const Transformer& model);

/// ln C(f), our explicit complexity of Definition 5.1's shape (docs/model.md §4.7; the paper's
/// exact polynomials are not available), for models of one or two layers (NaN deeper):
///   R₀ = max_{s,r} ‖E_s + P_r‖,  R₁ = (R₀(1 + Σ_{h∈1} ‖O_h‖)(1 + ‖B₁‖‖A₁‖) + ‖B₁‖‖b₁‖),
///   ln C(f) = Σ_{h∈1} (‖M_h‖R₀² + ‖O_h‖R₀ + max_t |φ_h[t]|) + max_{h∈2} ‖M_h‖R₁²
///             + ln((1 + ‖W‖)(1 + Σ_{h∈2} ‖O_h‖)(1 + ‖B₂‖‖A₂‖)(1 + R₁)),
/// exponential in the first layer's norms and the second layer's ‖M‖ (they bound the logit
/// ranges, hence how far attention can concentrate) and polynomial in the rest. For one
/// layer: the first-layer sum plus ln((1 + ‖W‖)(1 + ‖B₁‖‖A₁‖)(1 + R₀)).
/// Empirical constants are always stated relative to this formula.
double LogComplexity(const Transformer& model);

/// C(f) = exp(LogComplexity) (+∞ when it overflows a double).
double Complexity(const Transformer& model);

/// Lipschitz bound of the map u ↦ W·(u + B·ReLU(A·u + b)) + c of the last layer's MLP (identity
/// without one) and the readout, from ℓ2 to ℓ∞: max_k [‖W_k‖ + min(‖W_k‖‖B‖‖A‖,
/// Σ_j |W_k·B_j|·‖A_j‖)] (W_k a readout row, B_j a column of B, A_j a row of A; ReLU is
/// 1-Lipschitz coordinate by coordinate). The Ω of docs/theory.md §4.7.
double ReadoutLipschitz(const Transformer& model);

/// Spectral norm (largest singular value) of a matrix; 0 for an empty one.
double SpectralNorm(const Matrix& m);

}  // namespace ltsim
