// The minimum over s ∈ [0, 1] of the upper envelope of lines, as the pairing of
// docs/theory.md §11.5 (item 5) uses it: Kelley's step and the early give-up.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace ltsim::threshold {

/// A line on s ∈ [0, 1]: (value at s = 0, value at s = 1).
using EnvelopeLine = std::pair<double, double>;

namespace envelope_detail {

// The candidate points in their order: 0, 1, then the crossings of the pairs p < q that lie in
// (0, 1) (d0·d1 < 0), each computed as d0/(d0 − d1). `visit(t)` returns false to stop.
template <class Visit>
void ForEachPoint(const std::vector<EnvelopeLine>& lines, Visit&& visit) {
  if (!visit(0.0) || !visit(1.0)) return;
  for (std::size_t p = 0; p < lines.size(); ++p)
    for (std::size_t q = p + 1; q < lines.size(); ++q) {
      const double d0 = lines[p].first - lines[q].first;
      const double d1 = lines[p].second - lines[q].second;
      if (d0 * d1 < 0 && !visit(d0 / (d0 - d1))) return;
    }
}

inline double At(const EnvelopeLine& line, double t) {
  return (1 - t) * line.first + t * line.second;
}

}  // namespace envelope_detail

/// The reference: every candidate point (0, 1 and every crossing in (0, 1)), the envelope
/// evaluated at each over every line, the first strict minimum kept. O(L³) for L lines.
inline std::pair<double, double> EnvelopeMinimumReference(const std::vector<EnvelopeLine>& lines) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double best_s = 0.0, best_v = kInf;
  std::vector<double> points{0.0, 1.0};
  for (std::size_t p = 0; p < lines.size(); ++p)
    for (std::size_t q = p + 1; q < lines.size(); ++q) {
      const double d0 = lines[p].first - lines[q].first;
      const double d1 = lines[p].second - lines[q].second;
      if (d0 * d1 < 0) points.push_back(d0 / (d0 - d1));
    }
  for (double t : points) {
    double v = -kInf;
    for (const auto& [l0, l1] : lines) v = std::max(v, (1 - t) * l0 + t * l1);
    if (v < best_v) {
      best_v = v;
      best_s = t;
    }
  }
  return {best_v, best_s};
}

/// The same pair (minimum, s) as EnvelopeMinimumReference, bit for bit, with less work: a point
/// is kept only when its envelope value is below the best so far, so its evaluation stops at
/// the first line that reaches the best (the line that did so last is tried first); a point
/// that is kept is evaluated over every line in the reference's order (docs/theory.md §11.5).
inline std::pair<double, double> EnvelopeMinimum(const std::vector<EnvelopeLine>& lines) {
  using envelope_detail::At;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double best_s = 0.0, best_v = kInf;
  std::size_t hint = 0;
  envelope_detail::ForEachPoint(lines, [&](double t) {
    // v(t) ≥ any one line's value, so one value ≥ best_v rejects t (NaN values are ignored by
    // the maximum, and never reject).
    if (hint < lines.size() && At(lines[hint], t) >= best_v) return true;
    double v = -kInf;
    for (std::size_t p = 0; p < lines.size(); ++p) {
      v = std::max(v, At(lines[p], t));
      if (v >= best_v) {  // a prefix maximum is ≤ the maximum
        hint = p;
        return true;
      }
    }
    if (v < best_v) {  // as the reference decides it (no line: v = −∞ = best_v)
      best_v = v;
      best_s = t;
    }
    return true;
  });
  return {best_v, best_s};
}

/// Whether EnvelopeMinimumReference(lines).first > bound, decided with early exits: true when
/// at every candidate point some line is above `bound`, false at the first point where none is.
/// `lines` must not be empty.
inline bool EnvelopeMinimumAbove(const std::vector<EnvelopeLine>& lines, double bound) {
  using envelope_detail::At;
  bool above = true;
  std::size_t hint = 0;
  envelope_detail::ForEachPoint(lines, [&](double t) {
    if (At(lines[hint], t) > bound) return true;
    for (std::size_t p = 0; p < lines.size(); ++p)
      if (At(lines[p], t) > bound) {
        hint = p;
        return true;
      }
    above = false;  // the envelope at t is ≤ bound, so is the minimum
    return false;
  });
  return above;
}

/// Kelley's step of the pairing: the pair (minimum, s) of EnvelopeMinimumReference (when
/// `reference`) or EnvelopeMinimum, or nothing when a line is not finite or the minimiser s is
/// not finite (an infinite difference d0 makes a crossing NaN, whose envelope value is −∞ with
/// NaN ignored): then no s is to be trusted and the pairing gives up (docs/theory.md §11.5,
/// "2026-12-04, speed-ups that change no bit").
inline std::optional<std::pair<double, double>> KelleyStep(const std::vector<EnvelopeLine>& lines,
                                                           bool reference) {
  for (const auto& [l0, l1] : lines)
    if (!std::isfinite(l0) || !std::isfinite(l1)) return std::nullopt;
  const auto step = reference ? EnvelopeMinimumReference(lines) : EnvelopeMinimum(lines);
  if (!std::isfinite(step.second) || std::isnan(step.first)) return std::nullopt;
  return step;
}

}  // namespace ltsim::threshold
