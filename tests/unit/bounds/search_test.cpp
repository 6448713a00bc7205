// Unit tests of the counterexample search: reproducibility, monotone climbs, shrinking, replay.
#include "ltsim/bounds/search.h"

#include <gtest/gtest.h>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// Tiny enough for a few seconds: R = 3, I = 6, |x| = 400.
SearchOptions Tiny(const std::string& objective) {
  SearchOptions o;
  o.objective = objective;
  o.eps = 0.01;
  o.n = 40;
  o.restarts = 3;
  o.iterations = 6;
  o.seed = 11;
  o.step = 0.2;
  o.input.length = 400;
  return o;
}

TEST(Search, SameSeedSameResultForAnyThreadCount) {
  for (const std::string& objective : SearchObjectives()) {
    SearchOptions one = Tiny(objective);
    one.threads = 1;
    SearchOptions two = one;
    two.threads = 2;
    const SearchResult a = RunSearch(one), b = RunSearch(two), c = RunSearch(one);
    ASSERT_EQ(a.restarts.size(), b.restarts.size());
    for (std::size_t i = 0; i < a.restarts.size(); ++i)
      EXPECT_EQ(a.restarts[i].trajectory, b.restarts[i].trajectory) << objective << " " << i;
    EXPECT_EQ(a.best_restart, b.best_restart);
    EXPECT_EQ(a.shrunk.candidate.objective, b.shrunk.candidate.objective);
    const auto json = [&](const SearchResult& r) {
      return SearchWitnessToJson(r.options, r.shrunk.candidate).dump();
    };
    EXPECT_EQ(json(a), json(b)) << objective;
    EXPECT_EQ(json(a), json(c)) << objective;
  }
}

TEST(Search, HillClimbNeverDecreasesTheBest) {
  for (const std::string& objective : SearchObjectives()) {
    const SearchOptions o = Tiny(objective);
    const SearchRestart r = HillClimb(o, 0);
    ASSERT_EQ(r.trajectory.size(), static_cast<std::size_t>(o.iterations + 1));
    for (std::size_t i = 1; i < r.trajectory.size(); ++i)
      EXPECT_GE(r.trajectory[i], r.trajectory[i - 1]) << objective << " at " << i;
    EXPECT_EQ(r.trajectory.back(), r.best.objective);
  }
}

TEST(Search, ShrinkingKeepsTheObjectiveAtOrAboveTheReportedValue) {
  for (const std::string& objective : SearchObjectives()) {
    const SearchOptions o = Tiny(objective);
    const SearchResult r = RunSearch(o);
    const SearchCandidate& best = r.restarts[r.best_restart].best;
    const SearchCandidate& shrunk = r.shrunk.candidate;
    EXPECT_GE(shrunk.objective, best.objective) << objective;
    // The stored objective is the shrunk pair's own (re-evaluated: bit-identical).
    EXPECT_EQ(EvaluateObjective(objective, shrunk.f, shrunk.g, shrunk.input, o.eps, o.n),
              shrunk.objective);
    EXPECT_LE(shrunk.f.layers[0].heads.size(), best.f.layers[0].heads.size());
    EXPECT_LE(shrunk.input.length, best.input.length);
  }
}

TEST(Search, WitnessRoundTripsAndReplaysToTheSameObjective) {
  const SearchOptions o = Tiny("sim-ratio");
  const SearchResult r = RunSearch(o);
  const nlohmann::json doc = SearchWitnessToJson(o, r.shrunk.candidate);
  // Through text, as a file would be.
  const SearchWitness w = SearchWitnessFromJson(nlohmann::json::parse(doc.dump(2)), "witness");
  EXPECT_EQ(w.objective, "sim-ratio");
  const SearchCandidate& c = w.candidate;
  EXPECT_EQ(EvaluateObjective(w.objective, c.f, c.g, c.input, w.eps, w.n), c.objective);
  EXPECT_EQ(c.objective, r.shrunk.candidate.objective);
}

TEST(Search, StrictWitnessAndOptionErrors) {
  const SearchOptions o = Tiny("sim-ratio");
  SearchCandidate c = HillClimb(o, 0).best;
  nlohmann::json doc = SearchWitnessToJson(o, c);
  doc["extra"] = 1;
  EXPECT_THROW(SearchWitnessFromJson(doc, "w"), InputError);
  doc.erase("extra");
  doc.erase("input");
  EXPECT_THROW(SearchWitnessFromJson(doc, "w"), InputError);
  SearchOptions bad = o;
  bad.objective = "nope";
  EXPECT_THROW(RunSearch(bad), InputError);
  bad = o;
  bad.n = o.input.length + 1;
  EXPECT_THROW(RunSearch(bad), InputError);
}

}  // namespace
}  // namespace ltsim
