// The tightness families against their closed-form T*, censoring of capped members, point
// witnesses that replay, and thread-independence (docs/tightness.md).
#include "ltsim/study/tightness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "ltsim/bounds/registry.h"
#include "ltsim/construct/families.h"
#include "ltsim/construct/kgram.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"
#include "ltsim/study/point_witness.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/tightness_pairs.h"
#include "study/tightness/theorem_52.h"

namespace ltsim {
namespace {

std::uint64_t FirstDisagreement(const FamilyMember& p, double eps, std::uint64_t n) {
  ThresholdOptions o;
  o.epsilon = eps;
  o.max_length = n;
  const ThresholdResult r = FindThreshold(p.f, p.g, o);
  EXPECT_TRUE(r.exhaustive);
  return r.first_disagreement.value_or(0);
}

TEST(TightnessFamilies, BumpPairHasItsClosedFormThreshold) {
  for (double eps : {0.1, 0.03})
    for (double offset : {0.0, 0.37, 0.9}) {
      const FamilyMember p = test::OffsetBumpPair(2, 1, 0, 4, eps, offset);
      EXPECT_EQ(FirstDisagreement(p, eps, 2000), p.first_disagreement) << eps << " " << offset;
    }
  for (int period : {2, 3}) {
    const FamilyMember p = test::OffsetBumpPair(2, period, 0, 4, 0.1, 0.45);
    EXPECT_EQ(FirstDisagreement(p, 0.1, 100), p.first_disagreement) << period;
  }
  const FamilyMember s3 = test::OffsetBumpPair(3, 1, 1, 4, 0.1, 0.2);
  EXPECT_EQ(FirstDisagreement(s3, 0.1, 60), s3.first_disagreement);
}

TEST(TightnessFamilies, MarginPairDisagreesFirstAtTheHardmaxLengthOfG) {
  for (double inverse : {1.5, 2.0}) {
    const FamilyMember p = test::MarginPair(1 / inverse, 4, 0.02 / inverse);
    EXPECT_EQ(FirstDisagreement(p, 0.45, 400), p.first_disagreement) << inverse;
  }
}

TightnessOptions Small() {
  TightnessOptions o;
  o.parameters = {StudyParameter::kEps, StudyParameter::kAlphabet};
  o.points = 4;
  o.seeds = 3;
  o.validate = false;
  o.seed = 5;
  return o;
}

TEST(Tightness, RowsCarryBothSidesAndAreThreadIndependent) {
  TightnessOptions o = Small();
  o.heads = 1;  // the one-head bump class
  o.threads = 1;
  const TightnessResult one = RunTightness(o);
  o.threads = 2;
  const TightnessResult two = RunTightness(o);
  ASSERT_EQ(one.rows.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(one.rows[r].lower.exponent, two.rows[r].lower.exponent);
    EXPECT_EQ(one.rows[r].lower.ci, two.rows[r].lower.ci);
  }
  const TightnessRow& eps = one.rows[0];
  EXPECT_EQ(eps.parameter, StudyParameter::kEps);
  // One distinct head (f and g share it): the certificate is linear in L/ε up to its additive
  // terms (docs/theory.md §2.4), so its local slope is just below 1.
  EXPECT_NEAR(eps.upper.exponent, 1.0, 0.01);
  EXPECT_LT(eps.upper.exponent, 1.0);
  EXPECT_NEAR(eps.lower.exponent, 1.0, 0.2);  // T* ∝ h/ε
  ASSERT_TRUE(eps.lower.ci.has_value());
  EXPECT_LT(eps.lower.ci->first, 1.0);
  EXPECT_GT(eps.lower.ci->second, 1.0);
  EXPECT_EQ(eps.paper, 2.0);
  // Four points with three members: the interval holds the construction's slope, so the
  // one-head class is tight at exponent 1, below the paper's 2.
  EXPECT_EQ(eps.verdict.verdict, Verdict::kTight) << eps.verdict.reason;
  // T* does not depend on S in the bump family: no growth shown.
  EXPECT_EQ(one.rows[1].verdict.verdict, Verdict::kInconclusive) << one.rows[1].verdict.reason;
}

// Every nested member's exact threshold equals the family's closed form, and two heads make
// the eps and scale rows grow like (L/ε)²: the lower side meets the certificate's exponent.
TEST(Tightness, TwoNestedHeadsMakeTheEpsAndScaleRowsTight) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps, StudyParameter::kScale};
  const TightnessResult r = RunTightness(o);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const TightnessRow& row : r.rows) {
    EXPECT_EQ(row.family, "nested");
    for (const TightnessPoint& point : row.points)
      for (const TightnessSample& s : point.lower)
        EXPECT_EQ(s.sample.censoring, Censoring::kNone)
            << ParameterName(row.parameter) << " " << point.value;
    // T* ∝ (a/ε)²: exponent 2 in 1/ε. On the scale row L is only near-proportional to the
    // slope a, so the exponent in L is 2·ln(a ratio)/ln(L ratio) over the grid (and the row
    // warns when those differ by more than 10%). Fitted over T* from ~10^2 to ~10^4: within
    // 0.2 of that (integer effects at small T*).
    double expected = 2.0;
    if (row.parameter == StudyParameter::kScale) {
      const TightnessPoint &a = row.points.front(), &b = row.points.back();
      expected = 2 * std::log(b.value / a.value) / std::log(b.regressor / a.regressor);
      EXPECT_EQ(row.warnings.empty(),
                std::abs(b.regressor / b.value / (a.regressor / a.value) - 1) <= 0.1);
    }
    EXPECT_NEAR(row.lower.exponent, expected, 0.2) << ParameterName(row.parameter);
    EXPECT_EQ(row.verdict.verdict, Verdict::kTight)
        << ParameterName(row.parameter) << ": " << row.verdict.reason;
  }
}

