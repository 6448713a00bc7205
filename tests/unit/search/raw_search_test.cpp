// The raw-T* search (docs/refute.md): constraints kept, reproducible for any thread count,
// family seeds certified, witnesses rechecked in 50 digits and replayed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "ltsim/construct/families.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/raw_threshold_search.h"
#include "ltsim/search/refute.h"
#include "ltsim/search/two_layer_refute.h"
#include "ltsim/threshold/threshold.h"
#include "search/raw_internal.h"

namespace ltsim {
namespace {

RawSearchOptions Small() {
  RawSearchOptions o;
  o.cls.alphabet = 2;
  o.cls.width = 6;
  o.cls.heads = 2;
  o.cls.mlp_width = 1;
  o.cls.max_lipschitz = 4.0;
  o.eps = 0.05;
  o.max_length = 120;
  o.budget = 24;
  o.iterations = 5;
  o.seed = 7;
  return o;
}

TEST(RawSearch, RandomPairsAndProposalsStayInTheClass) {
  const RawSearchOptions o = Small();
  raw::Engine e(3);
  for (int k = 0; k < 20; ++k) {
    auto [f, g] = raw::RandomPair(o.cls, e);
    EXPECT_TRUE(InClass(o.cls, f) && InClass(o.cls, g));
    for (int kind = 0; kind < static_cast<int>(raw::ProposalNames().size()); ++kind) {
      Transformer f2 = f, g2 = g;
      raw::Memory memory;
      TypeCounts hint;
      if (!raw::Propose(kind, o, memory, f2, g2, e, &hint)) continue;
      ASSERT_TRUE(ProjectOntoClass(o.cls, f2) && ProjectOntoClass(o.cls, g2));
      EXPECT_LE(LipschitzConstant(f2), o.cls.max_lipschitz * (1 + 1e-9))
          << raw::ProposalNames()[kind];
      EXPECT_LE(LipschitzConstant(g2), o.cls.max_lipschitz * (1 + 1e-9))
          << raw::ProposalNames()[kind];
      EXPECT_TRUE(InClass(o.cls, f2) && InClass(o.cls, g2)) << raw::ProposalNames()[kind];
    }
  }
}

TEST(RawSearch, FiniteMarginIsProjected) {
  RawSearchOptions o = Small();
  o.cls.modes = {Attention::kFinite};
  o.cls.min_margin = 0.75;
  raw::Engine e(5);
  for (int k = 0; k < 10; ++k) {
    auto [f, g] = raw::RandomPair(o.cls, e);
    for (const Transformer* m : {&f, &g}) {
      const double gamma = LogitMargin(*m);
      if (std::isfinite(gamma)) {
        EXPECT_GE(gamma, 0.75 * (1 - 1e-9));
      }
    }
  }
}

TEST(RawSearch, ProjectionMeetsTheConstraintsExactlyWhereItActs) {
  // L is linear in the readout: a pair 10× over L₀ comes back to L₀ (up to 1e-12) with f's
  // output scaled by the same factor; γ is linear in the logits: a finite layer below γ₀ comes
  // up to γ₀; a model already inside is unchanged.
  RawSearchOptions o = Small();
  raw::Engine e(17);
  auto [f, g] = raw::RandomPair(o.cls, e);
  const double L = LipschitzConstant(f);
  ASSERT_GT(L, 0.0);
  Transformer big = f;
  big.readout_weight *= 10.0 * o.cls.max_lipschitz / L;
  ASSERT_TRUE(ProjectOntoClass(o.cls, big));
  EXPECT_NEAR(LipschitzConstant(big), o.cls.max_lipschitz, 1e-9 * o.cls.max_lipschitz);
  EXPECT_TRUE(InClass(o.cls, big));
  Transformer same = big;
  ASSERT_TRUE(ProjectOntoClass(o.cls, same));
  EXPECT_EQ(same.readout_weight, big.readout_weight);

  PairClass finite = o.cls;
  finite.modes = {Attention::kFinite};
  finite.min_margin = 2.0;
  Transformer m = f;
  m.layers[0].attention = Attention::kFinite;
  m.layers[0].precision_bits = finite.precision_bits;
  const double gamma = LogitMargin(m);
  ASSERT_TRUE(std::isfinite(gamma) && gamma > 0) << gamma;
  for (Head& h : m.layers[0].heads) {
    h.qk *= 0.5 / gamma;
    h.bias *= 0.5 / gamma;
  }
  EXPECT_FALSE(InClass(finite, m));
  ASSERT_TRUE(ProjectOntoClass(finite, m));
  EXPECT_GE(LogitMargin(m), 2.0 * (1 - 1e-9));
  EXPECT_TRUE(InClass(finite, m));
  // The wrong sizes are never in the class.
  Transformer wide = f;
  wide.width += 1;
  EXPECT_FALSE(InClass(o.cls, wide));
}

TEST(RawSearch, ResidualMatchesTheEvaluator) {
  // With the MLP removed and the readout the identity on one coordinate, f(x) = u_T[i].
  const RawSearchOptions o = Small();
  raw::Engine e(11);
  auto [f, g] = raw::RandomPair(o.cls, e);
  f.layers[0].mlp.reset();
  for (int i = 0; i < f.width; ++i) {
    f.readout_weight.setZero();
    f.readout_weight(0, i) = 1.0;
    for (std::uint64_t t : {1, 2, 5, 9})
      raw::ForEachStatistic(2, 1, 0, t, [&](const TypeCounts& c) {
        EXPECT_NEAR(raw::ResidualBeforeMlp(f, c)(i), EvaluateOneLayer(f, c)(0), 1e-12);
        return true;
      });
  }
}

TEST(RawSearch, ScaledStatisticsAreStatisticsOfTheirLength) {
  raw::Engine e(2);
  for (int k = 0; k < 50; ++k) {
    const TypeCounts c = raw::RandomStatistic(3, 2, 1, 37, e);
    for (std::uint64_t factor : {1, 2, 7}) {
      const TypeCounts s = raw::ScaleStatistic(c, factor);
      std::uint64_t total = 0;
      for (auto x : s.far) total += x;
      EXPECT_EQ(total + s.suffix.size(), s.length);
      EXPECT_EQ(s.suffix, c.suffix);
    }
  }
}

TEST(RawSearch, IdenticalForAnyThreadCount) {
  RawSearchOptions a = Small(), b = Small();
  a.threads = 1;
  b.threads = 2;
  const RawSearchResult ra = RunRawSearch(a), rb = RunRawSearch(b);
  ASSERT_EQ(ra.restarts.size(), rb.restarts.size());
  for (std::size_t i = 0; i < ra.restarts.size(); ++i) {
    EXPECT_EQ(ra.restarts[i].trajectory, rb.restarts[i].trajectory);
    EXPECT_EQ(ra.restarts[i].best.first_disagreement, rb.restarts[i].best.first_disagreement);
  }
  EXPECT_EQ(ra.best_restart, rb.best_restart);
  EXPECT_LE(ra.evaluations, a.budget);
}

TEST(RawSearch, FamilySeedsReachTheFamilysThreshold) {
  RawSearchOptions o = Small();
  const auto seeds = FamilySeeds(o);
  ASSERT_FALSE(seeds.empty());
  for (const auto& [name, pair] : seeds) {
    const RawEvaluation e = EvaluateRawPair(o, pair.first, pair.second);
    ASSERT_TRUE(e.valid) << name << ": " << e.note;
    EXPECT_TRUE(e.separated) << name << " sup gap " << e.sup_gap;
    // The padded family computes the family's function: its T* is the closed form's (or > N).
    const auto meta = nlohmann::json::parse(pair.first.meta_json);
    const std::uint64_t closed = meta["first_disagreement"];
    if (closed <= o.max_length)
      EXPECT_EQ(e.first_disagreement, closed) << name;
    else
      EXPECT_FALSE(e.first_disagreement.has_value()) << name;
    const RawRecheck r = RecheckRaw(o, pair.first, pair.second, e);
    EXPECT_EQ(r.status, RecheckStatus::kAgrees) << name;
  }
}

TEST(RawSearch, WitnessReplays) {
  RawSearchOptions o = Small();
  const RawSearchResult r = RunRawSearch(o);
  const RawRestart& best = r.restarts[r.best_restart];
  EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
  const auto path = std::filesystem::temp_directory_path() /
                    ("ltsim_raw_witness_" + std::to_string(::getpid()) + ".json");
  const nlohmann::json witness = RawWitnessToJson(o, best.f, best.g, best.best, r.recheck);
  // The models go in as JSON values: the same document as their model files.
  EXPECT_EQ(witness["f"], nlohmann::json::parse(ModelToJson(best.f)));
  EXPECT_EQ(witness["g"], nlohmann::json::parse(ModelToJson(best.g)));
  std::ofstream(path) << witness.dump();
  std::string report;
  EXPECT_TRUE(ReplayRawWitness(path.string(), &report)) << report;
  std::filesystem::remove(path);
}

TEST(RawSearch, HalfSpaceOnTheNestedHeadsBeatsTheFamily) {
  // The nested family's two heads (ratios 1/(C₁ + 1) and C₁/T, docs/families.md) with f − g
  // rebuilt by the half-space mechanism along the family's own MLP direction: c is raised to
  // what L₀ allows and z₀ placed just below the long-length supremum, so T* grows from the
  // family's 324 to 1036 (measured; exact threshold up to N = 2000) and the pair stays in the
  // class and separated.
  RawSearchOptions o = Small();
  o.cls.max_lipschitz = 8.0;
  o.max_length = 2000;
  for (const auto& [name, pair] : FamilySeeds(o)) {
    if (name != "nested") continue;
    const RawEvaluation family = EvaluateRawPair(o, pair.first, pair.second);
    ASSERT_TRUE(family.first_disagreement.has_value());
    EXPECT_EQ(*family.first_disagreement, 324u);
    Transformer f = pair.first, g = pair.second;
    Vector w = f.layers[0].mlp->in.row(0).transpose();
    w /= w.norm();
    raw::Engine engine(1);
    TypeCounts hint;
    ASSERT_TRUE(raw::HalfSpace(o, w, f, g, engine, &hint));
    ASSERT_TRUE(ProjectOntoClass(o.cls, f) && ProjectOntoClass(o.cls, g));
    EXPECT_TRUE(InClass(o.cls, f) && InClass(o.cls, g));
    const RawEvaluation e = EvaluateRawPair(o, f, g, {hint});
    ASSERT_TRUE(e.valid && e.separated) << e.note << " sup " << e.sup_gap;
    ASSERT_TRUE(e.first_disagreement.has_value());
    EXPECT_GE(*e.first_disagreement, 3 * *family.first_disagreement);
    EXPECT_EQ(RecheckRaw(o, f, g, e).status, RecheckStatus::kAgrees);
    return;
  }
  FAIL() << "no nested seed for this class";
}

// The `chain` proposal composes conditions (docs/refute.md §3): with one condition (the query
// tied with the keys of a token set A₁, share 1/(C₁ + 1)) the half-space's region is reached
// once C₁ + 1 exceeds c/((1.05κ − 1)ε) with c ≤ L₀, so T* ≤ L₀/ε; with k conditions every
// ratio must be small at once, and T* grows like (L/ε)^k. Built on random pairs of the
// three-head class (S = 3, H = 3, d = 7, m = 1, hardmax, L₀ = 8, ε = 0.05, L₀/ε = 160, N =
// 3000). Measured when written (engine seed 11): one condition T* = 84, two 1855. About 3 s
// (label slow).
TEST(RawSearch, ChainedConditionsOutlastASingleCondition) {
  RawSearchOptions o = Small();
  o.cls.alphabet = 3;
  o.cls.heads = 3;
  o.cls.width = 7;
  o.cls.max_lipschitz = 8.0;
  o.max_length = 3000;
  const double scale = o.cls.max_lipschitz / o.eps;  // L₀/ε = 160
  raw::Engine engine(11);
  auto threshold = [&](int conditions, std::uint64_t* t) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto [f, g] = raw::RandomPair(o.cls, engine);
      raw::Memory memory;
      TypeCounts hint;
      if (!raw::ComposeChain(o, memory, f, g, engine, false, conditions)) continue;
      EXPECT_EQ(static_cast<int>(memory.chain_heads.size()), conditions);
      if (!raw::ApplyMechanism(o, memory, f, g, engine, &hint)) continue;
      if (!ProjectOntoClass(o.cls, f) || !ProjectOntoClass(o.cls, g)) continue;
      EXPECT_TRUE(InClass(o.cls, f) && InClass(o.cls, g));
      const RawEvaluation e = EvaluateRawPair(o, f, g, {hint});
      if (!e.valid || !e.separated || !e.first_disagreement) continue;
      EXPECT_EQ(RecheckRaw(o, f, g, e).status, RecheckStatus::kAgrees);
      *t = *e.first_disagreement;
      return true;
    }
    return false;
  };
  std::uint64_t one = 0, two = 0;
  ASSERT_TRUE(threshold(1, &one));
  ASSERT_TRUE(threshold(2, &two));
  EXPECT_LE(static_cast<double>(one), scale) << one;
  EXPECT_GT(static_cast<double>(two), 2.0 * scale) << two;
}

