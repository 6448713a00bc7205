// Unit tests of the exponent fit and of a tiny sweep (fixed seeds).
#include "ltsim/study/sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "ltsim/check/needed_length.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/gen/margin_pair.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"
#include "ltsim/study/experiment.h"
#include "ltsim/study/fit_report.h"
#include "ltsim/study/point_witness.h"
#include "ltsim/study/statistic_attack.h"
#include "ltsim/study/tightness.h"

namespace ltsim {
namespace {

SweepOptions Tiny() {
  SweepOptions o;
  o.parameter = StudyParameter::kAlphabet;
  o.values = {2, 3, 4};
  o.pairs = 2;
  o.x_length = 2000;
  o.fixed_n = 100;
  o.seed = 7;
  return o;
}

// The empirical constant is the max over uncensored samples of needed / the point's bound
// (docs/statistics.md §5), attained by an uncensored pair; NaN when there is none. Returns it.
double ExpectConstantOverUncensoredSamples(const SweepResult& r) {
  double expected = std::numeric_limits<double>::quiet_NaN();
  for (const SweepPoint& p : r.points)
    for (const SweepPair& q : p.pairs)
      if (q.censoring == Censoring::kNone && p.bound > 0 &&
          (std::isnan(expected) || q.needed / p.bound > expected))
        expected = q.needed / p.bound;
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(r.empirical_constant)) << r.empirical_constant;
  } else {
    EXPECT_DOUBLE_EQ(r.empirical_constant, expected);
    const SweepPoint& c = r.points[r.constant_point];
    EXPECT_EQ(c.pairs[r.constant_pair].censoring, Censoring::kNone);
    EXPECT_DOUBLE_EQ(c.pairs[r.constant_pair].needed / c.bound, expected);
  }
  return r.empirical_constant;
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
    // The empirical constant is taken over uncensored samples only (docs/statistics.md §5).
    for (const SweepPair& q : p.pairs)
      if (q.censoring == Censoring::kNone)
        largest_ratio = std::max(largest_ratio, q.needed / p.bound);
  }
  ASSERT_GT(largest_ratio, 0);  // Tiny()'s seed has uncensored pairs
  EXPECT_DOUBLE_EQ(r.empirical_constant, largest_ratio);
  const SweepPoint& c = r.points[r.constant_point];
  EXPECT_EQ(c.pairs[r.constant_pair].censoring, Censoring::kNone);
  EXPECT_DOUBLE_EQ(c.pairs[r.constant_pair].needed / c.bound, largest_ratio);
  const SweepResult again = RunSweep(Tiny());
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    EXPECT_EQ(again.points[i].needed, r.points[i].needed);
    EXPECT_EQ(again.points[i].pairs[again.points[i].witness].seed,
              r.points[i].pairs[r.points[i].witness].seed);
  }
}

TEST(RunSweep, TheNeededLengthMeetsEpsAndTheEpsSweepReusesItsPairs) {
  SweepOptions o = Tiny();
  o.search = false;  // the same random pairs at every ε (a search climbs differently per ε)
  o.parameter = StudyParameter::kEps;
  o.values = {0.001, 0.01, 0.1};
  const SweepResult r = RunSweep(o);
  // The same pairs at every ε: a smaller ε can only need as much or more (binary search on a
  // monotone condition; the grid is the same).
  EXPECT_EQ(r.points[0].pairs[0].seed, r.points[2].pairs[0].seed);
  EXPECT_GE(r.points[0].needed, r.points[2].needed);
}

// A searched pair starts from the random pair of the same (point, k) and the climb never lowers
// the needed length, so per pair search ≥ random.
TEST(RunSweep, ASearchedPairNeedsAtLeastAsLongAsItsRandomStart) {
  SweepOptions o = Tiny();
  o.iterations = 8;
  SweepOptions random = o;
  random.search = false;
  const SweepResult s = RunSweep(o), r = RunSweep(random);
  int longer = 0;
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    for (std::size_t k = 0; k < s.points[i].pairs.size(); ++k) {
      const SweepPair &a = s.points[i].pairs[k], &b = r.points[i].pairs[k];
      EXPECT_EQ(a.seed, b.seed);
      EXPECT_GE(a.needed, b.needed) << "point " << i << " pair " << k;
      longer += a.needed > b.needed;
    }
  }
  EXPECT_GT(longer, 0);  // the climbs do find longer needed lengths on this seed
}

