// Every family's closed form against the exact threshold, over each family's whole parameter range
// (docs/families.md, docs/tightness.md §2): a member the builder accepts records the T* that
// `threshold` certifies, or (tightness pairs) records none.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "ltsim/construct/families.h"
#include "ltsim/core/error.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/tightness_pairs.h"

namespace ltsim {
namespace {

// Log-uniform in [lo, hi].
double LogUniform(double lo, double hi) {
  const double u = *rc::gen::inRange(0, 1 << 20) / static_cast<double>(1 << 20);
  return std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
}

// Half the cases take "round" decimal values (k/10, j/100, 1 + i/100), where a fraction k/n lands
// exactly on an end of the disagreement interval, the case that broke the bump's closed form.
double Round(double lo, double hi, double step) {
  const int steps = static_cast<int>(std::floor((hi - lo) / step));
  return lo + step * *rc::gen::inRange(0, steps + 1);
}

// The exact threshold up to n. Some members take the pruned search long (a narrow hole at long
// lengths): a budget of 3·10^6 statistics, and cases it stops are discarded (counted by tag).
ThresholdResult Exact(const Transformer& f, const Transformer& g, double eps, std::uint64_t n) {
  ThresholdOptions o;
  o.epsilon = eps;
  o.max_length = n;
  o.threads = 1;
  o.max_evaluations = 3'000'000;
  const ThresholdResult r = FindThreshold(f, g, o);
  RC_PRE(r.complete);
  return r;
}

// The member, or nothing when the builder refuses its parameters (a boundary or out of the
// derivation's hypotheses: an InputError naming why).
std::optional<FamilyMember> Build(const std::string& family, const FamilyValues& values) {
  try {
    return BuildFamilyMember(family, values);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void ExpectExact(const FamilyMember& m, std::uint64_t limit) {
  RC_PRE(m.first_disagreement <= limit);
  const ThresholdResult r = Exact(m.f, m.g, m.eps, m.first_disagreement);
  RC_ASSERT(r.exhaustive);
  RC_ASSERT(r.first_disagreement.has_value());
  RC_ASSERT(*r.first_disagreement == m.first_disagreement);
  // The recorded gap at T* is the largest there (to the verdict's 1e-9).
  RC_ASSERT(std::abs(r.gap - m.gap_at_first_disagreement) <= 1e-9 * (1 + r.gap));
}

// bump: ε in [1e-6, 1], Δ in [1, 3], κ in [1.01, 100], and the slope s = R·(2κ − 1)ε from a
// ratio R ≈ T*/Δ in [1, 1000] (so T* stays within reach of the exact search; s over its range
// [1e-3, 1e9] otherwise), or round decimal values of all three; T* ≤ 3000.
RC_GTEST_PROP(FamiliesProperty, BumpClosedFormIsTheExactThreshold, ()) {
  const bool round = *rc::gen::arbitrary<bool>();
  const double eps = round ? Round(0.01, 0.5, 0.01) : LogUniform(1e-6, 1);
  const double height = round ? Round(1.01, 1.5, 0.01) : LogUniform(1.01, 100);
  const double slope = round ? Round(0.1, 10, 0.1) : LogUniform(1, 1000) * (2 * height - 1) * eps;
  const double period = *rc::gen::inRange(1, 4);
  const auto m =
      Build("bump", {{"slope", slope}, {"eps", eps}, {"period", period}, {"height", height}});
  RC_TAG(round ? "round values" : "log-uniform", m ? "built" : "refused");
  RC_PRE(m.has_value());
  ExpectExact(*m, 3000);
}

// precision: p in [1, 64], γ in [p/9, 16] (T* = 2^(p/γ) ≤ 2^9; every γ in [0.11, 16]),
// q − p in [1, 64], ε in [1e-6, 0.5].
RC_GTEST_PROP(FamiliesProperty, PrecisionClosedFormIsTheExactThreshold, ()) {
  const double bits = *rc::gen::inRange(1, 65);
  const double gamma = *rc::gen::arbitrary<bool>() ? std::max(bits / 9, Round(0.05, 4, 0.05))
                                                   : LogUniform(std::max(0.01, bits / 9), 16);
  const double extra = *rc::gen::inRange(1, 65);
  const double eps = LogUniform(1e-6, 0.5);
  const auto m =
      Build("precision", {{"bits", bits}, {"gamma", gamma}, {"extra-bits", extra}, {"eps", eps}});
  RC_TAG(m ? "built" : "refused");
  RC_PRE(m.has_value());
  ExpectExact(*m, 600);
}

// nested: S in {2, 3}, ε in [1e-6, 1], κ in [1.5, 100], and a = r·(κ − 1)ε from a ratio r
// with T* ≈ (S·r)^S small enough for the exact threshold (S = 2: ≤ 3000, S = 3: ≤ 400; S = 4
// starts above 256, where its 4·10^6 statistics a length are beyond a test).
RC_GTEST_PROP(FamiliesProperty, NestedClosedFormIsTheExactThreshold, ()) {
  const int S = *rc::gen::inRange(2, 4);
  const double top = S == 2 ? 27 : 2.4;
  const double height = LogUniform(S == 2 ? 1.5 : 1.75, 100);
  const double floor_r = height / (height - 1);  // a > κε
  const double r = LogUniform(floor_r * 1.001, top);
  // The slope a = r·(κ − 1)ε must be at least 1e-3 (its range): ε from 1e-3/(r(κ − 1)) up.
  const double eps = LogUniform(std::max(1e-6, 1.001e-3 / (r * (height - 1))), 1);
  const double slope = r * (height - 1) * eps;
  const auto m =
      Build("nested", {{"alphabet", S}, {"slope", slope}, {"eps", eps}, {"height", height}});
  RC_PRE(m.has_value());
  RC_TAG(S);
  ExpectExact(*m, S == 2 ? 3000 : 400);
}

// The tightness bump pair (docs/tightness.md §2): S in [2, 3], Δ in [1, 2], τ in [0, 1], h, ε,
// offset; `first_disagreement` is the exact T* or 0 (a statistic at the boundary: no closed form
// claimed).
RC_GTEST_PROP(FamiliesProperty, TightnessBumpPredictionIsTheExactThreshold, ()) {
  const int S = *rc::gen::inRange(2, 4), D = *rc::gen::inRange(1, 3), tau = *rc::gen::inRange(0, 2);
  const bool round = *rc::gen::arbitrary<bool>();
  const double eps = round ? Round(0.01, 0.2, 0.01) : LogUniform(1e-3, 0.5);
  const double slope = round ? Round(1, 40, 0.5) : LogUniform(1, 1e4);
  const double offset = round ? Round(0, 0.95, 0.05) : LogUniform(1e-3, 0.999);
  FamilyMember p;
  try {
    p = test::OffsetBumpPair(S, D, tau, slope, eps, offset);
  } catch (const InputError&) {
    RC_DISCARD("outside the family's range");
  }
  RC_TAG(p.first_disagreement > 0 ? "closed form" : "boundary: none");
  RC_PRE(p.first_disagreement > 0 && p.first_disagreement <= (S == 2 ? 2000 : 300));
  const ThresholdResult r = Exact(p.f, p.g, eps, p.first_disagreement);
  RC_ASSERT(r.first_disagreement.has_value());
  RC_ASSERT(*r.first_disagreement == p.first_disagreement);
}

// The tightness margin pair: γ in (0, 0.8], p in [1, 30], η in (0, 0.1], at ε = 0.45 (its
// derivation needs ε < 1/2); T* = the first length g drops its 1-keys.
RC_GTEST_PROP(FamiliesProperty, TightnessMarginPredictionIsTheExactThreshold, ()) {
  const int bits = *rc::gen::inRange(1, 10);
  const double margin = LogUniform(std::max(0.05, bits / 12.0), 0.8), eta = LogUniform(1e-3, 0.1);
  const FamilyMember p = test::MarginPair(margin, bits, eta);
  // Without a closed form (no integer in [T_hard(g), T_hard(f))) nothing may disagree before f
  // drops too: checked up to 2^(p/γ) + 2.
  RC_TAG(p.first_disagreement > 0 ? "closed form" : "no integer in the window");
  const auto n = p.first_disagreement > 0
                     ? p.first_disagreement
                     : static_cast<std::uint64_t>(std::exp2(bits / margin) + 2);
  RC_PRE(n <= 5000);
  const ThresholdResult r = Exact(p.f, p.g, 0.45, n);
  if (p.first_disagreement == 0) {
    RC_ASSERT(!r.first_disagreement.has_value());
    return;
  }
  RC_ASSERT(r.first_disagreement.has_value());
  RC_ASSERT(*r.first_disagreement == p.first_disagreement);
}

// The positional-margin pair: γ_pos in (0, 1), slope, ε, κ in (1, 10] (T* ≤ 400: one length a
// task under log scaling).
RC_GTEST_PROP(FamiliesProperty, PositionalMarginPredictionIsTheExactThreshold, ()) {
  // δ = (κ − 1)ε/slope ≥ 1/(1 + 400^γ) keeps T* ≈ ((1 − δ)/δ)^(1/γ) ≤ 400.
  const double gamma = LogUniform(0.2, 0.95), eps = LogUniform(1e-3, 0.5);
  const double height = LogUniform(1.01, 10);
  const double delta = LogUniform(1.01 / (1 + std::pow(400.0, gamma)), 0.5);
  const double slope = (height - 1) * eps / delta;
  FamilyMember p;
  try {
    p = test::PositionalMarginPair(gamma, slope, eps, height);
  } catch (const InputError&) {
    RC_DISCARD("outside the family's range");
  }
  RC_PRE(p.first_disagreement <= 400);
  const ThresholdResult r = Exact(p.f, p.g, eps, p.first_disagreement);
  RC_ASSERT(r.first_disagreement.has_value());
  RC_ASSERT(*r.first_disagreement == p.first_disagreement);
}

}  // namespace
}  // namespace ltsim
