// The induction family (docs/families.md): a softmax second layer reads a first-layer
// bigram detector at every position.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"

namespace ltsim::construct {
namespace {

// ---- induction: a softmax second layer reads a first-layer bigram detector at every position --
//
// Alphabet {0, 1}, Δ = 1, τ = 1. Coordinates: 0 = constant 1, 1 = [x_j = 1], 2 = [x_{j−1} = 1]
// (layer 1, hardmax: logit 1 on the previous position through φ[1] = 1, so it copies x_{j−1}
// exactly; x_0 := x_1), 3 = b_j = ReLU([x_{j−1} = 1] − [x_j = 1]) = [x_{j−1} x_j = 1 0] (layer 1's
// MLP), 4 = r = the share of the keys with b_j = 0 (layer 2, softmax: logit λ on the keys with
// b_j = 1, 0 elsewhere), 5 = the unit f = ReLU(θ·r − K·(1 − b_T)), θ = κε, K = 2θ; g = 0 (the same
// model with a zero readout). With n = n₁₀ the number of bigrams 1 0 (positions with b_j = 1),
// r = (T − n)/(T − n + n·e^λ): n₁₀ is not a function of the one-layer statistics (far keys are
// seen by their token alone), so the second layer must read the first layer's output at every
// position. This is an induction head's mechanism: the keys that match (here the bigram 1 0)
// take the attention, and the others' share decides the output.
FamilyMember BuildInduction(const FamilyValues& v) {
  const double lambda = Get(v, "norm"), eps = Get(v, "eps"), kappa = Get(v, "height");
  const double theta = kappa * eps, K = 2.0 * theta;
  const int width = 6, unit = 5;
  Transformer f = Skeleton(2, width, 1, Attention::kHardmax, 1);
  f.locality = 1;
  f.embedding(0, 0) = 1.0;
  f.embedding(1, 0) = 1.0;
  f.embedding(1, 1) = 1.0;
  Layer& first = f.layers[0];
  first.heads[0].bias = Vector::Zero(2);
  first.heads[0].bias(1) = 1.0;   // logit 1 on the previous position
  first.heads[0].ov(2, 1) = 1.0;  // copies [x = 1]
  first.mlp = OneUnit(width);     // b_j = ReLU([x_{j−1} = 1] − [x_j = 1])
  first.mlp->in(0, 2) = 1.0;
  first.mlp->in(0, 1) = -1.0;
  first.mlp->out(3, 0) = 1.0;
  Layer second;
  second.attention = Attention::kSoftmax;
  second.heads.push_back({Matrix::Zero(width, width), Matrix::Zero(width, width), Vector::Zero(2)});
  second.heads[0].qk(3, 0) = lambda;  // logit λ·b_j for every query
  second.heads[0].ov(4, 0) = 1.0;     // value 1 − b_j
  second.heads[0].ov(4, 3) = -1.0;
  second.mlp = OneUnit(width);
  second.mlp->in(0, 4) = theta;
  second.mlp->in(0, 3) = K;  // b_T, the query's own bigram, from the residual stream
  second.mlp->in_bias(0) = -K;
  second.mlp->out(unit, 0) = 1.0;
  f.layers.push_back(second);
  const ZeroReadoutPair pair = MakeZeroReadoutPair(f, unit);

  // f > 0 needs b_T = 1 (else θ·r − K ≤ −θ), hence n ≥ 1; then f = θ·r, decreasing in n, and
  // n = 1 on 0^a 1^b 0 (a + b = T − 1, b ≥ 1). So the largest gap at length T ≥ 2 is
  // θ·(T − 1)/(T − 1 + e^λ), and T* is the first T where it exceeds B = ε + 10⁻⁹·max(1, θ)
  // (the verdict of `threshold`): T − 1 > e^λ·B/(θ − B). A gap within a relative 10⁻⁶ of B at
  // T* or T* − 1 is refused: rounding, not arithmetic, would decide it.
  const long double B = static_cast<long double>(eps) + kVerdictTolerance * std::max(1.0, theta);
  const long double e = std::exp(static_cast<long double>(lambda));
  const auto gap = [&](std::uint64_t t) {
    const long double m = static_cast<long double>(t - 1);
    return static_cast<long double>(theta) * m / (m + e);
  };
  const long double m_real = e * B / (static_cast<long double>(theta) - B);
  if (!(m_real < 1e9L))
    throw InputError(fmt::format("family induction: T* is beyond 10^9 (norm {})", lambda));
  const std::uint64_t t_star = static_cast<std::uint64_t>(std::floor(m_real)) + 2;
  if (!(gap(t_star) > B * (1 + kBoundaryMargin)) ||
      (t_star > 2 && !(gap(t_star - 1) < B * (1 - kBoundaryMargin))))
    throw InputError(fmt::format(
        "family induction: the largest gap θ·(T − 1)/(T − 1 + e^λ) lies within a relative 1e-6 "
        "of eps (+ the verdict's 1e-9) at T* (norm {}, eps {}, height {}): a boundary case; "
        "change norm slightly",
        lambda, eps, kappa));
  FamilyMember member;
  member.f = pair.f;
  member.g = pair.g;
  member.f.name =
      fmt::format("family induction f (norm={}, eps={}, height={})", lambda, eps, kappa);
  member.g.name =
      fmt::format("family induction g (norm={}, eps={}, height={})", lambda, eps, kappa);
  member.eps = eps;
  member.first_disagreement = t_star;
  member.closed_form = "⌊e^λ·B/(κε − B)⌋ + 2, B = ε + 1e-9·max(1, κε)";
  member.growth = "e^λ/(κ−1)";
  member.gap_at_first_disagreement = static_cast<double>(gap(t_star));
  member.sup_gap = theta;
  return member;
}

}  // namespace

Family InductionFamily() {
  return {"induction",
          "two layers: layer 1 detects the bigram 1 0 at every position, a softmax head of layer 2 "
          "puts logit λ on those keys; one unit reads the others' share when the query ends a 1 0",
          "e^λ (the second layer's attention norm)",
          {{"norm", 4.0, 0.0, 20.0, false, "λ: the second layer's logit on the matching keys"},
           EpsParameter(),
           {"height", 3.0, 1.5, 100.0, false, "κ: f − g approaches κε at long lengths"}},
          BuildInduction};
}

}  // namespace ltsim::construct
