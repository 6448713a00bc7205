// The in-context k-gram estimator and a two-layer limit transformer approximating it
// (docs/theory.md §5).
#pragma once

#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What the k-gram estimator returns when the current context x_{T−k+1..T} never occurred
/// before (docs/theory.md §5.1: the no-match case is an option).
enum class NoMatchPolicy {
  /// The uniform distribution 1/S on every token.
  kUniform,
  /// The average of e_{x_t} over the candidate positions t ∈ [k+1, T] that maximise the number
  /// of matching slots m_t (KGramSlotMatches); with a full match (m = k) this is the estimator
  /// itself. It is what a second layer with logit β·(number of matching slots) tends to as
  /// β → ∞ (after T → ∞, see MakeKGram), so the construction needs no extra part for it.
  kMostMatches,
};

/// "uniform" or "most-matches".
const char* NoMatchPolicyName(NoMatchPolicy policy);

/// Inverse of NoMatchPolicyName; throws InputError listing the valid names.
NoMatchPolicy ParseNoMatchPolicy(const std::string& name);

/// m_t = #{s ∈ 1..k : x_{t−s} = x_{T−s+1}}, the number of slots in which the window before the
/// candidate position t agrees with the current context, for t = k+1..T (1-based positions;
/// entry t−k−1 of the result). Empty when T ≤ k.
std::vector<int> KGramSlotMatches(const std::vector<Token>& x, int k);

/// The exact in-context k-gram estimator f*(x) ∈ R^S of docs/theory.md §5.1:
///   f*(x) = Σ_{t=k+1..T} 1[x_{t−k..t−1} = x_{T−k+1..T}] e_{x_t} / #matches,
/// and, when no t matches, the policy's answer. When T ≤ k there is no candidate position at
/// all and every policy returns the uniform distribution. Tokens must be < alphabet (checked).
Vector KGramEstimate(const std::vector<Token>& x, int alphabet, int k, NoMatchPolicy policy);

/// Parameters of the constructed k-gram model (MakeKGram).
struct KGramOptions {
  int alphabet = 2;  ///< S ≥ 1
  int k = 1;         ///< context length k ≥ 1 (= τ)
  /// β > 0, the second-layer logit per matching slot: the weight of a key one slot short of a
  /// full match is e^(−β) relative to a full match, and ‖M₂‖ = β enters C(f) exponentially.
  double scale = 8.0;
  NoMatchPolicy no_match = NoMatchPolicy::kMostMatches;
  /// φ[t] of first-layer head t (> 1: position-dominated). Under `log` bias scaling the key t
  /// back weighs i^φ against 1 for each of the other i − 1 keys, so the copy misses a mass
  /// δ_i = (i − 1)/(i^φ + i − 1) < i^(1−φ); γ_pos = φ − 1 (docs/theory.md §5.2).
  double copy_bias = 2.0;
  /// Adds a first-layer MLP that rounds every copied slot to an exact one-hot (clamp(4v − 2, 0,
  /// 1) per coordinate, exact whenever δ_i ≤ 1/4, i.e. for every i > t when φ = 2), removing
  /// the ~β·k/i logit error the copies otherwise leave on early keys.
  bool sharpen = false;
};

/// Largest width and second-layer MLP size MakeKGram accepts (the files stay small enough to
/// read and evaluate; the uniform policy's MLP has S^k·(S + 1) units).
inline constexpr int kKGramMaxWidth = 1024;
inline constexpr long kKGramMaxMlpUnits = 100000;

/// Throws InputError naming the option when `options` is out of range (S, k ≥ 1, β > 0,
/// φ > 1, finite numbers, width and MLP size within the limits above).
void ValidateKGramOptions(const KGramOptions& options);

/// Model width d: (k + 2)·S, plus (k + 1)·S for the uniform policy's gate.
int KGramWidth(const KGramOptions& options);

/// The two-layer limit transformer of docs/theory.md §5.2 [ours] approximating KGramEstimate with
/// the same policy. Δ = 1, τ = k, S outputs. Layer 1 (softmax, `log` bias scaling): k heads,
/// head t with M = 0 and φ[t] = copy_bias, copying the one-hot current token of the key t back
/// into slot t (γ_pos = φ − 1, position-dominated). Layer 2 (softmax, no bias): one head with
///   logit(j) = β·Σ_{t=1..k} ⟨slot t of key j, slot t−1 of the query⟩   (slot 0 = own token)
///            = β·m_j up to the copy errors,
/// whose value is the key's own token, so the output is the softmax(β·m_j)-weighted average of
/// e_{x_j}; as T → ∞ and then β → ∞ this is the `most-matches` estimator.
///
/// Accuracy (derived next to the code, checked in kgram_test.cpp): with M full matches,
///   ‖f(x) − f*(x)‖_∞ ≤ U/(M − U) + R/(M − U + R),
/// R ≲ k + Σ_{m<k} N_m e^(−β(k−m)) (N_m candidates matching m slots) the weight leaked outside
/// the full matches, U = Σ_{full matches j} min(1, βk(δ_j + δ_T)) ≈ βk·ln T/S^k the copies'
/// reweighting (0 when sharpened). So the error first falls like k(S − 1)e^(−β), then, for
/// plain copies, rises again like βk·ln T/T once β ≳ ln T (measured: minimum near β = 8 for
/// T = 2·10³..2·10⁵). The term k is the keys j ≤ k, which have no full window: their slots
/// t ≥ j hold the histogram of x_1..x_j. It is inherent to Δ = 1 without a start token: when
/// x_1 = … = x_{k+1}, every key at positions 1..k+1 looks alike to any first layer, so no
/// second layer can count key k + 1 (a candidate) and not keys 1..k.
///
/// The uniform policy adds a second-layer MLP (Λ = 2, S^k·(S + 1) units) that returns 1/S
/// exactly when every attended key misses a slot, and otherwise the attended average within
/// Λ·k·(leaked mass + copy deficit); it passes full matches only when the leaked mass is
/// below 1/(2k), i.e. β ≳ ln(2k²(S − 1)) + 2 (β = 8 covers the bundled models).
///
/// Under the project's C(f) (constants.h), ln C(f) = (k + 1)²·β + O(k) for plain copies, so
/// with ε ≈ k(S − 1)e^(−β), C(f) ≈ (k(S − 1)/ε)^((k+1)²) = ε^(−Θ(k²)), the paper's shape.
/// Sharpening multiplies ln C(f) by about 230 (S = 3, k = 2: the MLP's norms enter R₁). The model's
/// `meta` records the options.
Transformer MakeKGram(const KGramOptions& options);

}  // namespace ltsim
