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

}  // namespace
}  // namespace ltsim
