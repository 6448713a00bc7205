// Censoring, intervals, joint fits and trends of the study statistics (docs/statistics.md).
#include "ltsim/study/fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ltsim/study/fit_report.h"

namespace ltsim {
namespace {

SeriesPoint Point(double x, std::vector<double> ys, Censoring c = Censoring::kNone) {
  SeriesPoint p;
  p.value = p.regressor = x;
  for (double y : ys) p.samples.push_back({y, c});
  return p;
}

// y = 3·x^2 exactly at x = 1, 2, 4, 8.
std::vector<SeriesPoint> Quadratic() {
  std::vector<SeriesPoint> s;
  for (double x : {1.0, 2.0, 4.0, 8.0}) s.push_back(Point(x, {3 * x * x}));
  return s;
}

TEST(FitLine, RecoversAnExactLine) {
  // y = −1.5 + 0.25·x on 6 points: only rounding, far below 1e-12.
  const std::vector<double> x = {-2, 0, 1, 3.5, 7, 11};
  std::vector<double> y;
  for (double v : x) y.push_back(-1.5 + 0.25 * v);
  const LineFit line = FitLine(x, y);
  EXPECT_NEAR(line.slope, 0.25, 1e-12);
  EXPECT_NEAR(line.intercept, -1.5, 1e-12);
  EXPECT_GT(line.sxx, 0.0);
}

TEST(FitLine, NoSpreadOrANonFiniteValueGivesNaN) {
  EXPECT_TRUE(std::isnan(FitLine({2, 2, 2}, {1, 2, 3}).slope));
  EXPECT_TRUE(std::isnan(FitLine({1, 2}, {1, std::nan("")}).slope));
  EXPECT_TRUE(std::isnan(FitLine({}, {}).slope));
}

TEST(FitLine, IdenticalXWhoseMeanRoundsOffGiveNaN) {
  // Six x = 0.1: Σ 0.1/6 rounds to 0.09999999999999999, so Σ (x − mean)² is about 1e-33 > 0;
  // the x have no spread all the same, and the line is NaN with sxx = 0.
  const std::vector<double> x(6, 0.1);
  double mean = 0;
  for (double v : x) mean += v / 6;
  ASSERT_NE(mean, 0.1);  // the rounding this test is about
  const LineFit line = FitLine(x, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(std::isnan(line.slope));
  EXPECT_TRUE(std::isnan(line.intercept));
  EXPECT_EQ(line.sxx, 0.0);
}

TEST(FitSeries, ExactPowerLawHasItsExponentAndANarrowInterval) {
  const ExponentEstimate e = FitSeries(Quadratic(), {});
  EXPECT_NEAR(e.exponent, 2.0, 1e-12);
  ASSERT_TRUE(e.ci.has_value());
  EXPECT_NEAR(e.ci->first, 2.0, 1e-9);
  EXPECT_NEAR(e.ci->second, 2.0, 1e-9);
  EXPECT_EQ(e.points_used, 4);
}

TEST(FitSeries, ACappedPointNeverEntersTheFit) {
  std::vector<SeriesPoint> s = Quadratic();
  // The cap: |x| = 100 was reached at x = 16 (the true value would be 768).
  s.push_back(Point(16, {100}, Censoring::kAbove));
  const ExponentEstimate e = FitSeries(s, {});
  EXPECT_NEAR(e.exponent, 2.0, 1e-12);
  EXPECT_EQ(e.points_censored, 1);
  EXPECT_EQ(e.used, (std::vector<int>{0, 1, 2, 3}));
  // Moving the capped value changes nothing.
  s.back().samples[0].value = 1e9;
  EXPECT_EQ(FitSeries(s, {}).exponent, e.exponent);
  // One capped seed censors its point.
  s[3].samples.push_back({5, Censoring::kAbove});
  EXPECT_EQ(FitSeries(s, {}).points_censored, 2);
}

TEST(FitSeries, FewUncensoredPointsGiveNoInterval) {
  std::vector<SeriesPoint> s = {Point(1, {1}), Point(2, {4}), Point(4, {10}, Censoring::kAbove),
                                Point(8, {10}, Censoring::kAbove)};
  const ExponentEstimate e = FitSeries(s, {});
  EXPECT_FALSE(e.ci.has_value());
  EXPECT_NE(e.reason.find("too few uncensored points"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("2 censored"), std::string::npos) << e.reason;
}

TEST(FitSeries, FloorPointsAreBoundsToo) {
  std::vector<SeriesPoint> s = {Point(1, {2}, Censoring::kBelow), Point(2, {2}, Censoring::kBelow),
                                Point(4, {2}, Censoring::kBelow)};
  const ExponentEstimate e = FitSeries(s, {});
  EXPECT_FALSE(e.ci.has_value());
  EXPECT_EQ(DecideTrend(s, e).trend, Trend::kDegenerate);
}

TEST(FitSeries, NoisyFlatSeriesHasAnIntervalAroundZero) {
  std::vector<SeriesPoint> s = {Point(1, {10, 12, 9}), Point(2, {11, 9, 13}), Point(4, {9, 12, 10}),
                                Point(8, {12, 10, 9})};
  FitOptions o;
  o.seed = 7;
  const ExponentEstimate e = FitSeries(s, o);
  ASSERT_TRUE(e.ci.has_value());
  EXPECT_LT(e.ci->first, 0);
  EXPECT_GT(e.ci->second, 0);
  // The envelope contains both intervals.
  EXPECT_LE(e.ci->first, e.t_interval->first);
  EXPECT_LE(e.ci->first, e.bootstrap_interval->first);
  EXPECT_GE(e.ci->second, e.t_interval->second);
  EXPECT_EQ(DecideTrend(s, e).trend, Trend::kNotShown);
}

TEST(FitSeries, BootstrapIsAFunctionOfTheSeed) {
  std::vector<SeriesPoint> s = {Point(1, {10, 14}), Point(2, {30, 45}), Point(4, {150, 90}),
                                Point(8, {700, 400})};
  FitOptions o;
  o.seed = 3;
  const ExponentEstimate a = FitSeries(s, o), b = FitSeries(s, o);
  EXPECT_EQ(a.bootstrap_interval, b.bootstrap_interval);
  o.seed = 4;
  EXPECT_NE(FitSeries(s, o).bootstrap_interval, a.bootstrap_interval);
}

TEST(FitSeries, LogLinearFitsTheMarginSlope) {
  // N = 2^(p/γ) with p = 8: ln N = (8 ln 2)/γ, regressor 1/γ.
  std::vector<SeriesPoint> s;
  for (double inv_gamma : {0.25, 0.5, 1.0, 1.5})
    s.push_back(Point(inv_gamma, {std::exp2(8 * inv_gamma)}));
  FitOptions o;
  o.scale = FitScale::kLogLinear;
  EXPECT_NEAR(FitSeries(s, o).exponent, 8 * std::log(2.0), 1e-9);
}

TEST(FitJoint, RecoversTwoExponentsAndDropsCensoredObservations) {
  std::vector<JointObservation> obs;
  for (double a : {1.0, 2.0, 4.0})
    for (double b : {1.0, 3.0, 9.0})
      obs.push_back(
          {{std::log(a), std::log(b)}, 5 * a * a * b * b * b * (1 + 0.01 * a - 0.01 * b)});
  obs.push_back({{std::log(8.0), std::log(9.0)}, 1.0, Censoring::kAbove});
  const JointFit fit = FitJoint({"scale", "eps"}, obs);
  EXPECT_EQ(fit.observations_used, 9);
  EXPECT_EQ(fit.observations_censored, 1);
  EXPECT_NEAR(fit.coefficients[0], 2, 0.05);
  EXPECT_NEAR(fit.coefficients[1], 3, 0.05);
  ASSERT_TRUE(fit.ci[0].has_value());
  EXPECT_LT(fit.ci[0]->first, fit.coefficients[0]);
  EXPECT_GT(fit.ci[0]->second, fit.coefficients[0]);
  // Only one parameter varies: rank-deficient, no intervals.
  std::vector<JointObservation> line;
  for (double a : {1.0, 2.0, 4.0, 8.0}) line.push_back({{std::log(a), 0.0}, a});
  EXPECT_FALSE(FitJoint({"scale", "eps"}, line).ci[0].has_value());
}

TEST(DecideTrend, RisesOnlyWhenMonotoneWithinTheSpread) {
  std::vector<SeriesPoint> s = {Point(1, {10, 12}), Point(2, {40, 45}), Point(4, {150, 170}),
                                Point(8, {600, 700})};
  const ExponentEstimate e = FitSeries(s, {});
  EXPECT_EQ(DecideTrend(s, e).trend, Trend::kRises);
  // Overlapping spreads still allow a non-decreasing series.
  s[2] = Point(4, {30, 170});
  EXPECT_TRUE(DecideTrend(s, FitSeries(s, {})).monotone);
  // A point below every value of an earlier one: the series goes back down.
  s[2] = Point(4, {20, 30});
  const TrendVerdict v = DecideTrend(s, FitSeries(s, {}));
  EXPECT_FALSE(v.monotone);
  EXPECT_EQ(v.trend, Trend::kNotShown);
}

TEST(SlopeFitJson, AnEstimateWithAnIntervalIsWrittenAsSlopeAndItsInterval) {
  // 3·x² with scatter (×1.3 at x = 2, ×0.8 at x = 4): an interval of some width around b.
  std::vector<SeriesPoint> s = Quadratic();
  s[1].samples[0].value *= 1.3;
  s[2].samples[0].value *= 0.8;
  const ExponentEstimate e = FitSeries(s, {});
  ASSERT_TRUE(e.ci.has_value());
  ASSERT_LT(e.ci->first, e.exponent);
  ASSERT_GT(e.ci->second, e.exponent);
  const io::Json fit = SlopeFitJson(e);
  std::vector<std::string> keys;
  for (const auto& item : fit.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"slope", "intercept", "lower", "upper", "level",
                                            "standard_error", "points"}));
  EXPECT_EQ(fit["slope"].get<double>(), e.exponent);
  EXPECT_EQ(fit["intercept"].get<double>(), e.intercept);
  EXPECT_EQ(fit["lower"].get<double>(), e.ci->first);
  EXPECT_EQ(fit["upper"].get<double>(), e.ci->second);
  EXPECT_EQ(fit["level"].get<double>(), 0.95);
  EXPECT_TRUE(fit["standard_error"].is_null());
  EXPECT_EQ(fit["points"], 4);
  // Two points: an exponent but no interval, so slope, intercept, lower and upper are null.
  s.resize(2);
  const ExponentEstimate two = FitSeries(s, {});
  ASSERT_FALSE(two.ci.has_value());
  ASSERT_TRUE(std::isfinite(two.exponent));
  const io::Json none = SlopeFitJson(two);
  for (const char* key : {"slope", "intercept", "lower", "upper"})
    EXPECT_TRUE(none[key].is_null()) << key;
  EXPECT_EQ(none["points"], 2);
}

}  // namespace
}  // namespace ltsim