TEST(RawSearch, SearchBeatsRandomStartsOnTheSameBudget) {
  // Hill climbs from random starts (no family seeds) against the random baseline (every
  // evaluation a fresh random start, drawn as the climbs' starts are, mechanism included), 150
  // evaluations of T* each (3 climbs of 50, no shrinking), N = 200, S = 2, Δ = 1, τ = 0, d = 6, H =
  // 2, m = 1, L₀ = 3, ε = 0.05. Measured when written, best separated T* (201 = none up to N):
  //   seed      1    2    3    4    5    6    7    8
  //   search  134  201  141   21  193  201  118   15   (median 137.5)
  //   random   19   49   19   15   12   66   11   12   (median 17)
  // (the table predates the `chain` proposal; the assertions below hold with it.)
  // The test runs seeds 1–3 (search 476 in all, random 87 when the table was measured).
  std::uint64_t search_total = 0, random_total = 0;
  int search_wins = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    RawSearchOptions o = Small();
    o.cls.max_lipschitz = 3.0;
    o.max_length = 200;
    o.budget = 150;
    o.iterations = 49;
    o.family_seeds = false;
    o.shrink_budget = 0;  // the climbs alone
    o.seed = seed;
    auto best_t = [](const RawSearchResult& r) {
      std::uint64_t t = 0;
      for (const RawRestart& x : r.restarts)
        if (x.best.valid && x.best.separated)
          t = std::max(t, x.best.first_disagreement.value_or(x.best.checked_up_to + 1));
      return t;
    };
    const std::uint64_t s = best_t(RunRawSearch(o));
    o.random_only = true;
    const std::uint64_t r = best_t(RunRawSearch(o));
    search_total += s;
    random_total += r;
    search_wins += s > r;
  }
  EXPECT_GE(search_wins, 2);
  EXPECT_GT(search_total, 2 * random_total) << search_total << " vs " << random_total;
}

