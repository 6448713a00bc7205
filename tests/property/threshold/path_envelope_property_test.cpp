// The pairing's envelope minimum (docs/theory.md §11.5, item 5): the early-exit versions against
// the reference that evaluates every candidate point over every line, bit for bit, on random
// lines with many ties, crossings at shared points, signed zeros, infinities and NaNs.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "threshold/path_envelope.h"

namespace ltsim {
namespace {

using threshold::EnvelopeLine;

// A value from a small grid (ties and concurrent crossings are common), a wide range, or a
// special value.
rc::Gen<double> Value() {
  return rc::gen::weightedOneOf<double>({
      {6, rc::gen::map(rc::gen::inRange(-4, 5), [](int k) { return 0.25 * k; })},
      {3, rc::gen::map(rc::gen::inRange(-1000000, 1000001), [](int k) { return k * 1e-6; })},
      {1, rc::gen::element(0.0, -0.0, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 1e-300, -1e-300)},
  });
}

std::uint64_t Bits(double x) { return std::bit_cast<std::uint64_t>(x); }

RC_GTEST_PROP(PathEnvelopeProperty, EarlyExitsGiveTheReferenceBitForBit, ()) {
  const int n = *rc::gen::inRange(0, 40);
  std::vector<EnvelopeLine> lines;
  for (int i = 0; i < n; ++i) lines.emplace_back(*Value(), *Value());
  const auto ref = threshold::EnvelopeMinimumReference(lines);
  const auto fast = threshold::EnvelopeMinimum(lines);
  RC_ASSERT(Bits(fast.first) == Bits(ref.first));
  RC_ASSERT(Bits(fast.second) == Bits(ref.second));
  if (lines.empty()) return;
  for (const double bound : {0.0, *Value()}) {
    if (std::isnan(bound)) continue;
    RC_ASSERT(threshold::EnvelopeMinimumAbove(lines, bound) == (ref.first > bound));
  }
}

// Kelley's step gives up on lines that are not finite: an infinite d0 makes the crossing
// d0/(d0 − d1) NaN, where the envelope's value is −∞ (NaN values are ignored by the maximum), so
// the minimum would be (−∞, NaN) and the pairing would run its programmes at s = NaN.
TEST(PathEnvelope, KelleyStepGivesUpOnAnInfiniteLine) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::vector<EnvelopeLine> lines{{kInf, 0.0}, {0.0, 1.0}};
  for (const bool reference : {true, false}) {
    const auto raw =
        reference ? threshold::EnvelopeMinimumReference(lines) : threshold::EnvelopeMinimum(lines);
    EXPECT_TRUE(std::isnan(raw.second)) << "the reason for the check";
    EXPECT_FALSE(threshold::KelleyStep(lines, reference).has_value());
  }
  const std::vector<EnvelopeLine> finite{{1.0, -1.0}, {-1.0, 1.0}};
  for (const bool reference : {true, false}) {
    const auto step = threshold::KelleyStep(finite, reference);
    ASSERT_TRUE(step.has_value());
    EXPECT_EQ(step->first, 0.0);
    EXPECT_EQ(step->second, 0.5);
  }
}

// On random lines: nothing exactly when a line is not finite or the minimiser is not; otherwise
// the reference's pair, with s ∈ [0, 1], in both modes.
RC_GTEST_PROP(PathEnvelopeProperty, KelleyStepIsTheReferenceOrNothing, ()) {
  const int n = *rc::gen::inRange(0, 12);
  std::vector<EnvelopeLine> lines;
  bool finite = true;
  for (int i = 0; i < n; ++i) {
    lines.emplace_back(*Value(), *Value());
    finite = finite && std::isfinite(lines.back().first) && std::isfinite(lines.back().second);
  }
  const auto ref = threshold::EnvelopeMinimumReference(lines);
  for (const bool reference : {true, false}) {
    const auto step = threshold::KelleyStep(lines, reference);
    RC_ASSERT(step.has_value() == (finite && std::isfinite(ref.second) && !std::isnan(ref.first)));
    if (!step) continue;
    RC_ASSERT(Bits(step->first) == Bits(ref.first));
    RC_ASSERT(Bits(step->second) == Bits(ref.second));
    RC_ASSERT(step->second >= 0.0 && step->second <= 1.0);
  }
}

}  // namespace
}  // namespace ltsim
