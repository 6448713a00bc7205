// The average-bump family of Theorem 4.2's rows (docs/families.md, average-bump): the one-head
// hardmax offset-bump pair with S = 2, Δ = 1, τ = 0 (every key ties, so the head reads
// μ₁ = n₁/T), slope s, centre c = w·(1 + offset), its half-width w solved so that the limit
// expected gap under π ~ Dir(α, α) is height·ε (sqrt-form 0) or height·ε^(1/2) (sqrt-form 1: the
// form of Theorem 4.2's conclusion). Its average first disagreement (least T with E_T > ε)
// exceeds 1/(c + w). T* is that length by AverageBumpGap under AverageGap's rule (E_T > ε +
// kThresholdGapTolerance·max(1, ‖f‖∞, ‖g‖∞) over the strings of length T); 0 when some E_T up
// to it lies within 10⁻⁷·ε of that boundary, or none exceeds it up to 10⁶. InputError for α ∉
// [0.05, 20], ε ∉ (0, 1), slope ≤ 0, height ∉ (1, 10], offset ∉ [0, 1), or a limit that no bump
// inside [0, 1] reaches.
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
#include <limits>
#include <string>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"

namespace ltsim {
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

namespace construct {
namespace {

FamilyMember BuildAverageBump(const FamilyValues& v) {
  const double alpha = Get(v, "alpha"), eps = Get(v, "eps"), slope = Get(v, "slope"),
               height = Get(v, "height"), offset = Get(v, "offset");
  const bool sqrt_form = Get(v, "sqrt-form") != 0;
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
  FamilyMember p = OffsetBumpPair(2, 1, 0, 0.5, w / 4, offset);
  p.g.layers[0].mlp->out *= slope / 0.5;
  p.family = "average-bump";
  p.f.name = "average-bump f";
  p.g.name = "average-bump g";
  p.average_limit = limit(w);
  p.eps = eps;
  p.first_disagreement = 0;
  for (std::uint64_t T = 1; T <= 1'000'000; ++T) {
    const double gap = AverageBumpGap(alpha, slope, w, centre, T);
    // AverageGap's rule (threshold.h): E_T > ε + kVerdictTolerance·max(1, ‖f‖∞, ‖g‖∞)
    // over the statistics of length T.
    const double boundary = eps + kVerdictTolerance * AverageBumpOutputScale(slope, w, centre, T);
    if (std::abs(gap - boundary) <= 1e-7 * eps) break;  // too close to call: no closed form
    if (gap > boundary) {
      p.first_disagreement = T;
      break;
    }
  }
  p.f.meta_json = p.g.meta_json = fmt::format(
      "{{\"family\": \"average-bump\", \"alpha\": {}, \"eps\": {}, \"slope\": {}, \"height\": "
      "{}, \"offset\": {}, \"limit_form\": \"{}\", \"half_width\": {}}}",
      alpha, eps, slope, height, offset, sqrt_form ? "height*sqrt(eps)" : "height*eps", w);
  p.closed_form = "min{T : E_T > ε + 1e-9·max(1, ‖f‖, ‖g‖)}, E_T by the Beta-binomial sum";
  p.growth = "1/(c + w)";
  p.gap_at_first_disagreement = p.sup_gap = std::numeric_limits<double>::quiet_NaN();
  p.semantics =
      "hardmax attention with tie tolerance 1e-9 over every key (the query among them), "
      "positions 1-based; strings drawn as pi ~ Dir(alpha, alpha) once, then tokens iid from "
      "pi; an expected l-inf gap > eps on the readout";
  return p;
}

}  // namespace

Family AverageBumpFamily() {
  return {"average-bump",
          "the offset-bump pair on {0, 1} with its width solved so that the expected gap under "
          "π ~ Dir(α, α) tends to height·ε (tightness rows 4.2; T* is the first average "
          "disagreement)",
          "1/ε (average first disagreement)",
          {{"alpha", 1.0, 0.05, 20.0, false, "α: the Dirichlet prior Dir(α, α)"},
           {"eps", 0.05, 1e-9, 1.0, false, "ε of the first average disagreement, in (0, 1)",
            kClosed, kOpen},
           {"slope", 8.0, 1e-9, 1e12, false, "s: the bump's slope"},
           {"height", 2.0, 1.0, 10.0, false, "the limit expected gap in units of ε, in (1, 10]",
            kOpen, kClosed},
           {"offset", 0.5, 0.0, 1.0, false, "the centre is w·(1 + offset), offset in [0, 1)",
            kClosed, kOpen},
           {"sqrt-form", 0, 0, 1, true, "1: the limit is height·ε^(1/2) (Theorem 4.2's form)"}},
          BuildAverageBump,
          true};
}

}  // namespace construct
}  // namespace ltsim