TEST(RunSweep, SameResultForAnyThreadCount) {
  SweepOptions one = Tiny();
  one.iterations = 6;
  one.threads = 1;
  SweepOptions two = one;
  two.threads = 2;
  const SweepResult a = RunSweep(one), b = RunSweep(two);
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].needed, b.points[i].needed);
    EXPECT_EQ(a.points[i].witness, b.points[i].witness);
    EXPECT_EQ(a.points[i].sim_at_fixed, b.points[i].sim_at_fixed);
  }
  EXPECT_EQ(a.simulator.ci, b.simulator.ci);
  EXPECT_TRUE(a.simulator.exponent == b.simulator.exponent ||
              (std::isnan(a.simulator.exponent) && std::isnan(b.simulator.exponent)));
}

// Every pair's sample is kept with its censoring: above exactly when no n < |x| met ε, below
// exactly when the needed length is the grid's first n; a point is censored when any pair is,
// and a censored point never enters the fit, which is FitSeries over the points that did.
TEST(RunSweep, EveryPairIsASampleWithItsCensoringAndCensoredPointsAreNeverFitted) {
  SweepOptions o = Tiny();
  o.search = false;
  o.pairs = 3;
  o.values = {2, 3, 4, 5};
  const SweepResult r = RunSweep(o);
  std::vector<SeriesPoint> fitted;
  for (const SweepPoint& p : r.points) {
    ASSERT_EQ(p.simulator.samples.size(), 3u);
    bool censored = false;
    for (std::size_t k = 0; k < p.pairs.size(); ++k) {
      const SweepPair& q = p.pairs[k];
      EXPECT_EQ(p.simulator.samples[k].value, static_cast<double>(q.needed));
      EXPECT_EQ(p.simulator.samples[k].censoring, q.censoring);
      const auto floor =
          NeededLengthGrid(static_cast<std::uint64_t>(q.constants.at("tau")) + 2, q.x_length)
              .front();
      const Censoring expected = !q.reached          ? Censoring::kAbove
                                 : q.needed <= floor ? Censoring::kBelow
                                                     : Censoring::kNone;
      EXPECT_EQ(q.censoring, expected) << "pair " << k << " needed " << q.needed;
      censored |= q.censoring != Censoring::kNone;
      EXPECT_TRUE(q.hardmax_regime);  // hardmax pairs
      EXPECT_DOUBLE_EQ(q.upper_side, FindBound("frequency-length").value(q.constants));
    }
    EXPECT_EQ(p.censoring != Censoring::kNone, censored);
    EXPECT_LE(p.spread.min, p.spread.median);
    EXPECT_LE(p.spread.median, p.spread.max);
    EXPECT_EQ(p.spread.max, static_cast<double>(p.needed));  // the legacy worst case
    EXPECT_EQ(p.in_fit, !censored) << p.excluded;
    if (p.in_fit) fitted.push_back(p.simulator);
  }
  FitOptions fit;
  fit.seed = StreamSeed(o.seed, "sweep-fit/simulator");
  const ExponentEstimate again = FitSeries(fitted, fit);
  EXPECT_EQ(r.simulator.points_used, static_cast<int>(fitted.size()));
  EXPECT_EQ(r.simulator.ci, again.ci);
  EXPECT_TRUE(r.simulator.exponent == again.exponent ||
              (std::isnan(r.simulator.exponent) && std::isnan(again.exponent)));
  // The trend says "rises" only through DecideTrend: interval above 0 and monotone in spread.
  EXPECT_EQ(r.trend.trend == Trend::kRises,
            again.ci && again.ci->first > 0 && DecideTrend(fitted, again).monotone);
}

