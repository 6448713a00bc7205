// Unit tests of the exponent fit and of a tiny sweep (fixed seeds).
#include "ltsim/bounds/sweep.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

TEST(FitExponent, RecoversAnExactPowerLawWithAZeroWidthInterval) {
  const std::vector<double> x = {1, 2, 4, 8, 16};
  std::vector<double> y;
  for (double v : x) y.push_back(3.0 * std::pow(v, 2.5));
  const ExponentFit fit = FitExponent(x, y);
  // Exact data: only rounding of log/exp, far below 1e-9.
  EXPECT_NEAR(fit.slope, 2.5, 1e-9);
  EXPECT_NEAR(fit.intercept, std::log(3.0), 1e-9);
  EXPECT_NEAR(fit.upper - fit.lower, 0.0, 1e-6);
  EXPECT_EQ(fit.points, 5);
}

TEST(FitExponent, IntervalContainsTheTrueExponentUnderNoise) {
  // Fixed multiplicative noise exp(±0.1) alternating: the OLS slope moves by well under the
  // 95% interval's half-width, which must contain the true exponent −2.
  std::vector<double> x, y;
  for (int k = 0; k < 8; ++k) {
    x.push_back(std::pow(2.0, k));
    y.push_back(100.0 * std::pow(x.back(), -2.0) * std::exp(k % 2 ? 0.1 : -0.1));
  }
  const ExponentFit fit = FitExponent(x, y);
  EXPECT_LT(fit.lower, -2.0);
  EXPECT_GT(fit.upper, -2.0);
  EXPECT_NEAR(fit.slope, -2.0, 0.1);
}

TEST(FitExponent, TwoPointsHaveNoInterval) {
  const ExponentFit fit = FitExponent({1, 10}, {5, 50});
  EXPECT_NEAR(fit.slope, 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(fit.lower) && std::isnan(fit.upper));
}

SweepOptions Tiny() {
  SweepOptions o;
  o.parameter = "alphabet";
  o.values = {2, 3, 4};
  o.pairs = 2;
  o.x_length = 2000;
  o.fixed_n = 100;
  o.seed = 7;
  return o;
}

TEST(RunSweep, TinySweepIsConsistentAndReproducible) {
  const SweepResult r = RunSweep(Tiny());
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_EQ(r.paper_exponent, 6);
  double largest_ratio = 0;
  for (const SweepPoint& p : r.points) {
    ASSERT_EQ(p.pairs.size(), 2u);
    for (const SweepPair& q : p.pairs) EXPECT_LE(q.needed, p.needed);
    EXPECT_EQ(p.pairs[p.witness].needed, p.needed);
    EXPECT_GE(p.needed, 1u);
    EXPECT_LE(p.needed, 2000u);
    EXPECT_GT(p.bound, 0);  // Tiny()'s seed draws some pair with L > 0 at every point
    EXPECT_DOUBLE_EQ(p.ratio, p.needed / p.bound);
    largest_ratio = std::max(largest_ratio, p.ratio);
  }
  EXPECT_DOUBLE_EQ(r.empirical_constant, largest_ratio);
  EXPECT_DOUBLE_EQ(r.points[r.constant_point].ratio, largest_ratio);
  const SweepResult again = RunSweep(Tiny());
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    EXPECT_EQ(again.points[i].needed, r.points[i].needed);
    EXPECT_EQ(again.points[i].pairs[again.points[i].witness].seed,
              r.points[i].pairs[r.points[i].witness].seed);
  }
}

TEST(RunSweep, TheNeededLengthMeetsEpsAndTheEpsSweepReusesItsPairs) {
  SweepOptions o = Tiny();
  o.parameter = "eps";
  o.values = {0.001, 0.01, 0.1};
  const SweepResult r = RunSweep(o);
  // The same pairs at every ε: a smaller ε can only need as much or more (binary search on a
  // monotone condition; the grid is the same).
  EXPECT_EQ(r.points[0].pairs[0].seed, r.points[2].pairs[0].seed);
  EXPECT_GE(r.points[0].needed, r.points[2].needed);
}

TEST(RunSweep, BadOptionsAreInputErrors) {
  SweepOptions o = Tiny();
  o.parameter = "width";
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.values = {2};
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.values = {2, 2.5};
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.parameter = "locality";
  o.values = {0, 1};
  EXPECT_THROW(RunSweep(o), InputError);
}

}  // namespace
}  // namespace ltsim