TEST(RawSearch, ShrinkingKeepsTheClassAndTheScore) {
  RawSearchOptions o = Small();
  o.budget = 60;
  o.iterations = 19;
  o.shrink_budget = 0;
  const RawSearchResult r = RunRawSearch(o);
  RawRestart best = r.restarts[r.best_restart];
  std::uint64_t spent = 0;
  ShrinkRestart(o, best, 30, &spent);
  EXPECT_LE(spent, 30u);
  EXPECT_TRUE(InClass(o.cls, best.f) && InClass(o.cls, best.g));
  EXPECT_GE(best.best.score, r.restarts[r.best_restart].best.score);
  // The kept evaluation is the pair's own.
  const RawEvaluation again =
      EvaluateRawPair(o, best.f, best.g,
                      best.best.sup_statistic ? std::vector<TypeCounts>{*best.best.sup_statistic}
                                              : std::vector<TypeCounts>{});
  EXPECT_EQ(again.first_disagreement, best.best.first_disagreement);
  EXPECT_EQ(again.separated, best.best.separated);
}

TEST(Refute, SameBytesForAnyThreadCountAndRun) {
  RefuteOptions o;
  o.search = Small();
  o.bound = "L/eps";
  o.search.threads = 1;
  const std::string one = RefuteToJson(RunRefute(o)).dump();
  EXPECT_EQ(RefuteToJson(RunRefute(o)).dump(), one);
  o.search.threads = 2;
  EXPECT_EQ(RefuteToJson(RunRefute(o)).dump(), one);
}