// Three nested heads: T* grows like (L/ε)³, above the paper's exponent 2 in 1/ε.
TEST(Tightness, ThreeNestedHeadsContradictThePapersExponent) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps};
  o.heads = 3;
  o.points = 4;
  o.seeds = 2;
  const TightnessResult r = RunTightness(o);
  const TightnessRow& row = r.rows[0];
  EXPECT_GT(row.lower.exponent, 2.5);
  EXPECT_EQ(row.verdict.verdict, Verdict::kContradicts) << row.verdict.reason;
  EXPECT_NE(row.verdict.reason.find("nested"), std::string::npos) << row.verdict.reason;
}

TEST(Tightness, ACappedMemberCensorsItsPointAndStaysOutOfTheFit) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps};
  o.heads = 1;
  o.points = 4;
  // 0.1/8 needs T* ≈ 80 at S = 2 (≈ 3200 statistics evaluated one by one below the pruned
  // search's first cells): a budget of 3000 stops the search before.
  o.statistics_budget = 3000;
  const TightnessResult r = RunTightness(o);
  const TightnessRow& row = r.rows[0];
  ASSERT_EQ(row.points.size(), 4u);
  EXPECT_EQ(row.points[3].lower[0].sample.censoring, Censoring::kAbove);
  EXPECT_EQ(row.lower.points_censored, 1);
  EXPECT_EQ(row.lower.used, (std::vector<int>{0, 1, 2}));
}

