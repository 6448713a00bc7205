// High-precision evaluation of limit transformers, for re-checking claimed counterexamples
// (docs/design.md §5): the semantics of docs/model.md §3 with every step in 50 digits.
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// The high-precision real: a binary float with 50 decimal digits (168-bit mantissa, about
/// 3.2× a double's 53 bits). Why 50: a sum of T ≤ 10^10 terms loses at most log₂ T ≈ 34 bits,
/// and the exp/log of a logit in [−10^4, 10^4] another ~14, so results keep ≥ 100 correct
/// bits (≥ 30 digits) — far below the 1e-12 slack of every verdict, so a verdict that flips
/// between double and this type is a double rounding artefact. Model weights (doubles)
/// convert exactly. Expression templates are off (cpp_bin_float_50 is et_off), so it is safe
/// with `auto`.
using PreciseReal = boost::multiprecision::cpp_bin_float_50;
/// Decimal digits of PreciseReal (what a recheck records as `digits`).
inline constexpr int kPreciseDigits = 50;
/// An output or activation vector in PreciseReal.
using PreciseVector = std::vector<PreciseReal>;

/// Longest x the two-layer high-precision pass accepts. It computes y¹_i at every position
/// in 50 digits: measured 4,000–8,000 tokens/s (softmax–hardmax) for S = 4, d = 6, Δ = 3, τ = 2,
/// three heads a layer with MLPs (Release, one core), so at 20,000 tokens — the longest x a
/// default campaign draws, and the reference evaluator's limit — one evaluation takes a few
/// seconds. One-layer models have no limit (type counts).
inline constexpr std::uint64_t kPreciseTwoLayerLimit = 20000;

/// f(x) of a one-layer model from x's type counts (docs/theory.md §2.2), in PreciseReal: the same
/// rules as EvaluateOneLayer / layer_math.h (softmax exp(a − a*); hardmax a ≥ a* − θ; finite
/// w = 2^(log₂ i·(a − a*)) dropped when log₂ w ≤ −p; β(i) = ln i for `log`). Any T. Every
/// first-layer hardmax or finite decision within 2^(−140) of the logit scale of its boundary is
/// taken for the exact (rational) logits of the weights (docs/theory.md §8.7), so the decisions
/// are those of the exact model.
PreciseVector EvaluatePreciseOneLayer(const Transformer& model, const TypeCounts& counts);

/// The attention of every first-layer head at position T in PreciseReal, grouped like
/// HeadAttention: far[κ] (count × per-key weight) and suffix[t]; they sum to 1.
struct PreciseHeadAttention {
  std::vector<PreciseReal> far;
  std::vector<PreciseReal> suffix;
};
std::vector<PreciseHeadAttention> PreciseOneLayerAttention(const Transformer& model,
                                                           const TypeCounts& counts);

/// max_h ‖α_h(x) − α_h(z)‖₁ in PreciseReal: AttentionDistance (the η of docs/theory.md §2.3).
PreciseReal PreciseAttentionDistance(const Transformer& model, const TypeCounts& x,
                                     const TypeCounts& z);

/// f(x) in PreciseReal for a one- or two-layer model. One layer: one counting pass, any T.
/// Two layers: one streaming pass computing y¹_i at every position from the running far type
/// counts and the τ-suffix (docs/theory.md §4.3), then the second layer at T; InputError when
/// T > kPreciseTwoLayerLimit or for deeper models (the message names the source). Tokens
/// outside the alphabet are an InputError naming the position.
PreciseVector EvaluatePrecise(const Transformer& model, const Source& x);

/// Whether EvaluatePrecise accepts (model, T); otherwise `reason` says why.
bool PreciseEvaluable(const Transformer& model, std::uint64_t length, std::string* reason);

/// Each entry rounded to the nearest double.
std::vector<double> ToDouble(const PreciseVector& v);

/// ‖a − b‖_∞ in PreciseReal.
PreciseReal PreciseSupDistance(const PreciseVector& a, const PreciseVector& b);

/// A PreciseReal as decimal text with `digits` significant digits (scientific), exact
/// enough to read back: for witness files, where a JSON double would round it.
std::string PreciseText(const PreciseReal& value, int digits = 40);

/// a ≤ b + 1e-12·(1 + |a| + |b|) in PreciseReal: LessOrClose's verdict slack (sandwich.h),
/// so a recheck applies the same rule as the double verdict, only to exact-er numbers.
bool PreciseLessOrClose(const PreciseReal& a, const PreciseReal& b);

}  // namespace ltsim