TEST(Refute, BoundsAreJudgedAtThePairsConstants) {
  RefuteOptions o;
  o.search = Small();
  o.bound = "1";  // any separated pair with T* > 1 refutes N = 1
  const RefuteResult r = RunRefute(o);
  EXPECT_TRUE(r.refuted);
  EXPECT_GT(r.best.ratio, 1.0);
  o.bound = "1e12*L/eps";
  EXPECT_FALSE(RunRefute(o).refuted);
  o.bound = "L/nope";
  EXPECT_THROW(RunRefute(o), InputError);
}

// A pair censored at the search's cap is certified past it by the exact threshold: the nested
// family (S = 2, slope 1.03, ε = 0.05: closed-form T* = 404, docs/families.md) agrees up to
// N = 200, and CertifyPastCap finds its exact T* with a witness of that length.
TEST(RawSearch, ACensoredPairIsCertifiedPastTheCap) {
  const FamilyMember m = BuildFamilyMember("nested", {{"alphabet", 2}, {"slope", 1.03}});
  RawSearchOptions o = Small();
  o.cls.width = m.f.width;
  o.cls.max_lipschitz = 1e3;
  o.max_length = 200;
  RawEvaluation e = EvaluateRawPair(o, m.f, m.g);
  ASSERT_TRUE(e.valid) << e.note;
  ASSERT_TRUE(e.separated);
  ASSERT_FALSE(e.first_disagreement.has_value());
  ASSERT_GT(m.first_disagreement, o.max_length);
  // A target below T*: certified agreement up to it, still censored there.
  RawEvaluation below = e;
  EXPECT_TRUE(CertifyPastCap(o, m.f, m.g, below, m.first_disagreement - 1, 60.0, 1));
  EXPECT_FALSE(below.first_disagreement.has_value());
  EXPECT_EQ(below.checked_up_to, m.first_disagreement - 1);
  EXPECT_EQ(below.certified_max_length, m.first_disagreement - 1);
  // Up to the threshold's largest length: the closed form's T*, with its witness.
  EXPECT_TRUE(CertifyPastCap(o, m.f, m.g, e, kThresholdMaxLength, 60.0, 2));
  ASSERT_TRUE(e.first_disagreement.has_value());
  EXPECT_EQ(*e.first_disagreement, m.first_disagreement);
  EXPECT_EQ(e.score, static_cast<double>(m.first_disagreement));      // ranked by the new T*
  EXPECT_EQ(below.score, static_cast<double>(m.first_disagreement));  // checked_up_to + 1
  std::uint64_t length = 0;
  for (const ltsim::Run& run : e.witness) length += run.count;
  EXPECT_EQ(length, m.first_disagreement);
  EXPECT_GT(e.gap, o.eps);
  EXPECT_LE(e.largest_gap_below, o.eps * (1 + 1e-9));
  EXPECT_EQ(RecheckRaw(o, m.f, m.g, e).status, RecheckStatus::kAgrees);
  // The witness replays at the certified length, not the search's N.
  const auto path = std::filesystem::temp_directory_path() /
                    ("ltsim_raw_certified_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << RawWitnessToJson(o, m.f, m.g, e, RecheckRaw(o, m.f, m.g, e)).dump();
  std::string report;
  EXPECT_TRUE(ReplayRawWitness(path.string(), &report)) << report;
  std::filesystem::remove(path);
}

// refute certifies its censored best pairs past N before judging: the nested family censored
// at N = 100 refutes the bound 300 once certified past it (T* = 324 at L₀ = 8), and without the
// certification the verdict says it is limited by the cap instead of "not refuted".
TEST(Refute, CensoredBestPairsAreCertifiedPastTheCapBeforeTheVerdict) {
  RefuteOptions o;
  o.search = Small();
  o.search.cls.width = 5;
  o.search.cls.max_lipschitz = 8.0;
  o.search.max_length = 100;
  o.search.budget = 2;  // the two family starts (bump, nested) only
  o.search.iterations = 0;
  o.search.starts = RawStarts::kFamilies;
  o.bound = "300";
  const auto seeds = FamilySeeds(o.search);
  ASSERT_FALSE(seeds.empty());
  o.certify_seconds = 0;
  const RefuteResult limited = RunRefute(o);
  EXPECT_FALSE(limited.refuted);
  EXPECT_EQ(limited.limited_by, std::vector<std::string>{"max_length"});
  o.certify_seconds = 60;
  const RefuteResult r = RunRefute(o);
  EXPECT_TRUE(r.refuted) << r.limited_by_reason;
  EXPECT_TRUE(r.limited_by.empty());
  EXPECT_EQ(r.certified_past_cap, 1);
  const RawEvaluation& e = r.search.restarts[r.best.restart].best;
  EXPECT_GE(e.first_disagreement.value_or(e.checked_up_to + 1), 301u);
  EXPECT_EQ(RefuteToJson(r)["limited_by"], nullptr);
  EXPECT_EQ(RefuteToJson(limited)["limited_by"], nlohmann::json::array({"max_length"}));
}

// The search's evaluation cap censors the nested family (L₀ = 8) below its T* and below N:
// censored_by names the cap and limited_by lists max_length then the cap; certification past
// the cap (maximising T*: the best pair gets every second left, one threshold run to 10⁷) makes
// the best pair exact, its T* that of an independent FindThreshold with no cap. Untimed (no
// time budget: runs ×4 to 10⁷) the same T*, and the JSON is the same at 1 and 2 threads; with
// a tiny time budget censored_by says what stopped the pair, and the witness replays.
TEST(Refute, TheEvaluationCapIsNamedAndCertificationMakesTheBestPairExact) {
  RefuteOptions o;
  o.search = Small();
  o.search.cls.width = 5;
  o.search.cls.max_lipschitz = 8.0;
  o.search.max_length = 2000;
  o.search.budget = 2;  // the two family starts (bump, nested) only
  o.search.iterations = 0;
  o.search.starts = RawStarts::kFamilies;
  o.search.search_evaluation_cap = 1;  // stops every threshold after its first window
  o.bound = "1e9";
  o.certify_seconds = 0;
  const RefuteResult capped = RunRefute(o);
  const RawRestart& c = capped.search.restarts[capped.best.restart];
  ASSERT_TRUE(c.best.separated);
  ASSERT_FALSE(c.best.first_disagreement.has_value());
  ASSERT_TRUE(c.best.censored_by_cap);
  EXPECT_LT(c.best.checked_up_to, o.search.max_length);
  const std::vector<std::string> both{"max_length", "threshold_evaluations"};
  EXPECT_EQ(capped.limited_by, both);
  const nlohmann::json cj = RefuteToJson(capped);
  EXPECT_EQ(cj["censored_by"], "threshold_evaluations");
  EXPECT_EQ(cj["limited_by"], nlohmann::json::array({"max_length", "threshold_evaluations"}));
  EXPECT_EQ(RawWitnessToJson(o.search, c.f, c.g, c.best, capped.search.recheck)["censored_by"],
            "threshold_evaluations");
  // The same in the exponent's mode (T* maximised).
  o.maximise_first_disagreement = true;
  const RefuteResult most = RunRefute(o);
  EXPECT_EQ(most.limited_by, both);
  // Certified past the cap: exact, uncensored, and the verdict no longer limited.
  o.certify_seconds = 60;
  const RefuteResult r = RunRefute(o);
  const RawRestart& b = r.search.restarts[r.best.restart];
  ASSERT_TRUE(b.best.first_disagreement.has_value()) << r.limited_by_reason;
  EXPECT_GT(r.certified_past_cap, 0);
  EXPECT_TRUE(r.limited_by.empty()) << r.limited_by_reason;
  EXPECT_FALSE(b.best.censored_by_cap);
  EXPECT_EQ(RefuteToJson(r)["censored_by"], nullptr);
  // Timed, one run straight to the target: certified to 10⁷ (T* found below it).
  EXPECT_EQ(b.best.certified_max_length, kThresholdMaxLength);
  ThresholdOptions t;
  t.epsilon = o.search.eps;
  t.max_length = 100000;
  t.threads = 1;
  const ThresholdResult independent = FindThreshold(b.f, b.g, t);
  ASSERT_TRUE(independent.first_disagreement.has_value());
  EXPECT_EQ(*b.best.first_disagreement, *independent.first_disagreement);
  // No climb's pair disagrees later (each certified exactly by its own uncapped threshold).
  for (const RawRestart& other : r.search.restarts) {
    const ThresholdResult own = FindThreshold(other.f, other.g, t);
    if (other.best.separated && own.first_disagreement) {
      EXPECT_LE(*own.first_disagreement, *b.best.first_disagreement);
    }
  }
  EXPECT_EQ(r.search.recheck.status, RecheckStatus::kAgrees);

  // Untimed (the largest double: no time budget, the lengths ×4 a run, the threshold's default
  // evaluation cap): the same T*, no result depending on timing, the same JSON at 1 and 2
  // threads.
  o.certify_seconds = std::numeric_limits<double>::max();
  o.search.threads = 1;
  const RefuteResult u1 = RunRefute(o);
  o.search.threads = 2;
  const RefuteResult u2 = RunRefute(o);
  const RawEvaluation& ub = u1.search.restarts[u1.best.restart].best;
  ASSERT_TRUE(ub.first_disagreement.has_value()) << u1.limited_by_reason;
  EXPECT_EQ(*ub.first_disagreement, *independent.first_disagreement);
  EXPECT_GE(ub.certified_max_length, *ub.first_disagreement);
  EXPECT_FALSE(u1.search.stopped_by_time);
  EXPECT_TRUE(u1.limited_by.empty()) << u1.limited_by_reason;
  EXPECT_EQ(RefuteToJson(u1).dump(), RefuteToJson(u2).dump());

  // A tiny time budget: whatever certification reached, censored_by says why the best pair's
  // exact region ends where it does, and its witness replays.
  o.search.threads = 2;
  o.certify_seconds = 0.02;
  const RefuteResult tiny = RunRefute(o);
  const RawRestart& tb = tiny.search.restarts[tiny.best.restart];
  const std::optional<std::string> why = RawCensoredBy(tb.best);
  if (tb.best.first_disagreement) {
    EXPECT_EQ(why, std::nullopt);  // exact: not censored
  } else if (tb.best.checked_up_to <= most.search.restarts[tiny.best.restart].best.checked_up_to) {
    // Not extended: still the search's cap, below N.
    EXPECT_EQ(why, std::optional<std::string>("threshold_evaluations"));
    EXPECT_LT(tb.best.checked_up_to, o.search.max_length);
  } else {
    // Extended, short of 10⁷: time stopped it.
    EXPECT_LT(tb.best.checked_up_to, kThresholdMaxLength);
    EXPECT_EQ(why, std::optional<std::string>("time_budget"));
    EXPECT_GT(tiny.certified_past_cap, 0);
  }
  EXPECT_TRUE(tiny.search.stopped_by_time || tb.best.first_disagreement.has_value());
  const nlohmann::json witness =
      RawWitnessToJson(o.search, tb.f, tb.g, tb.best, RecheckRaw(o.search, tb.f, tb.g, tb.best));
  EXPECT_EQ(witness["censored_by"], why ? nlohmann::json(*why) : nlohmann::json(nullptr));
  std::string report;
  EXPECT_TRUE(ReplayPair(RawWitnessFromJson(io::Json::parse(witness.dump()), "tiny"), &report))
      << report;
}

// An untimed certification run stopped by its evaluation cap (certify_evaluation_cap, here 1
// statistic: the first window) leaves the pair censored below its target and says so:
// censored_by threshold_evaluations. A timed run has no evaluation cap: only time stops it, and
// it reaches the exact T* of an uncapped FindThreshold.
TEST(RawSearch, CertificationStoppedByItsEvaluationCapStaysCensoredByIt) {
  RawSearchOptions o = Small();
  o.cls.width = 5;
  o.cls.max_lipschitz = 8.0;
  o.max_length = 2000;
  o.evaluation_cap = 1;  // censors the search's evaluation after its first window
  o.certify_evaluation_cap = 1;
  const auto nested = FamilySeeds(o);
  bool tried = false;
  for (const auto& [name, pair] : nested) {
    const RawEvaluation censored = EvaluateRawPair(o, pair.first, pair.second);
    if (!censored.separated || censored.first_disagreement) continue;
    ASSERT_EQ(RawCensoredBy(censored), std::optional<std::string>("threshold_evaluations"));
    tried = true;
    RawEvaluation untimed = censored;
    CertifyPastCap(o, pair.first, pair.second, untimed, kThresholdMaxLength,
                   std::numeric_limits<double>::max(), 1);
    EXPECT_FALSE(untimed.first_disagreement.has_value()) << name;
    EXPECT_LT(untimed.checked_up_to, kThresholdMaxLength) << name;
    EXPECT_TRUE(untimed.censored_by_cap) << name;
    EXPECT_FALSE(untimed.stopped_by_time) << name;
    EXPECT_EQ(RawCensoredBy(untimed), std::optional<std::string>("threshold_evaluations")) << name;
    RawEvaluation timed = censored;
    CertifyPastCap(o, pair.first, pair.second, timed, kThresholdMaxLength, 600.0, 1);
    ThresholdOptions t;
    t.epsilon = o.eps;
    t.max_length = kThresholdMaxLength;
    t.threads = 1;
    const ThresholdResult exact = FindThreshold(pair.first, pair.second, t);
    ASSERT_TRUE(exact.first_disagreement.has_value()) << name;
    ASSERT_TRUE(timed.first_disagreement.has_value()) << name;
    EXPECT_EQ(*timed.first_disagreement, *exact.first_disagreement) << name;
    EXPECT_EQ(RawCensoredBy(timed), std::nullopt) << name;
  }
  EXPECT_TRUE(tried);
}

// --starts families starts every climb from a family, random from none.
TEST(RawSearch, StartsChooseWhereClimbsBegin) {
  RawSearchOptions o = Small();
  o.starts = RawStarts::kFamilies;
  for (const RawRestart& r : RunRawSearch(o).restarts) EXPECT_EQ(r.start.rfind("family ", 0), 0u);
  o.starts = RawStarts::kRandom;
  for (const RawRestart& r : RunRawSearch(o).restarts) EXPECT_EQ(r.start, "random");
  o.starts = RawStarts::kFamilies;
  o.cls.mlp_width = 0;  // no family fits without an MLP unit
  EXPECT_THROW(RunRawSearch(o), OptionError);
}

// A time budget stops the search cleanly with the best evaluated pair (climb 0's start at
// least) and says so.
TEST(RawSearch, TimeBudgetStopsWithTheBestEvaluatedPair) {
  RawSearchOptions o = Small();
  o.budget = 100000;
  o.time_budget = 1e-6;
  const RawSearchResult r = RunRawSearch(o);
  EXPECT_TRUE(r.stopped_by_time);
  EXPECT_GE(r.restarts_run, 1);
  EXPECT_LT(r.evaluations, o.budget / 10);
  EXPECT_FALSE(r.restarts[r.best_restart].trajectory.empty());
  EXPECT_TRUE(r.restarts[r.best_restart].best.valid);
}

}  // namespace
}  // namespace ltsim

