// The positional-margin family (docs/tightness.md §5): alphabet {0, 1}, Δ = 1, τ = 0, one
// softmax head with `log` bias scaling, M = 0 and self bias φ = 1 − γ_pos (token-dominated: the
// set {φ, 1} of docs/model.md §4.5 has margin γ_pos). The head copies the token one-hots, so
// with query token 0 the attended mass on token 0 is u = q(T) + (1 − q(T))·n₀/(T − 1) ≥ q(T) (n₀
// the earlier 0s), with equality for x = 1^(T−1) 0. One MLP unit: f = ReLU(θ − a·u −
// 2θ·[x_T = 1]), θ = κε; g = the same model with a zero readout. So |f − g| > ε iff x_T = 0 and
// a·u < (κ − 1)ε (up to FindThreshold's 1e-9 tolerance, which the builder applies), first
// reachable when q(T) < δ = (κ − 1)ε/a:
//   T* = min{T : a·q(T) < (κ − 1)ε} ≈ ((1 − δ)/δ)^(1/γ_pos),
// q being decreasing in T for φ < 1; sup |f − g| = θ (approached as T → ∞). InputError for
// γ_pos ∉ (0, 1), slope a ≤ 0, ε ∉ (0, 1), κ ∉ (1, 10], δ ∉ (0, 1/2], a closed form beyond
// T = 10^9, or a deciding comparison within 10^(−12) of the boundary (rounding could move T*
// there).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"

namespace ltsim {

double SelfShare(double phi, std::uint64_t length) {
  if (length <= 1) return 1.0;
  const double t = static_cast<double>(length);
  // The query's logit φ·ln T is the maximum (φ > 0): its weight is 1, every other key's
  // exp(0 − φ·ln T).
  return 1 / (1 + (t - 1) * std::exp(-phi * std::log(t)));
}

namespace construct {
namespace {

FamilyMember BuildPositionalMargin(const FamilyValues& v) {
  const double gamma = Get(v, "gamma-pos"), slope = Get(v, "slope"), eps = Get(v, "eps"),
               height = Get(v, "height");
  const double theta = height * eps, level = (height - 1) * eps, delta = level / slope;
  if (!(delta > 0 && delta <= 0.5))
    throw InputError(
        "positional-margin family: (height - 1)·eps/slope must be in (0, 1/2] (raise the slope)");
  const double phi = 1 - gamma;
  // FindThreshold's rule (ThresholdDisagrees): the gap θ − a·q of x = 1^(T−1) 0 against
  // ε + kVerdictTolerance·max(1, ‖f‖, ‖g‖), with f = the gap, g = 0.
  const auto margin = [&](std::uint64_t t) {
    const double gap = theta - slope * SelfShare(phi, t);
    return gap - (eps + kVerdictTolerance * std::max(1.0, std::abs(gap)));
  };
  const auto disagrees = [&](std::uint64_t t) { return margin(t) > 0; };
  // q is decreasing in T for φ < 1 ((T − 1)·T^(−φ) increases): bisect for the first T.
  constexpr std::uint64_t kLargest = 1'000'000'000;
  if (!disagrees(kLargest))
    throw InputError("positional-margin family: T* is beyond 10^9 (raise gamma_pos)");
  std::uint64_t lo = 1, hi = kLargest;  // disagrees(lo) is false (q(1) = 1 > δ), (hi) true
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (disagrees(mid) ? hi : lo) = mid;
  }
  // The evaluators' u and this q agree to rounding (~1e-15): refuse a deciding comparison
  // closer than 1e-12 to the boundary (q moves by ≈ γ·q/T ≥ 1e-8 a step up to T = 10^6).
  for (std::uint64_t t : {lo, hi})
    if (std::abs(margin(t)) <= 1e-12)
      throw InputError(
          "positional-margin family: a statistic lies within 1e-12 of the boundary a·u = "
          "(height - 1)·eps (move the slope)");
  // Dimensions: tokens 0, 1; attended masses of tokens 0, 1 at 2, 3; the unit's output 4.
  const int d = 5;
  Transformer m = Frame(2, d, 1, 0);
  m.embedding(0, 0) = 1;
  m.embedding(1, 1) = 1;
  Layer layer;
  layer.attention = Attention::kSoftmax;
  layer.bias_scaling = BiasScaling::kLog;
  Head head;
  head.qk = Matrix::Zero(d, d);
  head.ov = Matrix::Zero(d, d);
  head.ov(2, 0) = 1;
  head.ov(3, 1) = 1;
  head.bias = Vector::Constant(1, phi);
  layer.heads.push_back(head);
  layer.mlp = QueryGatedUnit(d, 2, slope, theta, 4);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_bias = Vector::Zero(1);
  FamilyMember p;
  p.family = "positional-margin";
  const ZeroReadoutPair pair = MakeZeroReadoutPair(m, 4);
  p.f = pair.f;
  p.g = pair.g;
  p.f.name = "positional-margin f";
  p.g.name = "positional-margin g (zero readout)";
  p.eps = eps;
  p.first_disagreement = hi;
  p.closed_form = "min{T : a·q(T) < (κ − 1)ε}, q(T) = 1/(1 + (T − 1)·T^(γ_pos − 1))";
  p.growth = "((1 − δ)/δ)^(1/γ_pos), δ = (κ − 1)ε/a";
  p.gap_at_first_disagreement = std::numeric_limits<double>::quiet_NaN();
  p.sup_gap = theta;
  const std::string meta =
      "{\"family\": \"positional-margin\", \"gamma_pos\": " + std::to_string(gamma) +
      ", \"slope\": " + std::to_string(slope) + ", \"eps\": " + std::to_string(eps) +
      ", \"height\": " + std::to_string(height) + "}";
  p.f.meta_json = p.g.meta_json = meta;
  p.semantics =
      "softmax attention with log bias scaling (the self bias phi·ln i, phi = 1 - gamma_pos, "
      "docs/model.md §3), positions 1-based, the query among the keys; a one-layer pair read as "
      "a two-layer model whose second layer is the identity (one head with M = O = 0, no MLP); "
      "an ℓ∞ gap > ε on the readout";
  return p;
}

}  // namespace

Family PositionalMarginFamily() {
  return {
      "positional-margin",
      "one softmax head with log bias scaling and self bias 1 − γ_pos: the query's share "
      "decays like T^(−γ_pos); one unit fires once a·share < (κ − 1)ε (tightness rows 5.2)",
      "1/γ_pos (the positional margin)",
      {{"gamma-pos", 0.5, 1e-9, 1.0, false, "γ_pos: the positional margin, in (0, 1)", kClosed,
        kOpen},
       {"slope", 1.0, 1e-9, 1e12, false, "a: the unit's slope on the query's share"},
       {"eps", 0.05, 1e-9, 1.0, false, "ε of the first disagreement, in (0, 1)", kClosed, kOpen},
       {"height", 3.0, 1.0, 10.0, false, "κ: sup |f − g| = κε, κ in (1, 10]", kOpen, kClosed}},
      BuildPositionalMargin,
      true};
}

}  // namespace construct
}  // namespace ltsim
