// Unit tests of the counterexample search: reproducibility, monotone climbs, shrinking, replay.
#include "ltsim/search/search.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ltsim/bounds/registry.h"
#include "ltsim/core/error.h"
#include "ltsim/model/constants.h"
#include "ltsim/search/proposals.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {
namespace {

// Tiny enough for a few seconds: R = 3, I = 6, |x| = 400.
SearchOptions Tiny(const std::string& objective) {
  SearchOptions o;
  o.objective = kSearchObjectiveNames.Parse(objective);
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
  for (const std::string& objective : kSearchObjectiveNames.Names()) {
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
  for (const std::string& objective : kSearchObjectiveNames.Names()) {
    const SearchOptions o = Tiny(objective);
    const SearchRestart r = HillClimb(o, 0);
    ASSERT_EQ(r.trajectory.size(), static_cast<std::size_t>(o.iterations + 1));
    for (std::size_t i = 1; i < r.trajectory.size(); ++i)
      EXPECT_GE(r.trajectory[i], r.trajectory[i - 1]) << objective << " at " << i;
    EXPECT_EQ(r.trajectory.back(), r.best.objective);
  }
}

std::uint64_t XLength(const SearchCandidate& c) { return CandidateInput(c)->length(); }

// Property-style: for every objective and seeds 0..5, shrinking never reports a witness below
// the best's objective, the stored value is the shrunk witness's own, and nothing grows.
TEST(Search, ShrinkingNeverLowersTheObjectiveBelowTheReportedValue) {
  for (const std::string& objective : kSearchObjectiveNames.Names()) {
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      SearchOptions o = Tiny(objective);
      o.seed = seed;
      o.iterations = 10;
      const SearchResult r = RunSearch(o);
      const SearchCandidate& best = r.restarts[r.best_restart].best;
      const ShrinkResult& s = r.shrunk;
      const SearchCandidate& shrunk = s.candidate;
      const std::string at = objective + " seed " + std::to_string(seed);
      EXPECT_GE(shrunk.objective, best.objective) << at;
      // Re-evaluated from scratch: bit-identical (a pure function of the stored witness).
      EXPECT_EQ(EvaluateCandidate(o, shrunk), shrunk.objective) << at;
      EXPECT_EQ(shrunk.f.layers[0].heads.size() + s.heads_removed, best.f.layers[0].heads.size())
          << at;
      EXPECT_EQ(shrunk.f.width + s.widths_removed, best.f.width) << at;
      EXPECT_EQ(shrunk.g.width, shrunk.f.width) << at;
      EXPECT_LE(XLength(shrunk), XLength(best)) << at;
    }
  }
}

// Measured (R = 3, I = 30, n = 40, |x| = 400, σ = 0.2, seeds 0..9): best / max(start, 1) is
// 2.65, 17, 108, 119, 290, 550, 5.4, 120, 210, 971 with the mixed proposals (the 6th smallest,
// which the test takes, is 120) and at most 1.08 with Gaussian steps alone. At least 20 leaves a
// factor 6 of room and still fails for a search that does not climb. max(start, 1): sim = ε is
// the scale of the objective, and most random starts have sim = 0.
TEST(Search, StructuralProposalsImproveOnTheStartsByAFactorOf20InTheMedian) {
  std::vector<double> factors;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    SearchOptions o = Tiny("sim-ratio");
    o.seed = seed;
    o.iterations = 30;
    double start = 1.0, best = 0.0;
    for (int i = 0; i < o.restarts; ++i) {
      const SearchRestart r = HillClimb(o, i);
      start = std::max(start, r.trajectory.front());
      best = std::max(best, r.best.objective);
    }
    factors.push_back(best / start);
  }
  std::nth_element(factors.begin(), factors.begin() + 5, factors.end());
  EXPECT_GE(factors[5], 20.0);
}

// The `logits` set only moves qk, bias and x: L(f), L(g) (hence the sweeps' bounds) stay.
TEST(Search, LogitsProposalsKeepTheLipschitzConstants) {
  SearchOptions o = Tiny("sim-ratio");
  o.proposals = ProposalSet::kLogits;
  SearchCandidate c = StartingPoint(o, 0);
  const double lf = LipschitzConstant(c.f), lg = LipschitzConstant(c.g);
  const std::vector<double> weights = ProposalWeights(o.proposals, o.search_x);
  FuzzEngine engine(5);
  int applied = 0;
  for (int i = 0; i < 60; ++i) {
    const ProposalKind kind = DrawProposal(weights, engine);
    EXPECT_NE(kind, ProposalKind::kGaussian);
    EXPECT_NE(kind, ProposalKind::kCopyRow);
    EXPECT_NE(kind, ProposalKind::kRescale);
    applied += ApplyProposal(kind, o, c, engine);
  }
  EXPECT_GT(applied, 30);  // most moves apply; they are not all refused
  EXPECT_EQ(LipschitzConstant(c.f), lf);
  EXPECT_EQ(LipschitzConstant(c.g), lg);
  EXPECT_LE(XLength(c), o.input.length);
}

