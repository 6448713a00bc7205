// The offset-bump family (docs/tightness.md §2): one hardmax head that attends to the keys at
// positions ≡ 0 (mod Δ) (all keys when Δ = 1; logit +1 on residue 0, zero biases over the τ+1
// suffix), copies the share μ₁ of token 1 among them; f = μ₁, g = μ₁ + s·tri(μ₁), tri the
// triangle of half-width w = 2ε/s centred at c = w·(1 + offset), offset ∈ [0, 1). |f − g| > ε ⇔
// |μ₁ − c| < ε/s, first reachable with one token 1 among the ⌊T/Δ⌋ attended keys:
// T* ≈ Δ/(c + ε/s) ∝ Δ·s/ε. T* is exact (the smallest denominator of a share in the
// disagreement interval, in rationals, for `threshold`'s verdict), 0 where a share lies within
// 10⁻¹¹/s of an end of that interval. InputError for alphabet < 2, period < 1, locality < 0,
// slope ≤ 0, ε ∉ (0, 1) or a bump that does not fit in [0, 1]. Its rows print it as "bump".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "construct/families/family_parts.h"
#include "ltsim/construct/fractions.h"
#include "ltsim/core/error.h"

namespace ltsim::construct {
namespace {

// The exact T* of a bump pair (docs/tightness.md §2), or 0 where a statistic's gap lies within
// 10⁻¹¹ of the verdict's boundary. g − f = bump(μ) with μ the attended share of token 1 and
// bump(μ) = s·(ReLU(μ − a₁) − 2·ReLU(μ − a₂) + ReLU(μ − a₃)) for the doubles a_i = −(g's biases).
// A statistic disagrees when bump(μ) > B = ε + 10⁻⁹·max(1, ‖f‖, ‖g‖) (`threshold`'s verdict),
// i.e. μ = k/n in the open interval (a₁ + B/s, 2a₂ − a₁ − B/s), evaluated exactly. n is the
// number of attended keys: T for T < Δ (no key at residue 0: every key ties), ⌊T/Δ⌋ from T = Δ.
std::uint64_t BumpPairFirstDisagreement(const Transformer& g, int period, double s, double eps) {
  const Vector& bias = g.layers[0].mlp->in_bias;
  const Rational a1 = -Rational(bias(0)), a2 = -Rational(bias(1));
  // ‖g‖ = μ + ε at either end of the interval (bump = ε there); f = μ ≤ 1.
  const auto verdict = [&](double mu) {
    return Rational(eps) + Rational(kVerdictTolerance) * Rational(std::max(1.0, mu + eps));
  };
  const double a1d = -bias(0), a2d = -bias(1);
  const Rational lo = a1 + verdict(a1d + eps / s) / Rational(s);
  const Rational hi = 2 * a2 - a1 - verdict(2 * a2d - a1d - eps / s) / Rational(s);
  const Rational margin = Rational(1e-11) / Rational(s);
  if (!(lo + margin < hi - margin) || lo - margin < 0) return 0;
  const std::uint64_t n = SmallestDenominator(lo + margin, hi - margin);
  if (n == 0 || SmallestDenominator(lo - margin, hi + margin) != n) return 0;
  return n < static_cast<std::uint64_t>(period) ? n : n * static_cast<std::uint64_t>(period);
}

FamilyMember BuildOffsetBump(const FamilyValues& v) {
  return OffsetBumpPair(static_cast<int>(Get(v, "alphabet")), static_cast<int>(Get(v, "period")),
                        static_cast<int>(Get(v, "locality")), Get(v, "slope"), Get(v, "eps"),
                        Get(v, "offset"));
}

}  // namespace

FamilyMember OffsetBumpPair(int alphabet, int period, int locality, double slope, double eps,
                            double offset) {
  // Every argument is in its registry range (the registry checks offset-bump's; average-bump
  // passes slope 0.5 and ε = w/4 ≤ 1/4 with its own offset).
  const double w = 2 * eps / slope;
  const double centre = w * (1 + offset);
  if (centre + w >= 1)
    throw InputError(
        "bump family: the bump of half-width 2·eps/slope does not fit in [0, 1] "
        "(raise the slope)");
  // Dimensions: tokens [0, S), attended shares [S, 2S), constant 2S, residue-0 flag 2S+1,
  // bump 2S+2.
  const int S = alphabet, one = 2 * S, flag = 2 * S + 1, bump = 2 * S + 2, d = 2 * S + 3;
  Transformer m = Frame(S, d, period, locality);
  for (int s = 0; s < S; ++s) m.embedding(s, s) = 1;
  for (int r = 0; r < period; ++r) {
    m.positional(r, one) = 1;
    if (r == 0 && period > 1) m.positional(r, flag) = 1;
  }
  Layer layer;
  layer.attention = Attention::kHardmax;
  Head head;
  head.qk = Matrix::Zero(d, d);
  head.qk(flag, one) = 1;  // key y_jᵀ M y_i = flag(j)·const(i): residue-0 keys win
  head.ov = Matrix::Zero(d, d);
  for (int s = 0; s < S; ++s) head.ov(S + s, s) = 1;
  head.bias = Vector::Zero(locality + 1);
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_weight(0, S + 1) = 1;
  m.readout_weight(0, bump) = 1;
  m.readout_bias = Vector::Zero(1);

  FamilyMember p;
  p.family = "bump";
  p.f = m;
  p.f.name = "bump f";
  p.g = m;
  p.g.name = "bump g";
  Mlp mlp;
  mlp.in = Matrix::Zero(3, d);
  for (int k = 0; k < 3; ++k) mlp.in(k, S + 1) = 1;
  mlp.in_bias = Vector(3);
  mlp.in_bias << -(centre - w), -centre, -(centre + w);
  mlp.out = Matrix::Zero(d, 3);
  mlp.out(bump, 0) = slope;
  mlp.out(bump, 1) = -2 * slope;
  mlp.out(bump, 2) = slope;
  p.g.layers[0].mlp = mlp;
  p.eps = eps;
  p.first_disagreement = BumpPairFirstDisagreement(p.g, period, slope, eps);
  p.closed_form = "Δ·min{n : some k/n in the bump's window above ε + 1e-9·max(1, ‖f‖, ‖g‖)}";
  p.growth = "Δ·(slope/(2ε))/(1 + offset)";
  p.gap_at_first_disagreement = p.sup_gap = std::numeric_limits<double>::quiet_NaN();
  const std::string meta =
      "{\"family\": \"bump\", \"alphabet\": " + std::to_string(S) +
      ", \"period\": " + std::to_string(period) + ", \"locality\": " + std::to_string(locality) +
      ", \"slope\": " + std::to_string(slope) + ", \"eps\": " + std::to_string(eps) +
      ", \"offset\": " + std::to_string(offset) + "}";
  p.f.meta_json = p.g.meta_json = meta;
  p.semantics =
      "hardmax attention with tie tolerance θ = 1e-9 over the keys at positions ≡ 0 (mod Δ), "
      "positions 1-based, the query among the keys; an ℓ∞ gap > ε on the readout";
  return p;
}

Family OffsetBumpFamily() {
  return {
      "offset-bump",
      "one hardmax head reads the share μ₁ of token 1; g − f is a triangle of half-width "
      "2ε/s centred at (2ε/s)·(1 + offset) (tightness rows 4.1)",
      "L (slope), 1/ε, Δ",
      {{"alphabet", 2, 2, 64, true, "S: alphabet size"},
       {"period", 1, 1, 64, true, "Δ: the head attends the positions ≡ 0 (mod Δ)"},
       {"locality", 0, 0, 10, true, "τ: the locality"},
       {"slope", 8.0, 1e-9, 1e12, false, "s: the triangle's slope (L ∝ s)"},
       {"eps", 0.05, 1e-9, 1.0, false, "ε of the first disagreement, in (0, 1)", kClosed, kOpen},
       {"offset", 0.5, 0.0, 1.0, false, "the centre is (2ε/s)·(1 + offset), offset in [0, 1)",
        kClosed, kOpen}},
      BuildOffsetBump,
      true};
}

}  // namespace ltsim::construct