// The two-layer verdict (docs/refute.md §8.4): a separated pair whose certified T* exceeds the
// bound at its constants is judged even when an unseparated or censored pair scores higher.
TEST(TwoLayerVerdict, ARefutingPairOutranksHigherScoringPairs) {
  ltsim::TwoLayerEvaluation unseparated, capped, refuting;
  unseparated.valid = true;  // agrees up to N = 200, gap 1.9ε at κ = 2: score 0.5·201·0.81
  unseparated.checked_up_to = 200;
  unseparated.score = 81.4;
  capped.valid = capped.separated = capped.capped = true;  // censored at 60 by the cap
  capped.checked_up_to = 60;
  capped.score = 30.5;
  refuting.valid = refuting.separated = true;  // T* = 12
  refuting.first_disagreement = 12;
  refuting.checked_up_to = 12;
  refuting.score = 12.2;
  const std::vector<ltsim::TwoLayerEvaluation> pairs = {unseparated, capped, refuting};
  const double bound = 10.0;
  std::vector<bool> refutes;
  for (const auto& ev : pairs) refutes.push_back(ltsim::TwoLayerRefutes(ev, bound));
  EXPECT_EQ(refutes, (std::vector<bool>{false, true, true}));  // capped: 61 > 10 certified
  EXPECT_EQ(ltsim::SelectTwoLayerBest(pairs, refutes), 1);
  EXPECT_EQ(ltsim::SelectTwoLayerBest(pairs, {false, false, true}), 2);
  EXPECT_EQ(ltsim::SelectTwoLayerBest(pairs, {false, false, false}), 0);  // by score
  // At bound 100 nothing refutes; the capped pair (61 ≤ 100) limits the verdict, the unseparated
  // one does not (it refutes nothing whatever its T*).
  EXPECT_FALSE(ltsim::TwoLayerRefutes(refuting, 100.0));
  EXPECT_EQ(ltsim::TwoLayerCensoredBelowBound(pairs, {100.0, 100.0, 100.0}), std::vector<int>{1});
  EXPECT_TRUE(ltsim::TwoLayerCensoredBelowBound(pairs, {100.0, 50.0, 100.0}).empty());
  EXPECT_FALSE(ltsim::TwoLayerRefutes(refuting, std::nan("")));
}