// disagreement-length = T*/N: T* from an independent call of FindThreshold, N from the
// registry's two Thm 4.1 terms (the first absent for hardmax pairs, p = 0), floored at 1; a
// pair that never disagrees scores 0, and one disagreeing at length 1 scores 1/N.
TEST(Search, DisagreementLengthIsTheFirstDisagreementOverTheorem41Length) {
  SearchOptions o = Tiny("disagreement-length");
  o.eps = 0.05;
  o.n = 60;
  o.delta = 0.3;  // g = f + 0.3·N(0, 1): some starting pairs disagree within n
  int disagreeing = 0;
  for (int restart = 0; restart < 6; ++restart) {
    const SearchCandidate c = StartingPoint(o, restart);
    ThresholdOptions t;
    t.epsilon = o.eps;
    t.max_length = o.n;
    const ThresholdResult r = FindThreshold(c.f, c.g, t);
    ConstantMap k = PairConstants(ModelConstants(c.f), ModelConstants(c.g));
    k["eps"] = o.eps;
    ASSERT_EQ(k["p"], 0.0);  // the search's pairs are hardmax
    const double n = std::max(FindBound("thm4.1-length").value(k), 1.0);
    const double expected = r.first_disagreement ? *r.first_disagreement / n : 0.0;
    EXPECT_DOUBLE_EQ(c.objective, expected) << restart;
    disagreeing += r.first_disagreement.has_value();
  }
  EXPECT_GT(disagreeing, 0);  // the check above saw both branches' inputs
  SearchCandidate same = StartingPoint(o, 0);
  same.g = same.f;
  EXPECT_EQ(EvaluateCandidate(o, same), 0.0);
  same.g.readout_bias.array() += 1.0;  // ‖f − g‖ = 1 > ε on every string, from length 1
  ConstantMap k = PairConstants(ModelConstants(same.f), ModelConstants(same.g));
  k["eps"] = o.eps;
  EXPECT_DOUBLE_EQ(EvaluateCandidate(o, same),
                   1.0 / std::max(FindBound("thm4.1-length").value(k), 1.0));
}

TEST(Search, WitnessRoundTripsAndReplaysToTheSameObjective) {
  const SearchOptions o = Tiny("sim-ratio");
  const SearchResult r = RunSearch(o);
  const nlohmann::json doc = SearchWitnessToJson(o, r.shrunk.candidate);
  // Through text, as a file would be.
  const SearchWitness w = SearchWitnessFromJson(nlohmann::json::parse(doc.dump(2)), "witness");
  EXPECT_EQ(w.objective, SearchObjective::kSimRatio);
  const SearchCandidate& c = w.candidate;
  EXPECT_EQ(EvaluateObjective(w.objective, c.f, c.g, *CandidateInput(c), w.eps, w.n), c.objective);
  EXPECT_EQ(c.objective, r.shrunk.candidate.objective);
  EXPECT_EQ(c.x_runs, r.shrunk.candidate.x_runs);
}

TEST(Search, ExplicitXWitnessIsVersion2AndVersion1StillReads) {
  SearchOptions o = Tiny("sim-ratio");
  SearchCandidate c = StartingPoint(o, 1);
  nlohmann::json v1 = SearchWitnessToJson(o, c);
  EXPECT_EQ(v1["version"], 1);
  EXPECT_FALSE(v1.contains("x_runs"));
  EXPECT_TRUE(SearchWitnessFromJson(v1, "v1").candidate.x_runs.empty());
  c.x_runs = CandidateRuns(c);
  c.x_runs.front().count += 3;  // x now differs from its spec's string
  c.objective = EvaluateCandidate(o, c);
  const nlohmann::json v2 = SearchWitnessToJson(o, c);
  EXPECT_EQ(v2["version"], 2);
  const SearchWitness w = SearchWitnessFromJson(nlohmann::json::parse(v2.dump()), "v2");
  EXPECT_EQ(w.candidate.x_runs, c.x_runs);
  EXPECT_EQ(EvaluateObjective(w.objective, w.candidate.f, w.candidate.g,
                              *CandidateInput(w.candidate), w.eps, w.n),
            c.objective);
  nlohmann::json bad = v2;
  bad["version"] = 1;  // x_runs is not a version-1 key
  EXPECT_THROW(SearchWitnessFromJson(bad, "w"), InputError);
  bad = v2;
  bad.erase("x_runs");
  EXPECT_THROW(SearchWitnessFromJson(bad, "w"), InputError);
  bad = v2;
  bad["x_runs"] = nlohmann::json::array({{0, 0}});
  EXPECT_THROW(SearchWitnessFromJson(bad, "w"), InputError);
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
  bad.n = o.input.length + 1;
  EXPECT_THROW(RunSearch(bad), InputError);
}

// Objectives and proposal sets are enums with one name table each: the witness spells the
// objective by its table name, and an unknown name is an error naming the key and the known names.
TEST(Search, ObjectiveNamesAreOneTableReadOnce) {
  EXPECT_EQ(kSearchObjectiveNames.Known(),
            "needed-length, sim-ratio, sim-over-eta, needed, disagreement-length");
  EXPECT_EQ(kProposalSetNames.Known(), "mixed, gaussian, logits");
  SearchOptions o = Tiny("sim-ratio");
  const SearchCandidate c = StartingPoint(o, 0);
  for (const SearchObjective objective : kSearchObjectiveNames.Values()) {
    o.objective = objective;
    const nlohmann::json doc = SearchWitnessToJson(o, c);
    EXPECT_EQ(doc["objective"], kSearchObjectiveNames.Name(objective));
    EXPECT_EQ(SearchWitnessFromJson(doc, "w").objective, objective);
  }
  nlohmann::json doc = SearchWitnessToJson(o, c);
  doc["objective"] = "sim_ratio";
  try {
    SearchWitnessFromJson(doc, "w.search.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "w.search.json: objective: unknown search objective 'sim_ratio' (known: "
              "needed-length, sim-ratio, sim-over-eta, needed, disagreement-length)");
  }
  doc["objective"] = 3;
  EXPECT_THROW(SearchWitnessFromJson(doc, "w"), InputError);
  EXPECT_THROW(kProposalSetNames.Parse("annealing"), InputError);
}

}  // namespace
}  // namespace ltsim
