// Each tightness verdict on constructed series (docs/statistics.md "Verdicts").
#include "ltsim/study/verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

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

// Rate rows (Lemma 5.3): the paper's exponent is −1/3, the error must not decay slower.
TEST(DecideRateVerdict, EachVerdictAgainstMinusOneThird) {
  const double paper = -1.0 / 3;
  // Slower decay than the rate allows: the lower side's interval lies above −1/3.
  const VerdictResult slow = DecideRateVerdict(Side(-0.1, 0.02), Side(-0.1, 0), paper);
  EXPECT_EQ(slow.verdict, Verdict::kContradicts) << slow.reason;
  const VerdictResult at = DecideRateVerdict(Side(-1.0 / 3, 0.05), Side(-0.3, 0), paper);
  EXPECT_EQ(at.verdict, Verdict::kTight) << at.reason;
  // Faster (−1/2): a gap of 1/6, and the upper side below −1/3 confirms it.
  const VerdictResult fast = DecideRateVerdict(Side(-0.5, 0.02), Side(-0.45, 0), paper);
  EXPECT_EQ(fast.verdict, Verdict::kGap) << fast.reason;
  EXPECT_NEAR(fast.gap, 1.0 / 6, 0.02);
  EXPECT_LE(fast.least_gap, fast.gap);
  EXPECT_NE(fast.reason.find("lies below it too"), std::string::npos) << fast.reason;
  // The same lower side with an upper side that allows −1/3: still gap, but said to be open.
  const VerdictResult open = DecideRateVerdict(Side(-0.5, 0.02), Side(-0.3, 0), paper);
  EXPECT_EQ(open.verdict, Verdict::kGap);
  EXPECT_NE(open.reason.find("does not exclude"), std::string::npos) << open.reason;
}

TEST(DecideRateVerdict, InconclusiveWithoutIntervalOrRateOrDecay) {
  const double paper = -1.0 / 3;
  ExponentEstimate none;
  none.reason = "too few uncensored points";
  EXPECT_EQ(DecideRateVerdict(none, Side(-0.3, 0), paper).verdict, Verdict::kInconclusive);
  // No rate stated for the row (a scheme the lemma does not speak of).
  const VerdictResult free = DecideRateVerdict(Side(-0.5, 0.02), Side(-0.5, 0), NAN);
  EXPECT_EQ(free.verdict, Verdict::kInconclusive);
  EXPECT_NE(free.reason.find("no paper rate"), std::string::npos) << free.reason;
  // Spanning 0 with the interval reaching below −1/3: decay not shown (not tight).
  const ExponentEstimate flat = Side(0, 0.6);
  ASSERT_TRUE(flat.ci && flat.ci->first < paper && flat.ci->second > 0) << flat.ci->first;
  const VerdictResult v = DecideRateVerdict(flat, Side(-0.3, 0), paper);
  EXPECT_EQ(v.verdict, Verdict::kInconclusive) << v.reason;
  EXPECT_NE(v.reason.find("spans 0"), std::string::npos) << v.reason;
}

// An interval spanning 0 that lies above −1/3 (here [−0.2, 0.1]) shows no decay at all, so it
// is inconclusive, never contradicts: the spans-0 check comes before the contradicts check.
TEST(DecideRateVerdict, AnIntervalSpanningZeroAboveTheRateIsInconclusiveNotContradicts) {
  ExponentEstimate lower;
  lower.exponent = -0.05;
  lower.ci = std::make_pair(-0.2, 0.1);
  const VerdictResult v = DecideRateVerdict(lower, Side(-0.3, 0), -1.0 / 3);
  EXPECT_EQ(v.verdict, Verdict::kInconclusive) << v.reason;
  EXPECT_NE(v.reason.find("spans 0"), std::string::npos) << v.reason;
  // Just above 0 on both ends it is not spanning 0 and still contradicts.
  lower.ci = std::make_pair(0.05, 0.1);
  EXPECT_EQ(DecideRateVerdict(lower, Side(-0.3, 0), -1.0 / 3).verdict, Verdict::kContradicts);
  lower.ci = std::make_pair(-0.2, -0.1);
  EXPECT_EQ(DecideRateVerdict(lower, Side(-0.3, 0), -1.0 / 3).verdict, Verdict::kContradicts);
}

}  // namespace
}  // namespace ltsim