// The margin row's upper side max(frequency-length, 2^(p/γ)) is flat on the default grid (the
// construction's length ≈ 3.6·10^4 is above every 2^(p/γ) ≤ 2^10): the lower side is steeper
// but below it at every point, so the verdict is inconclusive, never contradicts; the lower
// side still matches the paper's p·ln 2 within the resolution.
TEST(Tightness, AFlatUpperSideAboveEveryLowerLengthIsNoContradiction) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kMargin};
  const TightnessResult r = RunTightness(o);
  ASSERT_EQ(r.rows.size(), 1u);
  const TightnessRow& row = r.rows[0];
  ASSERT_TRUE(row.lower.ci.has_value());
  ASSERT_TRUE(row.upper.ci.has_value());
  EXPECT_GT(row.lower.ci->first, row.upper.ci->second);  // steeper than the upper side …
  for (const TightnessPoint& point : row.points)         // … yet below it everywhere
    for (std::size_t m = 0; m < point.lower.size(); ++m)
      EXPECT_LT(point.lower[m].sample.value, point.upper[m].sample.value);
  EXPECT_EQ(row.verdict.verdict, Verdict::kInconclusive) << row.verdict.reason;
  EXPECT_NE(row.verdict.reason.find("no contradiction on the data"), std::string::npos);
  EXPECT_NEAR(row.lower.exponent, 4 * std::log(2.0), 0.01 * 4 * std::log(2.0));
}

TEST(Tightness, PointWitnessesReplay) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps};
  o.out = (std::filesystem::temp_directory_path() /
           ("ltsim_tightness_test_" + std::to_string(::getpid())))
              .string();
  std::filesystem::remove_all(o.out);
  const TightnessResult r = RunTightness(o);
  // Named relative to the output directory (the same bytes wherever it is).
  const std::string name = r.rows[0].points[1].lower[0].witness;
  ASSERT_FALSE(name.empty());
  EXPECT_TRUE(std::filesystem::path(name).is_relative()) << name;
  const std::string path = (std::filesystem::path(o.out) / name).string();
  PointWitness w = ReadPointWitness(path);
  EXPECT_EQ(w.kind, "first-disagreement");
  EXPECT_TRUE(w.recheck_exceeds);
  EXPECT_EQ(static_cast<double>(w.value), r.rows[0].points[1].lower[0].sample.value);
  EXPECT_TRUE(ReplayPoint(w).reproduced);
  // A tampered number does not replay.
  w.value += 1;
  EXPECT_FALSE(ReplayPoint(w).reproduced);
  EXPECT_TRUE(std::filesystem::exists(path.substr(0, path.size() - 11) + ".f.json"));
  std::filesystem::remove_all(o.out);
}

// Adaptive |x| of the simulator check (docs/tightness.md §3), on a planted measurement: the
// needed n at the first |x| is capped (n = |x|, nothing smaller met ε), so |x| must grow; it
// grows 4× a step until n stops growing (within one grid step 2^(1/4)).
TEST(TightnessSimulator, ACappedFirstLengthKeepsGrowing) {
  std::vector<std::uint64_t> asked;
  const SimulatorCheck s = GrowSimulatorLength(10000, 200000, 1e9, [&](std::uint64_t length) {
    asked.push_back(length);
    SimulatorStep step;
    step.x_length = length;
    step.needed = length == 10000 ? 10000 : length == 40000 ? 15000 : 16000;
    step.reached = length != 10000;
    step.x_kind = "planted";
    return step;
  });
  EXPECT_EQ(asked, (std::vector<std::uint64_t>{10000, 40000, 160000}));
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_FALSE(s.steps[0].reached);
  EXPECT_EQ(s.stop, "stopped growing");  // 16000 ≤ 2^(1/4)·15000
  EXPECT_EQ(s.needed, 16000u);
  EXPECT_EQ(s.x_length, 160000u);
  EXPECT_TRUE(s.reached);
  EXPECT_EQ(s.worst_step, 2u);
  EXPECT_TRUE(s.within_certificate);
}

