// The bump and margin pairs of docs/tightness.md §2, and the average-bump pair of
// docs/families.md, average-bump.
#include "ltsim/study/tightness_families.h"

#include <fmt/format.h>

#include <algorithm>
// Boost 1.74's tanh_sinh (Debian 12) computes an abscissa's position near the left end, then
// overwrites it in an else branch and asserts the overwritten value differs from the end
// point: with asserts on (the sanitizer build) a narrow bump far from 0 aborts, although the
// integrand is evaluated exactly as in a release build. Its asserts are off in this file only.
#define BOOST_DISABLE_ASSERTS
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "ltsim/construct/fractions.h"
#include "ltsim/core/error.h"
#include "ltsim/model/finite_rounding.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {
namespace {

Transformer Frame(int alphabet, int width, int period, int locality) {
  Transformer m;
  m.alphabet = alphabet;
  m.width = width;
  m.period = period;
  m.locality = locality;
  m.embedding = Matrix::Zero(alphabet, width);
  m.positional = Matrix::Zero(period, width);
  return m;
}

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
    return Rational(eps) + Rational(kThresholdGapTolerance) * Rational(std::max(1.0, mu + eps));
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

}  // namespace

FamilyPair MakeBumpPair(int alphabet, int period, int locality, double slope, double eps,
                        double offset) {
  if (alphabet < 2 || alphabet > 64) throw InputError("bump family: alphabet must be in [2, 64]");
  if (period < 1 || period > 64) throw InputError("bump family: period must be in [1, 64]");
  if (locality < 0 || locality > 10) throw InputError("bump family: locality must be in [0, 10]");
  if (!(slope > 0) || !std::isfinite(slope)) throw InputError("bump family: slope must be > 0");
  if (!(eps > 0 && eps < 1)) throw InputError("bump family: eps must be in (0, 1)");
  const double w = 2 * eps / slope;
  const double centre = w * (1 + offset);
  if (!(offset >= 0 && offset < 1) || centre + w >= 1)
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

  FamilyPair p;
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
  p.predicted = static_cast<double>(BumpPairFirstDisagreement(p.g, period, slope, eps));
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

FamilyPair MakeMarginPair(double margin, int bits, double eta) {
  if (!(margin > 0 && margin <= 0.8)) throw InputError("margin family: γ must be in (0, 0.8]");
  if (bits < 1 || bits > 30) throw InputError("margin family: bits must be in [1, 30]");
  if (!(eta > 0 && eta <= 0.1)) throw InputError("margin family: η must be in (0, 0.1]");
  // Dimensions: tokens 0, 1; constant 2; attended shares 3, 4.
  const int d = 5;
  Transformer m = Frame(2, d, 1, 0);
  m.embedding(0, 0) = 1;
  m.embedding(1, 1) = 1;
  m.positional(0, 2) = 1;
  Layer layer;
  layer.attention = Attention::kFinite;
  layer.precision_bits = bits;
  Head head;
  head.qk = Matrix::Zero(d, d);
  head.ov = Matrix::Zero(d, d);
  head.ov(3, 0) = 1;
  head.ov(4, 1) = 1;
  head.bias = Vector::Zero(1);
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_weight(0, 4) = 1;
  m.readout_bias = Vector::Zero(1);
  FamilyPair p;
  p.family = "margin";
  p.f = m;
  p.g = m;
  p.f.layers[0].heads[0].qk(1, 2) = -margin;
  p.g.layers[0].heads[0].qk(1, 2) = -margin * (1 + eta);
  p.f.name = "margin f";
  p.g.name = "margin g";
  // g drops the 1-keys, gap γ(1 + η) below the 0-keys, from T ≥ 2^(p/(γ(1 + η))), decided as
  // every evaluator decides it (docs/theory.md §8.6). That is T* (for 0.45 = the rows' ε) when f
  // still keeps them there — an integer lies in [T_hard(g), T_hard(f)) — and f's share of 1s on
  // 1^(T−1) 0 exceeds 1/2; otherwise no closed form is claimed (0).
  const std::uint64_t t_g = FiniteDropLength(margin * (1 + eta), bits);
  const std::uint64_t t_f = FiniteDropLength(margin, bits);
  const double t = static_cast<double>(t_g), w = std::exp2(FiniteLog2Weight(-margin, 0.0, t, bits));
  const bool window = t_g > 0 && (t_f == 0 || t_f > t_g);
  p.predicted = window && (t - 1) * w / (1 + (t - 1) * w) > 0.5 ? t : 0.0;
  const std::string meta = "{\"family\": \"margin\", \"margin\": " + std::to_string(margin) +
                           ", \"precision_bits\": " + std::to_string(bits) +
                           ", \"eta\": " + std::to_string(eta) + "}";
  p.f.meta_json = p.g.meta_json = meta;
  p.semantics =
      "finite attention: unnormalised weights i^(a − a*) at query position i, set to 0 at or "
      "below 2^(−p) before normalising (docs/formats.md §1); an ℓ∞ gap > ε on the readout";
  return p;
}

double SelfShare(double phi, std::uint64_t length) {
  if (length <= 1) return 1.0;
  const double t = static_cast<double>(length);
  // The query's logit φ·ln T is the maximum (φ > 0): its weight is 1, every other key's
  // exp(0 − φ·ln T).
  return 1 / (1 + (t - 1) * std::exp(-phi * std::log(t)));
}

FamilyPair MakePositionalMarginPair(double positional_margin, double slope, double eps,
                                    double height) {
  const double gamma = positional_margin;
  if (!(gamma > 0 && gamma < 1))
    throw InputError("positional-margin family: gamma_pos must be in (0, 1)");
  if (!(slope > 0) || !std::isfinite(slope))
    throw InputError("positional-margin family: slope must be > 0");
  if (!(eps > 0 && eps < 1)) throw InputError("positional-margin family: eps must be in (0, 1)");
  if (!(height > 1 && height <= 10))
    throw InputError("positional-margin family: height must be in (1, 10]");
  const double theta = height * eps, level = (height - 1) * eps, delta = level / slope;
  if (!(delta > 0 && delta <= 0.5))
    throw InputError(
        "positional-margin family: (height - 1)·eps/slope must be in (0, 1/2] (raise the slope)");
  const double phi = 1 - gamma;
  // FindThreshold's rule (ThresholdDisagrees): the gap θ − a·q of x = 1^(T−1) 0 against
  // ε + kThresholdGapTolerance·max(1, ‖f‖, ‖g‖), with f = the gap, g = 0.
  const auto margin = [&](std::uint64_t t) {
    const double gap = theta - slope * SelfShare(phi, t);
    return gap - (eps + kThresholdGapTolerance * std::max(1.0, std::abs(gap)));
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
  Mlp mlp;
  mlp.in = Matrix::Zero(1, d);
  mlp.in(0, 2) = -slope;
  mlp.in(0, 1) = -2 * theta;  // switches the unit off when the query token is 1
  mlp.in_bias = Vector::Constant(1, theta);
  mlp.out = Matrix::Zero(d, 1);
  mlp.out(4, 0) = 1;
  layer.mlp = mlp;
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_bias = Vector::Zero(1);
  FamilyPair p;
  p.family = "positional-margin";
  p.f = m;
  p.f.readout_weight(0, 4) = 1;
  p.g = m;
  p.f.name = "positional-margin f";
  p.g.name = "positional-margin g (zero readout)";
  p.predicted = static_cast<double>(hi);
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

FamilyPair MakeTwoLayerMarginPair(double positional_margin, double norm, double slope, double eps,
                                  double height) {
  if (!(positional_margin > 0 && positional_margin < 1))
    throw InputError("two-layer margin family: gamma_pos must be in (0, 1)");
  if (!(norm >= 0) || !std::isfinite(norm))
    throw InputError("two-layer margin family: norm must be >= 0");
  if (!(slope > 0) || !std::isfinite(slope))
    throw InputError("two-layer margin family: slope must be > 0");
  if (!(eps > 0 && eps < 1)) throw InputError("two-layer margin family: eps must be in (0, 1)");
  if (!(height > 1 && height <= 10))
    throw InputError("two-layer margin family: height must be in (1, 10]");
  const double theta = height * eps;
  // Dimensions: tokens 0, 1; first-layer masses on tokens 0, 1 at 2, 3; the second layer's copy
  // of coordinate 2 at 4; the unit's output 5.
  const int d = 6;
  Transformer m = Frame(2, d, 1, 0);
  m.embedding(0, 0) = 1;
  m.embedding(1, 1) = 1;
  Layer first;
  first.attention = Attention::kSoftmax;
  first.bias_scaling = BiasScaling::kLog;
  Head h1;
  h1.qk = Matrix::Zero(d, d);
  h1.qk(0, 0) = norm;
  h1.ov = Matrix::Zero(d, d);
  h1.ov(2, 0) = 1;
  h1.ov(3, 1) = 1;
  h1.bias = Vector::Constant(1, 1 - positional_margin);
  first.heads.push_back(h1);
  m.layers.push_back(first);
  Layer second;
  second.attention = Attention::kSoftmax;
  Head h2;
  h2.qk = Matrix::Zero(d, d);
  h2.ov = Matrix::Zero(d, d);
  h2.ov(4, 2) = 1;
  h2.bias = Vector::Constant(1, std::log(1e5));
  second.heads.push_back(h2);
  Mlp mlp;
  mlp.in = Matrix::Zero(1, d);
  mlp.in(0, 4) = -slope;
  mlp.in(0, 1) = -2 * theta;  // switches the unit off when the query token is 1
  mlp.in_bias = Vector::Constant(1, theta);
  mlp.out = Matrix::Zero(d, 1);
  mlp.out(5, 0) = 1;
  second.mlp = mlp;
  m.layers.push_back(second);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_bias = Vector::Zero(1);
  FamilyPair p;
  p.family = "two-layer-margin";
  p.f = m;
  p.f.readout_weight(0, 5) = 1;
  p.g = m;
  p.f.name = "two-layer margin f";
  p.g.name = "two-layer margin g (zero readout)";
  p.semantics =
      "two layers, softmax; the first layer's share of the query decays like "
      "e^(norm) T^(-gamma_pos) under log bias scaling; the second layer reads the last position "
      "(self bias ln 10^5); f - g = ReLU(theta - a u) when x_T = 0; an l-infinity gap > eps";
  return p;
}

Transformer WithIdentitySecondLayer(const Transformer& model) {
  Transformer two = model;
  Layer layer;
  layer.attention = Attention::kSoftmax;
  Head head;
  head.qk = Matrix::Zero(model.width, model.width);
  head.ov = Matrix::Zero(model.width, model.width);
  head.bias = Vector::Zero(model.locality + 1);
  layer.heads.push_back(head);
  two.layers.push_back(layer);
  two.name = model.name + " (identity second layer)";
  return two;
}

namespace {

// ln B(α, α).
double LogBetaSymmetric(double alpha) { return 2 * std::lgamma(alpha) - std::lgamma(2 * alpha); }

}  // namespace

double AverageBumpLimit(double alpha, double slope, double half_width, double centre) {
  // ∫ s·max(0, w − |p − c|)·p^(α−1)(1 − p)^(α−1)/B(α, α) dp over [c − w, c + w], each half by
  // tanh-sinh quadrature (which takes the p^(α−1) end at p = 0 when c = w).
  const double log_b = LogBetaSymmetric(alpha);
  const auto density = [&](double p) {
    if (p <= 0 || p >= 1) return 0.0;
    return std::exp((alpha - 1) * (std::log(p) + std::log1p(-p)) - log_b);
  };
  const double a = centre - half_width, b = centre + half_width;
  boost::math::quadrature::tanh_sinh<double> integrator;
  const double left = integrator.integrate([&](double p) { return (p - a) * density(p); },
                                           std::max(a, 0.0), centre);
  const double right = integrator.integrate([&](double p) { return (b - p) * density(p); }, centre,
                                            std::min(b, 1.0));
  return slope * (left + right);
}

double AverageBumpGap(double alpha, double slope, double half_width, double centre,
                      std::uint64_t length) {
  const double T = static_cast<double>(length);
  const double log_b = LogBetaSymmetric(alpha);
  const double log_norm = std::lgamma(T + 1) - std::lgamma(T + 2 * alpha) - log_b;
  const auto lo = static_cast<std::uint64_t>(std::max(0.0, std::floor((centre - half_width) * T)));
  const auto hi = static_cast<std::uint64_t>(std::min(T, std::ceil((centre + half_width) * T)));
  double sum = 0.0;
  for (std::uint64_t k = lo; k <= hi; ++k) {
    const double K = static_cast<double>(k);
    const double bump = slope * std::max(0.0, half_width - std::abs(K / T - centre));
    if (bump == 0.0) continue;
    // P(n₁ = k) = C(T, k)·B(k + α, T − k + α)/B(α, α).
    const double log_p = log_norm - std::lgamma(K + 1) - std::lgamma(T - K + 1) +
                         std::lgamma(K + alpha) + std::lgamma(T - K + alpha);
    sum += std::exp(log_p) * bump;
  }
  return sum;
}

namespace {

// max(1, ‖f‖∞, ‖g‖∞) over the strings of length T of the average-bump pair: f reads the share
// n₁/T ≤ 1, g the share plus s·max(0, w − |n₁/T − c|).
double AverageBumpOutputScale(double slope, double half_width, double centre,
                              std::uint64_t length) {
  const double T = static_cast<double>(length);
  const auto lo = static_cast<std::uint64_t>(std::max(0.0, std::floor((centre - half_width) * T)));
  const auto hi = static_cast<std::uint64_t>(std::min(T, std::ceil((centre + half_width) * T)));
  double scale = 1.0;
  for (std::uint64_t k = lo; k <= hi; ++k) {
    const double share = static_cast<double>(k) / T;
    scale = std::max(scale, share + slope * std::max(0.0, half_width - std::abs(share - centre)));
  }
  return scale;
}

}  // namespace

FamilyPair MakeAverageBumpPair(double alpha, double eps, double slope, double height, double offset,
                               bool sqrt_form) {
  if (!(alpha >= 0.05 && alpha <= 20))
    throw InputError("average-bump family: alpha must be in [0.05, 20]");
  if (!(eps > 0 && eps < 1)) throw InputError("average-bump family: eps must be in (0, 1)");
  if (!(slope > 0) || !std::isfinite(slope))
    throw InputError("average-bump family: slope must be > 0");
  if (!(height > 1 && height <= 10))
    throw InputError("average-bump family: height must be in (1, 10]");
  if (!(offset >= 0 && offset < 1))
    throw InputError("average-bump family: offset must be in [0, 1)");
  // Bisection in ln w for limit = height·ε (or height·ε^(1/2)). The limit is continuous in w
  // but not monotone in general (for α > 1 the density falls towards 1 while the bump moves
  // right), so the bracket is the first step of a geometric grid of 128 widths up to the
  // largest bump inside [0, 1] that crosses the target: the bisection then finds a root
  // inside it (the limit is below the target at its left end, above at its right end).
  const double target = height * (sqrt_form ? std::sqrt(eps) : eps);
  const auto limit = [&](double w) { return AverageBumpLimit(alpha, slope, w, w * (1 + offset)); };
  const double w_min = 1e-12, w_max = 0.999 / (2 + offset);
  constexpr int kGrid = 128;
  double lo = w_min, hi = 0;
  for (int i = 1; i <= kGrid && hi == 0; ++i) {
    const double w = w_min * std::pow(w_max / w_min, static_cast<double>(i) / kGrid);
    if (limit(w) > target)
      hi = w;
    else
      lo = w;
  }
  if (hi == 0)
    throw InputError(fmt::format(
        "average-bump family: no bump inside [0, 1] reaches the limit height·eps = {} at alpha "
        "= {} (raise the slope)",
        target, alpha));
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-13; ++i) {
    const double mid = std::sqrt(lo * hi);
    (limit(mid) < target ? lo : hi) = mid;
  }
  const double w = hi, centre = w * (1 + offset);
  if (!(std::abs(limit(w) - target) <= 1e-9 * target))
    throw InputError(fmt::format(
        "average-bump family: the bisection for the limit {} at alpha = {} did not converge",
        target, alpha));
  // The bump pair with half-width w (w = 2·(w/4)/0.5), its MLP readout scaled to slope s.
  FamilyPair p = MakeBumpPair(2, 1, 0, 0.5, w / 4, offset);
  p.g.layers[0].mlp->out *= slope / 0.5;
  p.family = "average-bump";
  p.f.name = "average-bump f";
  p.g.name = "average-bump g";
  p.average_limit = limit(w);
  p.predicted = 0;
  for (std::uint64_t T = 1; T <= 1'000'000; ++T) {
    const double gap = AverageBumpGap(alpha, slope, w, centre, T);
    // AverageGap's rule (threshold.h): E_T > ε + kThresholdGapTolerance·max(1, ‖f‖∞, ‖g‖∞)
    // over the statistics of length T.
    const double boundary =
        eps + kThresholdGapTolerance * AverageBumpOutputScale(slope, w, centre, T);
    if (std::abs(gap - boundary) <= 1e-7 * eps) break;  // too close to call: no closed form
    if (gap > boundary) {
      p.predicted = static_cast<double>(T);
      break;
    }
  }
  p.f.meta_json = p.g.meta_json = fmt::format(
      "{{\"family\": \"average-bump\", \"alpha\": {}, \"eps\": {}, \"slope\": {}, \"height\": "
      "{}, \"offset\": {}, \"limit_form\": \"{}\", \"half_width\": {}}}",
      alpha, eps, slope, height, offset, sqrt_form ? "height*sqrt(eps)" : "height*eps", w);
  p.semantics =
      "hardmax attention with tie tolerance 1e-9 over every key (the query among them), "
      "positions 1-based; strings drawn as pi ~ Dir(alpha, alpha) once, then tokens iid from "
      "pi; an expected l-inf gap > eps on the readout";
  return p;
}

}  // namespace ltsim