// The audit's case: when every point sits on the grid floor (ε so large that the first n
// meets it) the sweep used to print "measured 0, CI [0, 0]"; now no point is fitted, there is
// no exponent and the trend is degenerate.
TEST(RunSweep, EveryPointOnTheFloorGivesNoExponentAndADegenerateTrend) {
  SweepOptions o = Tiny();
  o.search = false;
  o.parameter = StudyParameter::kScale;
  o.values = {1, 2, 4};
  o.eps = 0.999;
  const SweepResult r = RunSweep(o);
  for (const SweepPoint& p : r.points) {
    EXPECT_EQ(p.censoring, Censoring::kBelow);
    EXPECT_FALSE(p.in_fit);
    EXPECT_EQ(p.excluded, "censored below");
  }
  EXPECT_FALSE(r.simulator.ci.has_value());
  EXPECT_EQ(r.simulator.points_used, 0);
  EXPECT_NE(r.simulator.reason.find("too few uncensored"), std::string::npos) << r.simulator.reason;
  EXPECT_EQ(r.trend.trend, Trend::kDegenerate) << r.trend.reason;
  const io::Json fit = SlopeFitJson(r.simulator);  // sweep.json's `fit`: no interval, no slope
  EXPECT_TRUE(fit["slope"].is_null() && fit["lower"].is_null() && fit["upper"].is_null());
  // The empirical constant skips the floor samples (bounds, not values).
  ExpectConstantOverUncensoredSamples(r);
}

// A cap: with |x| = 20, ε = 10^-6 and climbs that look for long needed lengths, pairs reach
// |x| without meeting ε and are censored above (a bound ≥ |x|), and such points are not fitted.
TEST(RunSweep, PairsAtTheCapAreCensoredAbove) {
  SweepOptions o = Tiny();
  o.x_length = 20;
  o.eps = 1e-6;
  o.iterations = 30;
  const SweepResult r = RunSweep(o);
  int above = 0;
  for (const SweepPoint& p : r.points)
    for (const SweepPair& q : p.pairs) {
      EXPECT_EQ(q.censoring == Censoring::kAbove, !q.reached);
      above += q.censoring == Censoring::kAbove;
      if (q.censoring == Censoring::kAbove) {
        EXPECT_EQ(p.censoring, Censoring::kAbove);
        EXPECT_FALSE(p.in_fit);
      }
    }
  EXPECT_GT(above, 0);
  EXPECT_EQ(r.trend.trend == Trend::kRises, false);
  // A capped pair's |x| is a lower bound on its needed length, never the empirical constant:
  // here a capped sample has the largest needed/bound, which the old constant (max over every
  // point's ratio) reported.
  const double constant = ExpectConstantOverUncensoredSamples(r);
  double largest_censored = 0;
  for (const SweepPoint& p : r.points)
    for (const SweepPair& q : p.pairs)
      if (q.censoring != Censoring::kNone && p.bound > 0)
        largest_censored = std::max(largest_censored, q.needed / p.bound);
  EXPECT_TRUE(std::isnan(constant) || constant < largest_censored)
      << constant << " " << largest_censored;
}