TEST(TightnessSimulator, GrowthStopsWhenTheNeededLengthStopsGrowing) {
  // 100 → 118 is within one grid step (≤ ⌈2^(1/4)·100⌉ = 119): stop after two |x|.
  const auto planted = [](std::uint64_t grown) {
    return [grown](std::uint64_t length) {
      SimulatorStep step;
      step.needed = length == 10000 ? 100 : grown;
      step.reached = true;
      return step;
    };
  };
  const SimulatorCheck s = GrowSimulatorLength(10000, 200000, 1e9, planted(118));
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.stop, "stopped growing");
  EXPECT_EQ(s.steps[1].x_length, 40000u);
  // 100 → 120 is more than one step: it grows on (to 160,000, where n = 120 again stops it).
  const SimulatorCheck t = GrowSimulatorLength(10000, 200000, 1e9, planted(120));
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.stop, "stopped growing");
  // A smaller n at the larger |x| stops too; the worst step stays the first.
  const SimulatorCheck u = GrowSimulatorLength(10000, 200000, 1e9, planted(40));
  ASSERT_EQ(u.steps.size(), 2u);
  EXPECT_EQ(u.worst_step, 0u);
  EXPECT_EQ(u.needed, 40u);
}

TEST(TightnessSimulator, GrowthStopsAtTheUpperSideOrTheCap) {
  const auto capped = [](std::uint64_t length) {
    SimulatorStep step;
    step.needed = length;  // never met below |x|
    return step;
  };
  const SimulatorCheck cap = GrowSimulatorLength(10000, 200000, 1e9, capped);
  ASSERT_EQ(cap.steps.size(), 4u);  // 10^4, 4·10^4, 1.6·10^5, then the cap 2·10^5
  EXPECT_EQ(cap.steps.back().x_length, 200000u);
  EXPECT_EQ(cap.stop, "cap");
  EXPECT_FALSE(cap.reached);
  const SimulatorCheck upper = GrowSimulatorLength(10000, 200000, 30000, capped);
  ASSERT_EQ(upper.steps.size(), 2u);
  EXPECT_EQ(upper.stop, "upper side");
  EXPECT_FALSE(upper.within_certificate);
  // A start at the cap measures once.
  EXPECT_EQ(GrowSimulatorLength(500, 500, 1e9, capped).steps.size(), 1u);
}

// The real check: every point records its |x| sequence (4× a step from 10^4), a stop reason,
// and the summary of its last step; identical for any thread count.
TEST(TightnessSimulator, AdaptiveChecksAreRecordedAndThreadIndependent) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps, StudyParameter::kPeriod};
  o.points = 3;
  o.seeds = 1;
  o.validate = true;
  o.threads = 1;
  const TightnessResult one = RunTightness(o);
  o.threads = 2;
  const TightnessResult two = RunTightness(o);
  for (std::size_t r = 0; r < one.rows.size(); ++r)
    for (std::size_t i = 0; i < one.rows[r].points.size(); ++i) {
      const SimulatorCheck &a = one.rows[r].points[i].simulator,
                           &b = two.rows[r].points[i].simulator;
      ASSERT_EQ(a.steps.size(), b.steps.size());
      EXPECT_GE(a.steps.size(), 2u);  // "stopped growing" needs two |x|
      EXPECT_EQ(a.stop, b.stop);
      EXPECT_FALSE(a.stop.empty());
      for (std::size_t k = 0; k < a.steps.size(); ++k) {
        EXPECT_EQ(a.steps[k].needed, b.steps[k].needed);
        EXPECT_EQ(a.steps[k].x_kind, b.steps[k].x_kind);
        EXPECT_EQ(a.steps[k].x_length, k == 0 ? 10000u : 4 * a.steps[k - 1].x_length);
      }
      EXPECT_EQ(a.needed, a.steps.back().needed);
    }
}

