// Tightness verdicts from two fitted exponents and the paper's (docs/statistics.md).
#include "ltsim/study/verdict.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace ltsim {
namespace {

std::string Interval(const std::pair<double, double>& ci) {
  return fmt::format("[{:.3g}, {:.3g}]", ci.first, ci.second);
}

std::string Resolution(double tolerance) {
  return tolerance > 1e-6 ? fmt::format(" (at a resolution of {:.3g})", tolerance) : "";
}

// An inconclusive verdict (no gap measured) with its reason.
VerdictResult Inconclusive(std::string reason) {
  VerdictResult v;
  v.gap = v.least_gap = std::numeric_limits<double>::quiet_NaN();
  v.reason = std::move(reason);
  return v;
}

bool SpansZero(const std::pair<double, double>& ci, double tolerance) {
  return ci.first <= tolerance && ci.second >= -tolerance;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kTight:
      return "tight";
    case Verdict::kGap:
      return "gap";
    case Verdict::kContradicts:
      return "contradicts";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

VerdictResult DecideVerdict(const ExponentEstimate& lower, const ExponentEstimate& upper,
                            double paper, double tolerance) {
  if (!lower.ci) return Inconclusive("lower side: " + lower.reason);
  const auto [low, high] = *lower.ci;
  VerdictResult v = Inconclusive("");
  if (std::isfinite(paper) && low > paper + tolerance) {
    v.verdict = Verdict::kContradicts;
    v.reason = fmt::format("lower side's interval {} lies above the paper's exponent {:.3g}",
                           Interval(*lower.ci), paper);
    return v;
  }
  if (SpansZero(*lower.ci, tolerance))
    return Inconclusive(
        fmt::format("lower side's interval {} spans 0: growth not shown", Interval(*lower.ci)));
  if (!upper.ci) return Inconclusive("upper side: " + upper.reason);
  const auto [ulow, uhigh] = *upper.ci;
  if (low > uhigh + tolerance) {
    v.verdict = Verdict::kContradicts;
    v.reason = fmt::format(
        "lower side's interval {} lies above the construction's certified upper side {}: "
        "the certificate or the threshold is wrong",
        Interval(*lower.ci), Interval(*upper.ci));
    return v;
  }
  if (low <= uhigh + tolerance && ulow <= high + tolerance) {
    v.verdict = Verdict::kTight;
    v.reason = fmt::format("intervals overlap: lower {} and upper {}{}", Interval(*lower.ci),
                           Interval(*upper.ci), Resolution(tolerance));
    return v;
  }
  v.verdict = Verdict::kGap;
  v.gap = upper.exponent - lower.exponent;
  v.least_gap = ulow - high;
  v.reason = fmt::format(
                 "upper side exceeds lower side by {:.3g} (at least {:.3g}): lower {}, "
                 "upper {}",
                 v.gap, v.least_gap, Interval(*lower.ci), Interval(*upper.ci)) +
             Resolution(tolerance);
  return v;
}

VerdictResult DecideRateVerdict(const ExponentEstimate& lower, const ExponentEstimate& upper,
                                double paper, double tolerance) {
  if (!lower.ci) return Inconclusive("lower side: " + lower.reason);
  const auto [low, high] = *lower.ci;
  VerdictResult v = Inconclusive("");
  if (!std::isfinite(paper))
    return Inconclusive(
        fmt::format("no paper rate for this row; lower side's interval {}", Interval(*lower.ci)));
  // Spanning 0 first: an interval such as [−0.2, 0.1] lies above −1/3 but does not show any
  // decay, so it can contradict nothing.
  if (SpansZero(*lower.ci, tolerance))
    return Inconclusive(
        fmt::format("lower side's interval {} spans 0: decay not shown", Interval(*lower.ci)));
  if (low > paper + tolerance) {
    v.verdict = Verdict::kContradicts;
    v.reason = fmt::format(
        "lower side's interval {} lies above the paper's exponent {:.3g}: the error decays "
        "slower than the rate allows",
        Interval(*lower.ci), paper);
    return v;
  }
  if (low <= paper + tolerance && paper <= high + tolerance) {
    v.verdict = Verdict::kTight;
    v.reason = fmt::format("lower side's interval {} contains the paper's exponent {:.3g}{}",
                           Interval(*lower.ci), paper, Resolution(tolerance));
    return v;
  }
  v.verdict = Verdict::kGap;
  v.gap = paper - lower.exponent;
  v.least_gap = paper - high;
  std::string upper_text = "the upper side has no interval (" + upper.reason + ")";
  if (upper.ci)
    upper_text =
        upper.ci->second < paper - tolerance
            ? fmt::format(
                  "the certified upper side on the same inputs {} lies below it too (other "
                  "inputs may still decay slower)",
                  Interval(*upper.ci))
            : fmt::format(
                  "the certified upper side on the same inputs {} does not exclude "
                  "the paper's rate, so stronger test functions on these inputs, or "
                  "other inputs, may close the gap",
                  Interval(*upper.ci));
  v.reason = fmt::format(
      "lower side's interval {} lies below the paper's exponent {:.3g} by {:.3g} (at least "
      "{:.3g}): the error on the inputs tried decays faster than the rate; {}",
      Interval(*lower.ci), paper, v.gap, v.least_gap, upper_text);
  return v;
}

}  // namespace ltsim
