// Unit tests of `experiment paper`: tiny runs, consistency, and the paper's trends
// (docs/theory.md §6).
#include "ltsim/study/experiment.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ltsim/core/error.h"
#include "ltsim/study/point_witness.h"

namespace ltsim {
namespace {

// A small run: two values per series, |x| = 4000, fixed seed.
ExperimentOptions Tiny() {
  ExperimentOptions o;
  o.omegas = {1, 8};
  o.primes = {2, 7};
  o.alphabets = {2, 3};
  o.ks = {1, 2};
  o.x_length = 4000;
  o.seeds = 2;
  o.kgram_seeds = 2;
  o.seed = 5;
  return o;
}

TEST(Experiment, TinyRunHasOneRowPerValueAndConsistentTrends) {
  const ExperimentResult r = RunExperiment(Tiny());
  ASSERT_EQ(r.rows.size(), 8u);
  ASSERT_EQ(r.trends.size(), 4u);
  for (const ExperimentRow& row : r.rows) {
    EXPECT_GE(row.needed, 1u) << row.task << " " << row.value;
    EXPECT_LE(row.needed, 4000u) << row.task << " " << row.value;
    EXPECT_EQ(row.reached, row.needed < 4000u) << row.task << " " << row.value;
    EXPECT_EQ(row.method, row.task == "kgram" ? "markov" : "frequency");
  }
  for (const ExperimentTrend& t : r.trends) {
    ASSERT_EQ(t.values.size(), 2u);
    // Two points give no interval: "rises" is never claimed (docs/statistics.md §3).
    EXPECT_FALSE(t.rises);
    EXPECT_NE(t.trend.trend, Trend::kRises);
    EXPECT_FALSE(t.estimate.ci.has_value());
    EXPECT_LE(t.estimate.points_used, 2);
  }
  // Pure in the options.
  const ExperimentResult again = RunExperiment(Tiny());
  for (std::size_t i = 0; i < r.rows.size(); ++i) EXPECT_EQ(again.rows[i].needed, r.rows[i].needed);
}

// The paper's claim (docs/theory.md §6), checked on our constructions: the needed length for a
// given ε rises with ω (SimpleTask) and with Δ = p (ModPTask).
TEST(Experiment, NeededLengthRisesWithOmegaAndPeriod) {
  ExperimentOptions o = Tiny();
  o.alphabets.clear();
  o.ks.clear();
  o.x_length = 20000;
  const ExperimentResult r = RunExperiment(o);
  ASSERT_EQ(r.trends.size(), 2u);
  const ExperimentTrend& omega = r.trends[0];
  const ExperimentTrend& period = r.trends[1];
  EXPECT_EQ(omega.parameter, "omega");
  EXPECT_GE(omega.needed[1], omega.needed[0]);
  EXPECT_EQ(period.parameter, "p");
  EXPECT_GE(period.needed[1], period.needed[0]);
}

// With out_dir every row writes a needed-length point witness: the one-layer rows with the
// frequency simulator (and their 50-digit recheck), the k-gram rows with the seeded markov
// simulator (version 2's `simulator`); each replays to the row's number from the file alone.
TEST(Experiment, EveryRowWritesAPointWitnessThatReplays) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("ltsim_experiment_witness_" +
                        std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  ExperimentOptions o = Tiny();
  o.omegas = {8};
  o.primes = {7};
  o.alphabets = {2};
  o.ks = {1};
  o.x_length = 2000;
  o.out_dir = dir.string();
  const ExperimentResult r = RunExperiment(o);
  ASSERT_EQ(r.rows.size(), 4u);
  ExperimentOptions plain = o;
  plain.out_dir.clear();
  const ExperimentResult without = RunExperiment(plain);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const ExperimentRow& row = r.rows[i];
    SCOPED_TRACE(row.witness_file);
    EXPECT_EQ(row.witness_file, row.task + "-" + row.parameter + "/p0.point.json");
    EXPECT_EQ(row.needed, without.rows[i].needed);
    EXPECT_EQ(row.x_seed, without.rows[i].x_seed);
    ASSERT_TRUE(fs::exists(dir / row.witness_file));
    const PointWitness w = ReadPointWitness((dir / row.witness_file).string());
    EXPECT_EQ(w.study, "experiment");
    EXPECT_EQ(w.value, row.needed);
    EXPECT_EQ(w.method, row.method);
    EXPECT_EQ(w.recheck_status,
              row.task == "kgram" ? RecheckStatus::kSkipped : RecheckStatus::kAgrees);
    const PointReplay again = ReplayPoint(w);
    EXPECT_TRUE(again.reproduced) << again.detail;
    PointWitness tampered = w;
    tampered.value = w.value + 1;
    EXPECT_FALSE(ReplayPoint(tampered).reproduced);
  }
  fs::remove_all(dir);
}

TEST(Experiment, BadOptionsAreInputErrors) {
  ExperimentOptions o = Tiny();
  o.primes = {1};
  EXPECT_THROW(RunExperiment(o), InputError);
  o = Tiny();
  o.kgram_method = "frequency";
  EXPECT_THROW(RunExperiment(o), InputError);
  o = Tiny();
  o.eps = 0;
  EXPECT_THROW(RunExperiment(o), InputError);
}

}  // namespace
}  // namespace ltsim