// `--joint`: the eps and scale rows of the two-head nested family fitted together, each sample
// with its own 1/ε and L. The 1/ε exponent agrees with the eps row's. The exponent in L is the
// scale row's within their intervals: L carries an additive term (L/a falls from ~10 at the eps
// row's a = 1.03 to ~5 at a = 48), so one line through both rows is steeper in L than the scale
// row's local slope alone (docs/tightness.md §3).
TEST(TightnessJoint, EpsAndScaleRowsAgreeWithTheirOwnExponents) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps, StudyParameter::kScale, StudyParameter::kMargin};
  o.points = 5;
  o.seed = 1;
  o.heads = 2;
  o.joint = true;
  const TightnessResult r = RunTightness(o);
  ASSERT_TRUE(r.joint.has_value());
  const TightnessJoint& j = *r.joint;
  EXPECT_EQ(j.parameters, (std::vector<std::string>{"1/eps", "L"}));
  EXPECT_EQ(j.rows, (std::vector<std::string>{"eps", "scale"}));
  ASSERT_EQ(j.left_out.size(), 1u);  // margin: log-linear in 1/γ
  EXPECT_NE(j.left_out[0].find("margin"), std::string::npos);
  EXPECT_EQ(j.families, (std::vector<std::string>{"nested"}));
  EXPECT_EQ(j.fit.observations_used, 30);
  EXPECT_TRUE(j.reason.empty()) << j.reason;
  ASSERT_EQ(j.fit.ci.size(), 2u);
  ASSERT_TRUE(j.fit.ci[0] && j.fit.ci[1]);
  const ExponentEstimate &eps = r.rows[0].lower, &scale = r.rows[1].lower;
  EXPECT_LE(j.fit.ci[0]->first, eps.exponent);
  EXPECT_GE(j.fit.ci[0]->second, eps.exponent);
  ASSERT_TRUE(scale.ci.has_value());
  EXPECT_LE(j.fit.ci[1]->first, scale.ci->second);  // the intervals overlap
  EXPECT_GE(j.fit.ci[1]->second, scale.ci->first);
  EXPECT_NEAR(j.fit.coefficients[1], scale.exponent, 0.3);
  // Each observation carries its own pair's values.
  for (const TightnessJoint::Observation& ob : j.observations) {
    const TightnessSample& s = r.rows[ob.row == "eps" ? 0 : 1].points[ob.point].lower[ob.member];
    EXPECT_EQ(ob.values[0], 1 / s.eps);
    EXPECT_EQ(ob.values[1], s.lipschitz);
  }
}

// A parameter that does not vary across the samples has no exponent: the reason says which;
// τ = 0 in the other rows' pairs leaves the locality row out.
TEST(TightnessJoint, AConstantParameterIsNotFitted) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps, StudyParameter::kLocality};
  o.points = 3;
  o.seeds = 1;
  o.joint = true;
  const TightnessResult r = RunTightness(o);
  ASSERT_TRUE(r.joint.has_value());
  ASSERT_EQ(r.joint->left_out.size(), 1u);
  EXPECT_NE(r.joint->left_out[0].find("tau = 0"), std::string::npos) << r.joint->left_out[0];
  EXPECT_EQ(r.joint->parameters, (std::vector<std::string>{"1/eps"}));
  // Two bump rows: S varies in one, Δ in the other; both enter.
  o.parameters = {StudyParameter::kAlphabet, StudyParameter::kPeriod};
  o.heads = 1;
  const TightnessResult a = RunTightness(o);
  EXPECT_EQ(a.joint->parameters, (std::vector<std::string>{"S", "Delta"}));
  EXPECT_TRUE(a.joint->reason.empty()) << a.joint->reason;
  o.parameters = {StudyParameter::kMargin};
  const TightnessResult m = RunTightness(o);
  EXPECT_TRUE(m.joint->parameters.empty());
  EXPECT_NE(m.joint->reason.find("log-linear"), std::string::npos) << m.joint->reason;
  o.theorem = Theorem::k53;
  o.parameters = {};
  EXPECT_THROW(RunTightness(o), InputError);
}

