// `ltsim tightness --theorem 5.3`: the transport bound against exact cases and the adversary,
// censored points left out of the rate fit, witnesses that replay, thread-independence
// (docs/tightness.md §5).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ltsim/core/error.h"
#include "ltsim/study/attack_witness.h"
#include "ltsim/study/tightness.h"
#include "study/tightness/lemma_53.h"

namespace ltsim {
namespace {

TEST(WindowTransportBound, ExactOnSmallCases) {
  // One histogram each, S = 2: the best 1-Lipschitz p moves by ‖μ − μ'‖₁ = 0.6 (p = ±μ₀ shifted).
  EXPECT_NEAR(WindowTransportBound({0.2, 0.8}, 1, {0.5, 0.5}, 1, 2, 1.0), 0.6, 1e-15);
  // The cost of a pair is capped at 2G: |p| ≤ 1 cannot differ by more than 2.
  EXPECT_NEAR(WindowTransportBound({0.0, 1.0}, 1, {1.0, 0.0}, 1, 2, 5.0), 2.0, 1e-15);
  // x puts mass 1/2 on the window, z none: only |p| ≤ G bounds it.
  EXPECT_NEAR(WindowTransportBound({0.3, 0.7}, 2, {}, 4, 2, 1.0), 0.5, 1e-15);
  // Equal sets: nothing to move.
  EXPECT_EQ(WindowTransportBound({0.1, 0.9, 0.4, 0.6}, 2, {0.4, 0.6, 0.1, 0.9}, 2, 2, 3.0), 0.0);
}

TightnessOptions Small() {
  TightnessOptions o;
  o.theorem = Theorem::k53;
  o.points = 3;  // n = 16, 506, 16000
  o.seeds = 2;
  o.schemes = {"markov", "truncate"};
  o.statistic_x_length = 20000;
  o.seed = 4;
  o.threads = 2;
  return o;
}

TEST(TightnessLemma53, RowsPerSchemeWithBothSidesAndTheLemmasRate) {
  const TightnessResult r = RunTightness(Small());
  ASSERT_EQ(r.rows.size(), 3u);  // n_markov, n_truncate, tau_markov
  const TightnessRow& markov = r.rows[0];
  EXPECT_EQ(markov.parameter, StudyParameter::kN);
  EXPECT_EQ(markov.scheme, "markov");
  EXPECT_DOUBLE_EQ(markov.paper, -1.0 / 3);
  EXPECT_TRUE(std::isnan(r.rows[1].paper));
  EXPECT_NE(r.rows[1].verdict.reason.find("markov"), std::string::npos);
  // The locality row: τ = 0, 1, 2 at n = 1000, the lemma's exponent 1 in τ + 1.
  const TightnessRow& tau = r.rows[2];
  EXPECT_EQ(tau.parameter, StudyParameter::kLocality);
  EXPECT_EQ(tau.name, "tau_markov");
  EXPECT_DOUBLE_EQ(tau.paper, 1.0);
  EXPECT_NE(tau.verdict.reason.find("z seeds a point, n = 1000"), std::string::npos);
  // The markov row's verdict is the one rule's (docs/statistics.md §4) on the same sweep.
  const AttackSweepResult sweep = RunAttackSweep(Lemma53SweepOptions(Small()));
  const Lemma53Decision d = DecideLemma53Rate(sweep, 0);
  EXPECT_EQ(markov.verdict.verdict, d.verdict.verdict);
  EXPECT_EQ(markov.verdict.reason, d.verdict.reason);
  EXPECT_EQ(sweep.markov_rate_verdict,
            std::string(VerdictName(d.verdict.verdict)) + ": " + d.verdict.reason);
  for (const TightnessRow& row : r.rows) {
    ASSERT_EQ(row.points.size(), 3u);
    for (const TightnessPoint& p : row.points)
      for (std::size_t k = 0; k < p.lower.size(); ++k) {
        // The transport bound holds over the whole class, which contains the searched
        // family: it bounds the adversary's error sample by sample (up to double rounding of
        // sums of ≤ 16,000 + 20,000 terms of size ≤ 2: 1e-9).
        EXPECT_GE(p.upper[k].sample.value, p.lower[k].sample.value - 1e-9)
            << row.scheme << " n = " << p.value;
        EXPECT_LE(p.lower[k].sample.value, 2.0);  // |p| ≤ G = 1
      }
  }
  // The same rows for any thread count.
  TightnessOptions one = Small();
  one.threads = 1;
  const TightnessResult again = RunTightness(one);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    EXPECT_EQ(again.rows[i].lower.exponent, r.rows[i].lower.exponent);
    EXPECT_EQ(again.rows[i].upper.exponent, r.rows[i].upper.exponent);
    EXPECT_EQ(again.rows[i].verdict.reason, r.rows[i].verdict.reason);
  }
}

TEST(TightnessLemma53, ACensoredPointNeverEntersTheFit) {
  TightnessOptions o = Small();
  o.points = 4;
  o.schemes = {"markov"};
  AttackSweepResult sweep = RunAttackSweep(Lemma53SweepOptions(o));
  const TightnessRow before = Lemma53RowsFromSweep(o, sweep, {}).front();
  ASSERT_EQ(before.lower.points_used, 4);
  // Plant: at the second n every family's error is 0 for z seed 0 (z reproduced x's statistic).
  for (std::size_t i = 0; i < sweep.options.inputs.size(); ++i)
    sweep.cells[(1 * sweep.options.inputs.size() + i) * 2 + 0].error = 0;
  const TightnessRow after = Lemma53RowsFromSweep(o, sweep, {}).front();
  const TightnessSample& planted = after.points[1].lower[0];
  EXPECT_EQ(planted.sample.censoring, Censoring::kBelow);
  EXPECT_EQ(planted.sample.value, 1e-12);  // only ≤ the floor
  EXPECT_EQ(after.lower.points_used, 3);
  EXPECT_EQ(after.lower.points_censored, 1);
  EXPECT_EQ(after.lower.used, (std::vector<int>{0, 2, 3}));
  // Three points remain (the minimum for an interval): the fit is that of the other points
  // alone, so moving the censored point's other sample changes nothing.
  sweep.cells[(1 * sweep.options.inputs.size() + 0) * 2 + 1].error *= 1000;
  const TightnessRow moved = Lemma53RowsFromSweep(o, sweep, {}).front();
  EXPECT_EQ(moved.lower.exponent, after.lower.exponent);
  // With two censored points too few remain: inconclusive, and the reason says why.
  for (std::size_t i = 0; i < sweep.options.inputs.size(); ++i)
    sweep.cells[(2 * sweep.options.inputs.size() + i) * 2 + 1].error = 0;
  const TightnessRow sparse = Lemma53RowsFromSweep(o, sweep, {}).front();
  EXPECT_EQ(sparse.verdict.verdict, Verdict::kInconclusive);
  EXPECT_FALSE(sparse.lower.ci.has_value());
  EXPECT_NE(sparse.verdict.reason.find("lower side"), std::string::npos) << sparse.verdict.reason;
}

TEST(TightnessLemma53, WitnessesReplayFromTheFileAlone) {
  TightnessOptions o = Small();
  o.schemes = {"blocks"};
  o.seeds = 1;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ltsim_t53_" + std::to_string(getpid()));
  o.out = dir.string();
  const TightnessResult r = RunTightness(o);
  const std::string file = (dir / r.rows[0].points[1].lower[0].witness).string();
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  const AttackWitness w = ReadAttackWitness(file);
  EXPECT_EQ(w.options.method, "blocks");
  EXPECT_EQ(w.options.length, 506u);
  EXPECT_EQ(w.error, r.rows[0].points[1].lower[0].sample.value);
  EXPECT_TRUE(ReplayAttack(w).reproduced);
  AttackWitness changed = w;
  changed.error *= 1.01;
  EXPECT_FALSE(ReplayAttack(changed).reproduced);
  std::filesystem::remove_all(dir);
}

TEST(TightnessLemma53, BadOptions) {
  TightnessOptions o = Small();
  o.parameters = {StudyParameter::kEps};
  EXPECT_THROW(RunTightness(o), InputError);
  o = Small();
  o.schemes = {"frequency"};  // needs models
  EXPECT_THROW(RunTightness(o), InputError);
  o = Small();
  o.statistic_x_length = 16000;  // not above the largest n
  EXPECT_THROW(RunTightness(o), InputError);
  o = Small();
  o.theorem = Theorem::k52;
  o.parameters = {StudyParameter::kN};  // Lemma 5.3's, not Theorem 5.2's
  try {
    RunTightness(o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("known: eps, attention-norm, positional-margin, k"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ltsim
