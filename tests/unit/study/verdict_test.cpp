// Each tightness verdict on constructed series (docs/statistics.md "Verdicts").
#include "ltsim/study/verdict.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ltsim {
namespace {

// y = c·x^b·(1 + noise_k) at x = 1, 2, 4, 8, 16 with three seeds per point.
ExponentEstimate Side(double b, double noise) {
  std::vector<SeriesPoint> s;
  int k = 0;
  for (double x : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    SeriesPoint p;
    p.value = p.regressor = x;
    for (int seed = 0; seed < 3; ++seed, ++k)
      p.samples.push_back(
          {10 * std::pow(x, b) * (1 + noise * std::sin(1.7 * k)), Censoring::kNone});
    s.push_back(p);
  }
  FitOptions o;
  o.seed = 11;
  return FitSeries(s, o);
}

TEST(DecideVerdict, TightWhenTheIntervalsOverlap) {
  const VerdictResult v = DecideVerdict(Side(2, 0.05), Side(2, 0), 2);
  EXPECT_EQ(v.verdict, Verdict::kTight) << v.reason;
}

TEST(DecideVerdict, GapWithItsSize) {
  const VerdictResult v = DecideVerdict(Side(1, 0.05), Side(2, 0), 2);
  EXPECT_EQ(v.verdict, Verdict::kGap) << v.reason;
  EXPECT_NEAR(v.gap, 1.0, 0.1);
  EXPECT_GT(v.least_gap, 0);
  EXPECT_LE(v.least_gap, v.gap);
}

TEST(DecideVerdict, ContradictsWhenTheLowerSideIsAboveThePaper) {
  const VerdictResult v = DecideVerdict(Side(3, 0.05), Side(3, 0), 2);
  EXPECT_EQ(v.verdict, Verdict::kContradicts) << v.reason;
  EXPECT_NE(v.reason.find("paper"), std::string::npos);
}

TEST(DecideVerdict, ContradictsWhenTheLowerSideIsAboveTheCertificate) {
  const VerdictResult v = DecideVerdict(Side(2, 0.01), Side(1, 0), 7);
  EXPECT_EQ(v.verdict, Verdict::kContradicts) << v.reason;
  EXPECT_NE(v.reason.find("certified upper side"), std::string::npos);
}

TEST(DecideVerdict, InconclusiveWhenTheLowerIntervalSpansZero) {
  const ExponentEstimate flat = Side(0, 0.3);
  ASSERT_TRUE(flat.ci.has_value());
  ASSERT_LT(flat.ci->first, 0);
  ASSERT_GT(flat.ci->second, 0);
  const VerdictResult v = DecideVerdict(flat, Side(2, 0), 2);
  EXPECT_EQ(v.verdict, Verdict::kInconclusive);
  EXPECT_NE(v.reason.find("spans 0"), std::string::npos) << v.reason;
}

TEST(DecideVerdict, InconclusiveWithoutAnInterval) {
  ExponentEstimate none;
  none.reason = "too few uncensored points (2 distinct of 5; 3 censored)";
  const VerdictResult v = DecideVerdict(none, Side(2, 0), 2);
  EXPECT_EQ(v.verdict, Verdict::kInconclusive);
  EXPECT_NE(v.reason.find("too few"), std::string::npos);
  EXPECT_EQ(DecideVerdict(Side(2, 0.05), none, 2).verdict, Verdict::kInconclusive);
}

}  // namespace
}  // namespace ltsim