// Adaptive |x| (max_x_length): a pair capped at the first |x| grows ×4 until its needed n stops
// growing, reaches its upper side or the cap; it keeps its worst step, so its needed n is at
// least the fixed-|x| sweep's, and the steps and stop are the same for 1 and 2 threads.
TEST(RunSweep, AdaptiveXGrowsCappedPairsUntilNStopsGrowing) {
  SweepOptions o = Tiny();
  o.x_length = 40;
  o.eps = 0.05;
  o.iterations = 4;
  const SweepResult fixed = RunSweep(o);
  o.max_x_length = 40 * 4 * 4 * 4;
  o.threads = 1;
  const SweepResult grown = RunSweep(o);
  o.threads = 2;
  const SweepResult again = RunSweep(o);
  int grew = 0;
  for (std::size_t i = 0; i < grown.points.size(); ++i)
    for (std::size_t k = 0; k < grown.points[i].pairs.size(); ++k) {
      const SweepPair& q = grown.points[i].pairs[k];
      const SweepPair& f = fixed.points[i].pairs[k];
      ASSERT_FALSE(q.x_steps.empty());
      EXPECT_EQ(q.x_steps.front().first, f.x_length);  // the first step is the fixed |x|
      EXPECT_EQ(q.x_steps.front().second, f.needed);
      EXPECT_GE(q.needed, f.needed);
      EXPECT_TRUE(q.x_stop == "stopped growing" || q.x_stop == "upper side" || q.x_stop == "cap")
          << q.x_stop;
      // A step that did not meet ε (n = |x|) never ends the growth below the cap.
      if (!f.reached) {
        EXPECT_GE(q.x_steps.size(), 2u);
      }
      grew += q.x_steps.size() > 1;
      EXPECT_EQ(q.x_steps, again.points[i].pairs[k].x_steps);
      EXPECT_EQ(q.needed, again.points[i].pairs[k].needed);
    }
  EXPECT_GT(grew, 0);
  o.max_x_length = 20;  // below x_length
  EXPECT_THROW(RunSweep(o), OptionError);
}

// With out_dir every (point, pair) writes a needed-length point witness that replays from the
// file alone (docs/witnesses.md §6): the same n and censoring, the 50-digit recheck agreeing;
// a witness whose n was changed does not reproduce.
TEST(RunSweep, EveryPairWritesAPointWitnessThatReplays) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() /
      ("ltsim_sweep_witness_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  SweepOptions o = Tiny();
  o.values = {2, 3};
  o.x_length = 1500;
  o.out_dir = dir.string();
  const SweepResult r = RunSweep(o);
  SweepOptions without = o;
  without.out_dir.clear();
  const SweepResult plain = RunSweep(without);  // witnesses never change the numbers
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    for (std::size_t k = 0; k < r.points[i].pairs.size(); ++k) {
      const SweepPair& q = r.points[i].pairs[k];
      SCOPED_TRACE(q.witness_file);
      EXPECT_EQ(q.witness_file,
                "alphabet/p" + std::to_string(i) + "_m" + std::to_string(k) + ".point.json");
      EXPECT_EQ(q.needed, plain.points[i].pairs[k].needed);
      const fs::path path = dir / q.witness_file;
      ASSERT_TRUE(fs::exists(path));
      const fs::path stem = dir / ("alphabet/p" + std::to_string(i) + "_m" + std::to_string(k));
      for (const char* ext : {".f.json", ".g.json", ".x.txt"})
        EXPECT_TRUE(fs::exists(stem.string() + ext)) << ext;
      const PointWitness w = ReadPointWitness(path.string());
      EXPECT_EQ(w.kind, "needed-length");
      EXPECT_EQ(w.study, "sweep");
      EXPECT_EQ(w.value, q.needed);
      EXPECT_EQ(w.censored, !q.reached);
      EXPECT_EQ(w.recheck_status, RecheckStatus::kAgrees);
      std::uint64_t length = 0;
      for (const ltsim::Run& run : w.x) length += run.count;
      EXPECT_EQ(length, q.x_length);
      const PointReplay again = ReplayPoint(w);
      EXPECT_TRUE(again.reproduced) << again.detail;
      EXPECT_EQ(again.value, q.needed);
      PointWitness tampered = w;
      tampered.value = w.value + 1;
      EXPECT_FALSE(ReplayPoint(tampered).reproduced);
    }
  }
  fs::remove_all(dir);
}