// Past N (docs/refute.md §8.3): the `induction` member at norm 4.05 has the closed-form
// T* = 30 (docs/families.md). Evaluated with N = 12 it is censored at 12; one path-search run
// past N certifies every length to 29 when the bound is 29 (so T* > 29 refutes it), and finds
// T* = 30 with its witness when the bound is 40.
TEST(TwoLayerPastN, ACensoredPairIsCertifiedToItsClosedFormFirstDisagreement) {
  const ltsim::FamilyMember m = ltsim::BuildFamilyMember("induction", {{"norm", 4.05}});
  ASSERT_EQ(m.first_disagreement, 30u);
  ltsim::TwoLayerSearchOptions o;
  o.eps = 0.05;
  o.max_length = 12;
  ltsim::TwoLayerEvaluation censored;
  censored.valid = censored.separated = true;
  censored.checked_up_to = 12;
  for (const double seconds : {0.0, 600.0}) {
    ltsim::TwoLayerEvaluation ev = censored;
    ASSERT_TRUE(ltsim::CertifyTwoLayerPastN(o, m.f, m.g, ev, 29, seconds)) << seconds;
    EXPECT_FALSE(ev.first_disagreement.has_value());
    EXPECT_EQ(ev.checked_up_to, 29u);
    EXPECT_EQ(ev.past_n_max_length, 29u);
    EXPECT_TRUE(ltsim::TwoLayerRefutes(ev, 29.0));
    EXPECT_FALSE(ltsim::TwoLayerRefutes(ev, 30.0));
    ev = censored;
    ASSERT_TRUE(ltsim::CertifyTwoLayerPastN(o, m.f, m.g, ev, 40, seconds)) << seconds;
    ASSERT_TRUE(ev.first_disagreement.has_value());
    EXPECT_EQ(*ev.first_disagreement, 30u);
    EXPECT_EQ(ev.checked_up_to, 30u);
    EXPECT_GT(ev.gap, o.eps);
    EXPECT_FALSE(ev.witness.empty());
  }
  // Without a time budget one run reaches at most 4N: 20 at N = 5.
  o.max_length = 5;
  ltsim::TwoLayerEvaluation ev = censored;
  ev.checked_up_to = 5;
  ASSERT_TRUE(ltsim::CertifyTwoLayerPastN(o, m.f, m.g, ev, 40, 0.0));
  EXPECT_EQ(ev.checked_up_to, 20u);
  EXPECT_FALSE(ev.first_disagreement.has_value());
  // Nothing to do: a pair already decided to the target, one capped below N, one with a T*.
  ev = censored;
  EXPECT_FALSE(ltsim::CertifyTwoLayerPastN(o, m.f, m.g, ev, 12, 0.0));
  ev.capped = true;
  EXPECT_FALSE(ltsim::CertifyTwoLayerPastN(o, m.f, m.g, ev, 40, 0.0));
  ev = censored;
  ev.first_disagreement = 12;
  EXPECT_FALSE(ltsim::CertifyTwoLayerPastN(o, m.f, m.g, ev, 40, 0.0));
}
