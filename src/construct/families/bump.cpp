// The bump family (docs/families.md): one head, one ratio, a tent between the ratios
// reachable at short lengths.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "construct/families/family_parts.h"
#include "ltsim/construct/fractions.h"
#include "ltsim/core/error.h"

namespace ltsim::construct {
namespace {

// The smallest denominator n of a fraction k/n where the tent of `bump` exceeds the
// verdict's boundary, for the doubles the models hold (docs/families.md): with c₁ = −(f's
// first-unit bias) of the model's last MLP and ρ = s·r, f − g = ρ on [0, c₁] and 2c₁ − ρ on
// [c₁, c₂], and a statistic disagrees when that exceeds B = ε + 10⁻⁹ (the verdict of
// `threshold`, whose max(1, ‖f‖, ‖g‖) is 1 there since ε ≤ 1). So r = k/n must lie in the open
// interval (B/s, (2c₁ − B)/s), and n* is the smallest denominator of a fraction in it. Fractions
// within 10⁻¹¹/s of an end (a gap within 10⁻¹¹ of B, a hundred times below the verdict's
// tolerance and far above the evaluators' rounding) are refused: the interval shrunk and widened
// by that much must give the same n*.
std::uint64_t TentSmallestDenominator(const Transformer& f, double s, double eps,
                                      const std::string& family, const std::string& params) {
  const double c1 = -f.layers.back().mlp->in_bias(0);
  const Rational verdict = Rational(eps) + Rational(kVerdictTolerance);
  const Rational lo = verdict / Rational(s), hi = (2 * Rational(c1) - verdict) / Rational(s);
  const Rational margin = Rational(kBoundaryGap) / Rational(s);
  const std::uint64_t n_star = SmallestDenominator(lo + margin, hi - margin);
  if (n_star == 0 || n_star > (std::uint64_t{1} << 56))
    throw InputError(fmt::format("family {}: T* is beyond 2^56 ({})", family, params));
  if (SmallestDenominator(lo - margin, hi + margin) != n_star)
    throw InputError(fmt::format(
        "family {}: a statistic's gap lies within 1e-11 of eps (+ the verdict's 1e-9): a "
        "boundary case ({}); change slope slightly",
        family, params));
  return n_star;
}

// The largest gap of the tent over the fractions k/n next to its peak c₁/s (c₂ = −(g's bias)).
double TentGapAt(const Transformer& f, const Transformer& g, double s, std::uint64_t n_star) {
  const double c1 = -f.layers.back().mlp->in_bias(0);
  const double c2 = -g.layers.back().mlp->in_bias(0);
  const double n = static_cast<double>(n_star);
  double best = 0.0;
  const double k_peak = std::floor(c1 / s * n);
  for (double k = std::max(0.0, k_peak - 1); k <= std::min(n, k_peak + 2); ++k) {
    const double rho = s * (k / n);
    best = std::max(best, rho - 2.0 * std::max(0.0, rho - c1) + std::max(0.0, rho - c2));
  }
  return best;
}

// ---- bump: one head, one ratio, a tent between the ratios reachable at short lengths -------
//
// Coordinates: 0 = [token is 1]; 1 … Δ = one-hot residue (Δ > 1 only); last = ρ = s·r, the
// head's output scaled by the slope s. r = share of 1s among the attended positions (every
// position when Δ = 1, the positions ≡ 0 (mod Δ) otherwise).
// f = s·r − 2s·ReLU(r − b), g = −s·ReLU(r − 2b), b = κε/s, so f − g is the tent of height κε
// on [0, 2b] (rising with slope s from 0, falling back to 0 at 2b, 0 beyond).
FamilyMember BuildBump(const FamilyValues& v) {
  const double s = Get(v, "slope"), eps = Get(v, "eps"), kappa = Get(v, "height");
  const int period = static_cast<int>(Get(v, "period"));
  const double r_hi = (2.0 * kappa - 1.0) * eps / s;  // {f − g > ε} ≈ (ε/s, r_hi)
  if (r_hi > 1.0 / (2.0 * period))
    throw InputError(
        fmt::format("family bump: slope {} is too small for eps {}, height {}, period {}: the "
                    "derivation needs (2·height − 1)·eps/slope ≤ 1/(2·period)",
                    s, eps, kappa, period));
  const double b = kappa * eps / s;
  // f has coordinates [token is 1], the residues (Δ > 1), ρ; g one more, holding its unit.
  auto make = [&](int width) {
    Transformer m = Skeleton(2, width, period, Attention::kHardmax, 1);
    m.embedding(1, 0) = 1.0;
    Head& head = m.layers[0].heads[0];
    if (period > 1) {
      for (int r = 0; r < period; ++r) {
        m.positional(r, 1 + r) = 1.0;
        head.qk(1, 1 + r) = 1.0;  // logit 1 on keys ≡ 0 (mod Δ), for every query residue
      }
    }
    m.layers[0].mlp = OneUnit(width);
    return m;
  };
  const int rho = 1 + (period > 1 ? period : 0);
  FamilyMember member;
  member.f = make(rho + 1);  // f = ρ − 2·ReLU(ρ − s·b), ρ = s·r
  member.f.layers[0].heads[0].ov(rho, 0) = s;
  member.f.layers[0].mlp->in(0, rho) = 1.0;
  member.f.layers[0].mlp->in_bias(0) = -s * b;
  member.f.layers[0].mlp->out(rho, 0) = -2.0;
  member.f.readout_weight(0, rho) = 1.0;
  member.g = make(rho + 2);  // g = −ReLU(ρ − 2s·b), the unit in coordinate ρ + 1
  member.g.layers[0].heads[0].ov(rho, 0) = s;
  member.g.layers[0].mlp->in(0, rho) = 1.0;
  member.g.layers[0].mlp->in_bias(0) = -2.0 * s * b;
  member.g.layers[0].mlp->out(rho + 1, 0) = 1.0;
  member.g.readout_weight(0, rho + 1) = -1.0;
  member.eps = eps;
  const std::uint64_t n_star = TentSmallestDenominator(
      member.f, s, eps, "bump",
      fmt::format("slope {}, eps {}, height {}, period {}", s, eps, kappa, period));
  member.first_disagreement = static_cast<std::uint64_t>(period) * n_star;
  member.closed_form = "Δ·min{n : some k/n in ((ε + 1e-9)/s, (2κε − ε − 1e-9)/s)}";
  member.growth = "Δ·s/((2κ−1)ε)";
  member.gap_at_first_disagreement = TentGapAt(member.f, member.g, s, n_star);
  member.sup_gap = kappa * eps;
  member.f.name =
      fmt::format("family bump f (slope={}, eps={}, period={}, height={})", s, eps, period, kappa);
  member.g.name =
      fmt::format("family bump g (slope={}, eps={}, period={}, height={})", s, eps, period, kappa);
  return member;
}

}  // namespace

Family BumpFamily() {
  return {"bump",
          "one head, one ratio r; f − g is a tent of height κε and slope s on r ∈ [0, 2κε/s]",
          "L (slope), 1/ε, Δ",
          {{"slope", 8.0, 1e-3, 1e9, false, "s: slope of the tent (L ∝ s)"},
           EpsParameter(),
           {"period", 1, 1, 64, true, "Δ: the head attends the positions ≡ 0 (mod Δ)"},
           {"height", 2.0, 1.01, 100.0, false, "κ: the tent's height in units of ε"}},
          BuildBump};
}

}  // namespace ltsim::construct