// The defaults (p = 8, |x| = 20,000) leave γ = 0.5 outside the hardmax regime: T_hard = 2^16 =
// 65,536 > |x|. That point is marked, left out of the fit and named in the warning; γ = 1
// (T_hard = 256, 4·256 ≤ 20,000) and γ = 2 are inside.
TEST(RunSweep, TheDefaultsLeaveSmallMarginsOutsideTheHardmaxRegimeAndSaySo) {
  SweepOptions o;  // the defaults: p = 8, |x| = 20,000
  o.parameter = StudyParameter::kMargin;
  o.values = {0.5, 1, 2};
  o.pairs = 2;
  o.search = false;
  ASSERT_EQ(o.precision_bits, 8);
  ASSERT_EQ(o.x_length, 20000u);
  const SweepResult r = RunSweep(o);
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_FALSE(r.points[0].hardmax_regime);
  EXPECT_NEAR(r.points[0].t_hard, 65536, 1e-6);
  EXPECT_FALSE(r.points[0].in_fit);
  EXPECT_EQ(r.points[0].excluded, "outside the hardmax regime");
  for (const SweepPair& q : r.points[0].pairs) {
    EXPECT_FALSE(q.hardmax_regime);
    EXPECT_NEAR(q.log2_t_hard, 16, 1e-9);
    // Upper side: for finite attention at least T_hard.
    EXPECT_GE(q.upper_side, 65536 * (1 - 1e-12));
  }
  EXPECT_TRUE(r.points[1].hardmax_regime);
  EXPECT_NEAR(r.points[1].t_hard, 256, 1e-9);
  EXPECT_TRUE(r.points[2].hardmax_regime);
  EXPECT_EQ(r.points_outside_regime, 1);
  for (int used : r.simulator.used) EXPECT_NE(used, 0);
  EXPECT_LE(r.simulator.points, 2);  // only the two points inside the regime are a series
  const std::string warning = HardmaxRegimeWarning(r);
  EXPECT_NE(warning.find("1 of 3 points"), std::string::npos) << warning;
  EXPECT_NE(warning.find("65536"), std::string::npos) << warning;
  EXPECT_NE(warning.find("|x| >= 262144"), std::string::npos) << warning;
  // A long enough x puts every point inside.
  o.x_length = 262144;
  o.values = {0.5, 1};
  o.pairs = 1;
  const SweepResult inside = RunSweep(o);
  EXPECT_TRUE(inside.points[0].hardmax_regime);
  EXPECT_EQ(HardmaxRegimeWarning(inside), "");
}

// γ of SetLogitMargin's output is the requested margin (LogitMargin of docs/model.md §4.2, the same
// function `ltsim info` prints), to 1e-12 relative (the scaling's rounding), for hardmax and
// finite pairs; log₂ T_hard = p/γ follows; hardmax outputs do not change (a uniform scaling of
// every logit keeps the argmax sets).
TEST(MarginPair, TheGeneratedPairsHaveTheRequestedLogitMargin) {
  ModelSpec spec;
  spec.alphabet = 3;
  spec.locality = 1;
  spec.heads = 2;
  spec.grid = 1.0;
  PairSpec pair;
  pair.kind = PairKind::kPerturbed;
  for (Attention mode : {Attention::kHardmax, Attention::kFinite}) {
    spec.attention = mode;
    for (double margin : {0.25, 1.0, 3.0}) {
      for (std::uint64_t seed = 0; seed < 4; ++seed) {
        FuzzEngine engine(seed), twin(seed);
        const auto [f, g] = GenerateMarginPair(spec, pair, margin, engine);
        EXPECT_NEAR(LogitMargin(f), margin, 1e-12 * margin);
        EXPECT_NEAR(LogitMargin(g), margin, 1e-12 * margin);
        if (mode == Attention::kFinite) {
          EXPECT_NEAR(Log2HardmaxLength(f), spec.precision_bits / margin, 1e-9);
          continue;
        }
        const auto [f0, g0] = GeneratePair(spec, pair, twin);  // the same draw, unscaled
        const auto x = ParseTextString("0^50 1^7 2 0 1^3 2^2 1 0", "x");
        EXPECT_NEAR(SupDistance(Evaluate(f, *x), Evaluate(f0, *x)), 0.0, 1e-12);
      }
    }
  }
}

TEST(RunSweep, TheMarginSweepHoldsEachPairAtItsMarginAndFitsAgainstInverseGamma) {
  SweepOptions o = Tiny();
  o.parameter = StudyParameter::kMargin;
  o.values = {1, 2, 4};
  o.iterations = 6;
  const SweepResult r = RunSweep(o);
  EXPECT_NEAR(r.paper_exponent, 8 * std::log(2.0), 1e-12);  // p = 8 by default
  for (const SweepPoint& p : r.points) {
    EXPECT_DOUBLE_EQ(p.fit_x, 1 / p.value);
    for (const SweepPair& q : p.pairs)
      EXPECT_NEAR(q.constants.at("gamma"), p.value, 1e-12 * p.value);
  }
}