// The positional-margin pair (docs/tightness.md §5): the exact one-layer threshold (pruned
// search of the statistics, softmax with log-scaled bias) equals the closed form
// min{T : a·q(T) < (κ − 1)ε}, γ_pos is the family's parameter, and ln T* ≈ ln((1 − δ)/δ)/γ_pos.
TEST(TightnessFamilies, PositionalMarginPairHasItsClosedFormThreshold) {
  for (double inverse : {3.0, 4.0, 5.0})
    for (double height : {2.5, 3.3}) {
      const double eps = 0.1, slope = 0.8, gamma = 1 / inverse;
      const FamilyMember p = test::PositionalMarginPair(gamma, slope, eps, height);
      EXPECT_NEAR(PositionalMargin(p.f), gamma, 1e-12);
      EXPECT_NEAR(PositionalMargin(p.g), gamma, 1e-12);
      const std::uint64_t predicted = p.first_disagreement;
      // The closed form against its definition: the gap θ − a·q of 1^(T−1) 0 exceeds ε at T*
      // (by more than the threshold's tolerance), not at T* − 1.
      const double level = (height - 1) * eps, theta = height * eps;
      EXPECT_GT(theta - slope * SelfShare(1 - gamma, predicted), eps + kThresholdGapTolerance);
      EXPECT_LE(theta - slope * SelfShare(1 - gamma, predicted - 1), eps + kThresholdGapTolerance);
      EXPECT_EQ(FirstDisagreement(p, eps, predicted + 20), predicted) << inverse << " " << height;
      const double delta = level / slope;
      EXPECT_NEAR(std::log(static_cast<double>(p.first_disagreement)) * gamma,
                  std::log((1 - delta) / delta), 0.1)
          << inverse << " " << height;
    }
  EXPECT_THROW(test::PositionalMarginPair(1.0, 0.8, 0.1, 3), InputError);
  EXPECT_THROW(test::PositionalMarginPair(0.3, 0.1, 0.1, 3), InputError);  // δ > 1/2
}

// The queries' share q(T) is the evaluator's: f on 1^(T−1) 0 is θ − a·q(T).
TEST(TightnessFamilies, SelfShareIsTheEvaluatorsShare) {
  const double eps = 0.1, slope = 0.8, height = 3;
  const FamilyMember p = test::PositionalMarginPair(0.25, slope, eps, height);
  for (std::uint64_t t : {2, 7, 50, 1000}) {
    const auto x = MakeRunSource({{1, t - 1}, {0, 1}}, "x");
    const double expected = std::max(0.0, height * eps - slope * SelfShare(0.75, t));
    EXPECT_NEAR(Evaluate(p.f, *x)(0), expected, 1e-12) << t;
    EXPECT_EQ(Evaluate(p.g, *x)(0), 0.0);
  }
}

// The one-layer pair stands for a two-layer model whose second layer is one head with M = O = 0
// and no MLP: that layer is the identity, so both evaluate alike, and only C changes (the
// two-layer formula).
TEST(TightnessFamilies, AZeroSecondLayerIsTheIdentity) {
  const FamilyMember p = test::PositionalMarginPair(0.25, 0.8, 0.1, 3);
  const Transformer two = WithIdentitySecondLayer(p.f);
  ValidateTransformer(two, "two layers");
  ASSERT_EQ(two.layers.size(), 2u);
  EXPECT_EQ(PositionalMargin(two), PositionalMargin(p.f));
  EXPECT_GT(LogComplexity(two), LogComplexity(p.f));
  for (const std::vector<ltsim::Run>& runs : std::vector<std::vector<ltsim::Run>>{
           {{1, 40}, {0, 1}}, {{0, 3}, {1, 5}, {0, 2}}, {{1, 200}, {0, 7}, {1, 1}, {0, 1}}}) {
    const auto x = MakeRunSource(runs, "x");
    EXPECT_NEAR(Evaluate(two, *x)(0), Evaluate(p.f, *x)(0), 1e-12);
  }
}

// A censored sample censors its point in every 5.2 fit (lower side and simulator): the point
// is a bound and never enters the fit.
TEST(Tightness52, ACensoredPointNeverEntersTheFit) {
  TightnessOptions o;
  o.theorem = Theorem::k52;
  TightnessRow row;
  row.name = "positional-margin";
  for (int i = 0; i < 5; ++i) {
    TightnessPoint p;
    p.regressor = 3 + i;
    p.value = 1 / p.regressor;
    TightnessSample s;
    s.sample = {std::exp(1.1 * p.regressor), Censoring::kNone};
    p.lower = {s, s};
    p.simulator_samples = {s};
    row.points.push_back(p);
  }
  // Point 4 capped far below the line (a bound T* > 10): fitted as a value it would pull the
  // slope down.
  row.points[4].lower[1].sample = {10, Censoring::kAbove};
  row.points[1].simulator_samples[0].sample = {4, Censoring::kBelow};
  FitTheorem52Row(o, FitScale::kLogLinear, row);
  EXPECT_EQ(row.lower.points_censored, 1);
  EXPECT_EQ(row.lower.used, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_NEAR(row.lower.exponent, 1.1, 1e-9);
  EXPECT_EQ(row.simulator.points_censored, 1);
  EXPECT_EQ(row.simulator.used, (std::vector<int>{0, 2, 3, 4}));
  EXPECT_NEAR(row.simulator.exponent, 1.1, 1e-9);
  // No upper samples: no exponent, and the reason says why.
  EXPECT_TRUE(std::isnan(row.upper.exponent));
  EXPECT_FALSE(row.upper.ci.has_value());
  EXPECT_NE(row.upper.reason.find("outside the class"), std::string::npos);
}

// The two-layer positional-margin row (docs/tightness.md §5): its pairs are in the class of
// docs/theory.md §4.8 with γ_pos the row's value, the upper side is the registry's
// two-layer-length (one certified number a member), ln N grows linearly in 1/γ_pos on both the
// upper side and the paper, and the lower side is censored at T_ex = 15, which the reason says.
TEST(Tightness52, PositionalMarginRowHasACertifiedUpperSide) {
  for (double inverse : {3.0, 5.0}) {
    const FamilyMember p = test::TwoLayerMarginPair(1 / inverse, 0, 0.8, 0.1, 3);
    EXPECT_NEAR(PositionalMargin(p.f), 1 / inverse, 1e-12);
    ConstantMap c = PairConstants(p.f, p.g);
    c["eps"] = 0.1;
    EXPECT_TRUE(std::isfinite(FindBound("two-layer-length").value(c)));
    EXPECT_GT(TwoLayerUpperSide(p, 0.1).sample.value, 15);
  }
  TightnessOptions o;
  o.theorem = Theorem::k52;
  o.parameters = {StudyParameter::kPositionalMargin};
  o.points = 3;
  o.seeds = 1;
  o.seed = 3;
  const TightnessResult r = RunTightness(o);
  ASSERT_EQ(r.rows.size(), 1u);
  const TightnessRow& row = r.rows[0];
  ASSERT_EQ(row.points.size(), 3u);
  for (const TightnessPoint& p : row.points) {
    ASSERT_EQ(p.lower.size(), 1u);
    EXPECT_EQ(p.lower[0].sample.censoring, Censoring::kAbove);
    EXPECT_EQ(p.lower[0].sample.value, 15.0);
    ASSERT_EQ(p.upper.size(), 1u);
    EXPECT_EQ(p.upper[0].sample.censoring, Censoring::kNone);
  }
  ASSERT_TRUE(row.upper.ci.has_value()) << row.upper.reason;
  EXPECT_GT(row.upper.exponent, 1);
  EXPECT_TRUE(std::isfinite(row.paper));
  EXPECT_EQ(row.verdict.verdict, Verdict::kInconclusive) << row.verdict.reason;
  EXPECT_NE(row.verdict.reason.find("not yet certified beyond T = 15"), std::string::npos);
  EXPECT_NE(row.verdict.reason.find("upper side (certified"), std::string::npos);
}

// A pair outside the class (hardmax layers) has no upper side.
TEST(Tightness52, APairOutsideTheClassHasNoUpperSide) {
  FamilyMember p = test::TwoLayerMarginPair(0.25, 0, 0.8, 0.1, 3);
  p.f.layers[0].attention = Attention::kHardmax;
  EXPECT_EQ(TwoLayerUpperSide(p, 0.1).sample.value, 0.0);
}

TEST(Tightness52, RowsAreThreadIndependent) {
  TightnessOptions o;
  o.theorem = Theorem::k52;
  o.parameters = {StudyParameter::kEps, StudyParameter::kK};
  o.points = 3;
  o.points_given = true;
  o.seeds = 1;
  o.seed = 7;
  o.threads = 1;
  const TightnessResult one = RunTightness(o);
  o.threads = 2;
  const TightnessResult two = RunTightness(o);
  ASSERT_EQ(one.rows.size(), 2u);
  ASSERT_EQ(two.rows.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(one.rows[r].upper.exponent, two.rows[r].upper.exponent);
    EXPECT_EQ(one.rows[r].name, two.rows[r].name);
    for (std::size_t i = 0; i < one.rows[r].points.size(); ++i) {
      const TightnessPoint &a = one.rows[r].points[i], &b = two.rows[r].points[i];
      ASSERT_EQ(a.lower.size(), b.lower.size());
      for (std::size_t m = 0; m < a.lower.size(); ++m)
        EXPECT_EQ(a.lower[m].sample.value, b.lower[m].sample.value);
      ASSERT_EQ(a.simulator_samples.size(), b.simulator_samples.size());
      for (std::size_t m = 0; m < a.simulator_samples.size(); ++m)
        EXPECT_EQ(a.simulator_samples[m].sample.value, b.simulator_samples[m].sample.value);
    }
    EXPECT_EQ(one.rows[r].lower.ci, two.rows[r].lower.ci);
    EXPECT_EQ(one.rows[r].simulator.ci, two.rows[r].simulator.ci);
    EXPECT_EQ(one.rows[r].verdict.reason, two.rows[r].verdict.reason);
  }
}

TEST(Tightness52, KRowIsCensoredAtTheExhaustiveLimit) {
  EXPECT_EQ(TwoLayerExhaustiveLength(2), 15u);
  EXPECT_EQ(TwoLayerExhaustiveLength(3), 9u);
  TightnessOptions o;
  o.theorem = Theorem::k52;
  o.parameters = {StudyParameter::kK};
  o.points = 3;
  o.points_given = true;
  o.seeds = 1;
  o.validate = false;
  const TightnessResult r = RunTightness(o);
  const TightnessRow& row = r.rows[0];
  ASSERT_EQ(row.points.size(), 3u);
  for (const TightnessPoint& p : row.points) {
    ASSERT_EQ(p.lower.size(), 1u);
    EXPECT_EQ(p.lower[0].sample.censoring, Censoring::kAbove);
    EXPECT_EQ(p.lower[0].sample.value, 15.0);
  }
  EXPECT_FALSE(row.lower.ci.has_value());
  EXPECT_EQ(row.verdict.verdict, Verdict::kInconclusive);
  // The paper's slope in (k+1)^2 is about 3·β = 25.5 for the larger β = 8.5 (ln C(f) =
  // (k+1)^2·β + O(k)); the certified upper side grows far slower (docs/tightness.md §5).
  EXPECT_NEAR(row.paper, 25.5, 3);
  ASSERT_TRUE(row.upper.ci.has_value()) << row.upper.reason;
  EXPECT_LT(row.upper.ci->second, row.paper);
}

// The k row's ln N is the registry's thm5.2 in logs (where the registry's value is finite).
TEST(Tightness52, KRowsPaperLengthIsTheRegistrysInLogs) {
  for (int k : {1, 2}) {
    KGramOptions a;
    a.alphabet = 2;
    a.k = k;
    a.scale = 8;
    ConstantMap c = ModelConstants(MakeKGram(a));
    c["eps"] = 0.05;
    const double registry = FindBound("thm5.2").value(c);
    ASSERT_TRUE(std::isfinite(registry));
    EXPECT_NEAR(Theorem52LogPaperLength(k, 0.05), std::log(registry), 1e-9 * std::log(registry));
  }
}

}  // namespace
}  // namespace ltsim