TEST(RunSweep, BadOptionsAreInputErrors) {
  SweepOptions o = Tiny();
  o.parameter = StudyParameter::kN;  // Lemma 5.3's, not Theorem 4.1's
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.values = {2};
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.values = {2, 2.5};
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.parameter = StudyParameter::kLocality;
  o.values = {0, 1};
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.parameter = StudyParameter::kMargin;
  o.values = {1, 100};
  EXPECT_THROW(RunSweep(o), InputError);
  o = Tiny();
  o.precision_bits = 0;
  EXPECT_THROW(RunSweep(o), InputError);
}

// Bad study options are OptionErrors keyed by the options field, never by a command-line flag
// (the command line maps the key to its flag: precision_bits is --precision in sweep).
template <typename Run>
void ExpectOptionError(Run run, const std::string& key) {
  try {
    run();
    ADD_FAILURE() << "expected an OptionError for " << key;
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), key);
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
}

TEST(StudyOptionsJson, EachOptionsStructWritesItsOwnRecord) {
  SweepOptions sweep = Tiny();
  sweep.parameter = StudyParameter::kMargin;
  const io::Json s = SweepOptionsToJson(sweep);
  EXPECT_EQ(s["parameter"], "margin");
  EXPECT_EQ(s["values"], io::Json(sweep.values));
  EXPECT_EQ(s["bound"], "max(thm4.1-hardmax, thm4.1-length)");
  EXPECT_EQ(s["method"], "search");
  TightnessOptions tightness;
  tightness.theorem = Theorem::k53;
  tightness.parameters = {StudyParameter::kN};
  const io::Json t = TightnessOptionsToJson(tightness);
  EXPECT_EQ(t["theorem"], "5.3");
  EXPECT_EQ(t["parameters"], io::Json::array({"n"}));
  EXPECT_EQ(t["budget"], tightness.statistics_budget);
  AttackSweepOptions attack;
  attack.inputs = {InputKind::kUniform, InputKind::kPeriodic};
  EXPECT_EQ(AttackSweepOptionsToJson(attack)["inputs"], "uniform,periodic");
  ExperimentOptions experiment;
  EXPECT_EQ(ExperimentOptionsToJson(experiment)["seeds"], experiment.seeds);
}

TEST(StudyOptionErrors, NameTheFieldNotAFlag) {
  SweepOptions sweep;
  sweep.parameter = StudyParameter::kAlphabet;
  sweep.values = {2, 3};
  sweep.precision_bits = 0;
  ExpectOptionError([&] { RunSweep(sweep); }, "precision_bits");
  sweep.precision_bits = 8;
  sweep.values = {2};
  ExpectOptionError([&] { RunSweep(sweep); }, "values");
  ExperimentOptions experiment;
  experiment.kgram_seeds = 0;
  ExpectOptionError([&] { RunExperiment(experiment); }, "kgram_seeds");
  TightnessOptions tightness;
  tightness.statistics_budget = 0;
  ExpectOptionError([&] { RunTightness(tightness); }, "statistics_budget");
  tightness = TightnessOptions();
  tightness.theorem = Theorem::k52;  // 5.2's rows: eps, attention-norm, positional-margin, k
  tightness.parameters = {StudyParameter::kN};
  ExpectOptionError([&] { RunTightness(tightness); }, "parameters");
  // A parameter of another theorem is no sweep parameter either (named in the message).
  sweep.parameter = StudyParameter::kK;
  sweep.values = {2, 3};
  ExpectOptionError([&] { RunSweep(sweep); }, "parameter");
  AttackSweepOptions attack;
  attack.lengths = {16, 160};
  ExpectOptionError([&] { RunAttackSweep(attack); }, "lengths");
}

}  // namespace
}  // namespace ltsim
