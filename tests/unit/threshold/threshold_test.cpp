// Known first disagreements derived by hand in every attention mode, and a brute-force check.
#include "ltsim/threshold/threshold.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "ltsim/construct/tasks.h"
#include "ltsim/core/error.h"
#include "ltsim/core/work.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/reference.h"
#include "ltsim/strings/source.h"
#include "ltsim_test/hand_models.h"
#include "threshold/path_threshold.h"

namespace ltsim {
namespace {

using test::Bump;
using test::ShareOfOnes;

// Gaps recomputed by hand or by another evaluator: a few ulps of numbers of order 1.
constexpr double kTolerance = 1e-12;

// ε and N (seed 1 and 100 samples a length unless given), every other option at its default.
ThresholdOptions Options(double epsilon, std::uint64_t max_length, std::uint64_t seed = 1) {
  ThresholdOptions o;
  o.epsilon = epsilon;
  o.max_length = max_length;
  o.seed = seed;
  return o;
}

Transformer Finite(int bits) { return ShareOfOnes(Attention::kFinite, 1.0, bits); }

// The same function as a two-layer model: a second layer with no heads and no MLP.
Transformer WithEmptySecondLayer(Transformer m) {
  m.layers.push_back(Layer{});
  return m;
}

ThresholdResult Find(const Transformer& f, const Transformer& g, double epsilon,
                     std::uint64_t max_length, std::uint64_t seed = 1) {
  ValidateTransformer(f, "f");
  ValidateTransformer(g, "g");
  return FindThreshold(f, g, Options(epsilon, max_length, seed));
}

// The answer, the per-length maxima and a witness that really disagrees, by the reference
// evaluator on the expanded string.
void ExpectAnswer(const Transformer& f, const Transformer& g, double epsilon,
                  const ThresholdResult& r, std::uint64_t first,
                  const std::vector<double>& max_gaps) {
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, first);
  EXPECT_EQ(r.checked_up_to, first);
  ASSERT_EQ(r.max_gap_per_length.size(), max_gaps.size());
  for (std::size_t k = 0; k < max_gaps.size(); ++k)
    EXPECT_NEAR(r.max_gap_per_length[k], max_gaps[k], kTolerance) << "T = " << k + 1;
  const std::vector<Token> w = FromRuns(r.witness);
  ASSERT_EQ(w.size(), first);
  const double gap = SupDistance(EvaluateReference(f, w), EvaluateReference(g, w));
  EXPECT_GT(gap, epsilon);
  EXPECT_NEAR(gap, r.gap, kTolerance);
  EXPECT_NEAR(gap, max_gaps.back(), kTolerance);  // the witness realises the largest gap
}

// ---- Known answers ----------------------------------------------------------------------

// Hardmax, tie rule. The 1-keys sit 0.01 above the 0-keys. With θ = 1e-9, f attends only to
// the 1s when there is one: f = [c₁ ≥ 1]. With θ = 0.1, g sees every key as tied: g = c₁/T.
// Gap 1 − c₁/T when c₁ ≥ 1 (0 otherwise), largest at c₁ = 1: 1 − 1/T = 0, 1/2, 2/3, 3/4.
// ε = 0.7 lies between 2/3 and 3/4: the first disagreement is T = 4, a string with one 1.
TEST(Threshold, HardmaxTieRuleFirstDisagreesAtFour) {
  const Transformer f = ShareOfOnes(Attention::kHardmax, 0.01);
  Transformer g = f;
  g.tie_tolerance = 0.1;
  const ThresholdResult r = Find(f, g, 0.7, 100);
  ExpectAnswer(f, g, 0.7, r, 4, {0.0, 0.5, 2.0 / 3.0, 0.75});
  EXPECT_EQ(r.method, ThresholdMethod::kStatistics);
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.exhaustive_up_to, 4u);
  const std::vector<Token> w = FromRuns(r.witness);
  EXPECT_EQ(std::count(w.begin(), w.end(), Token{1}), 1);
}

// Softmax, log bias scaling, τ = 1, no token logits. f has φ = [0, 1]: the key one step back
// weighs e^{ln T} = T, every other key 1 (total 2T − 1). g has φ = [0, 0]: uniform, c₁/T.
// With a = [x_{T−1} = 1] and c the other 1s:
//   f − g = (c + aT)/(2T − 1) − (c + a)/T = (T − 1)/(T(2T − 1))·(a(T − 1) − c),
// largest in absolute value at (a, c) = (1, 0) or (0, T − 1): G(T) = (T − 1)²/(T(2T − 1)) =
// 0, 1/6, 4/15, 9/28, 16/45, … (T = 1: ln 1 = 0, both uniform). G crosses 0.3 at T = 4 and
// 0.35 at T = 5.
TEST(Threshold, SoftmaxLogBiasFirstDisagreesWhenTheLocalKeyOutweighs) {
  Transformer f = ShareOfOnes(Attention::kSoftmax, 0.0, 0, 1);
  f.layers[0].bias_scaling = BiasScaling::kLog;
  Transformer g = f;
  f.layers[0].heads[0].bias << 0.0, 1.0;
  const auto G = [](double t) { return (t - 1) * (t - 1) / (t * (2 * t - 1)); };
  ExpectAnswer(f, g, 0.3, Find(f, g, 0.3, 50), 4, {G(1), G(2), G(3), G(4)});
  ExpectAnswer(f, g, 0.35, Find(f, g, 0.35, 50), 5, {G(1), G(2), G(3), G(4), G(5)});
}

// Finite precision, γ = 1 (1-keys at logit 1, 0-keys at 0). A 0-key weighs T^(−1) against a
// 1-key and is dropped when T^(−1) ≤ 2^(−p), i.e. from T = 2^(p/γ) on. With p = 3 (f) and
// p = 10 (g) the weights are identical below T = 8, so the gap is exactly 0; at T = 8 f drops
// the 0s (f = 1 when c₁ ≥ 1) while g keeps them at 1/8: g = c₁/(c₁ + c₀/8), gap largest at
// c₁ = 1, c₀ = 7: (7/8)/(15/8) = 7/15. Any ε < 7/15 gives T = 8.
TEST(Threshold, FinitePrecisionFirstDisagreesAtTheHardmaxLength) {
  const Transformer f = Finite(3);
  const Transformer g = Finite(10);
  std::vector<double> gaps(7, 0.0);
  gaps.push_back(7.0 / 15.0);
  ExpectAnswer(f, g, 0.25, Find(f, g, 0.25, 40), 8, gaps);
  const ThresholdResult below = Find(f, g, 0.0, 7);  // ε = 0: any difference at all
  EXPECT_FALSE(below.first_disagreement.has_value());
  EXPECT_EQ(below.max_gap_per_length, std::vector<double>(7, 0.0));
}

// Periodic positions, Δ* = lcm(2, 3) = 6. f = ModPTask(2, 1), the share of 1s at odd
// positions; g = ModPTask(3, 1), the share at positions ≡ 1 (mod 3). T = 1, 2: both read
// x₁ alone. T = 3: f − g = (x₁ + x₃)/2 − x₁ = (x₃ − x₁)/2, at most 1/2. T = 4:
// (x₁ + x₃)/2 − (x₁ + x₄)/2 = (x₃ − x₄)/2, at most 1/2. T = 5: (x₁ + x₃ + x₅)/3 − (x₁ + x₄)/2
// is linear in each token, largest at x₃ = x₅ = 1, x₁ = x₄ = 0: 2/3. ε = 0.6 gives T = 5.
TEST(Threshold, PeriodicPairFirstDisagreesAtFive) {
  const Transformer f = MakeModPTask(2, 1);
  const Transformer g = MakeModPTask(3, 1);
  const ThresholdResult r = Find(f, g, 0.6, 30);
  ExpectAnswer(f, g, 0.6, r, 5, {0.0, 0.0, 0.5, 0.5, 2.0 / 3.0});
  EXPECT_EQ(r.view.period, 6);
  // Every residue class holds at most one far position up to T = 5: 2 + 4 + 8 + 16 + 32.
  EXPECT_EQ(r.statistics_evaluated, 62u);
  EXPECT_EQ(r.statistics_total, 62u);
  ThresholdOptions full = Options(0.6, 30);
  full.prune = false;
  const ThresholdResult old = FindThreshold(f, g, full);
  EXPECT_EQ(old.evaluations, 62u);
  EXPECT_EQ(old.first_disagreement, r.first_disagreement);
}

TEST(Threshold, IdenticalModelsNeverDisagree) {
  const Transformer f = MakeModPTask(3, 1);
  const ThresholdResult r = Find(f, f, 0.0, 60);
  EXPECT_FALSE(r.first_disagreement.has_value());
  EXPECT_TRUE(r.witness.empty());
  EXPECT_TRUE(std::isnan(r.gap));
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.checked_up_to, 60u);
  EXPECT_EQ(r.exhaustive_up_to, 60u);
  EXPECT_EQ(r.max_gap_per_length, std::vector<double>(60, 0.0));
}

// ---- The verdict's tolerance and the 50-digit recheck -------------------------------------

// Constant outputs 0.1 and 0.04: in doubles 0.1 − 0.04 = 0.060000000000000005, one rounding
// above ε = 0.06, which is not a disagreement (gap ≤ ε + 1e-9·max(1, |f|, |g|)); 0.1 and
// 0.0399 (gap 0.0601) is one at T = 1, and its 50-digit recheck confirms it.
Transformer ConstantModel(double bias) {
  Transformer m = ShareOfOnes(Attention::kHardmax, 0.0);
  m.readout_weight.setZero();
  m.readout_bias[0] = bias;
  return m;
}

TEST(Threshold, AGapWithinRoundingOfEpsIsNotADisagreement) {
  ASSERT_EQ(0.1 - 0.04, 0.060000000000000005);
  ASSERT_GT(0.1 - 0.04, 0.06);
  for (bool prune : {true, false}) {
    ThresholdOptions o = Options(0.06, 200);
    o.prune = prune;
    const ThresholdResult r = FindThreshold(ConstantModel(0.1), ConstantModel(0.04), o);
    EXPECT_FALSE(r.first_disagreement.has_value()) << "prune " << prune;
    EXPECT_EQ(r.checked_up_to, 200u);
    EXPECT_TRUE(r.exhaustive);
  }
  const ThresholdResult r =
      FindThreshold(ConstantModel(0.1), ConstantModel(0.0399), Options(0.06, 500));
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, 1u);
  EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
  EXPECT_EQ(r.recheck.precise_gap.substr(0, 8), "6.010000");
  EXPECT_FALSE(ThresholdDisagrees(0.060000000000000005, 0.06, Vector::Constant(1, 0.1),
                                  Vector::Constant(1, 0.04)));
  EXPECT_TRUE(
      ThresholdDisagrees(0.0601, 0.06, Vector::Constant(1, 0.1), Vector::Constant(1, 0.0399)));
}

// ---- The pruned search: a known answer far beyond full enumeration ------------------------

// The pairs below: f = the share of 1s (hardmax, every key tied, τ = 0: x = c₁/T over all T
// positions); g = test::Bump(c, w, h) = f + a triangular MLP bump h·max(0, 1 − |x − c|/w) of
// height h = 1 at c = φ − 1 (the golden ratio's fraction, whose best rational approximations
// are ratios of Fibonacci numbers). gap = the bump, > ε = 1/2 iff |c₁/T − c| < w/2, so T* is
// the smallest T with a fraction within w/2 of c, which the test finds by its own loop over T
// with exact integer rounding.

// Two pruned searches of one pair that must agree bit for bit (threads, dealers): T*, where
// they stopped, the witness, every counter, and each length's largest gap (NaN = none).
void ExpectSamePrunedSearch(const ThresholdResult& a, const ThresholdResult& b) {
  EXPECT_EQ(a.first_disagreement, b.first_disagreement);
  EXPECT_EQ(a.complete, b.complete);
  EXPECT_EQ(a.checked_up_to, b.checked_up_to);
  EXPECT_EQ(a.witness, b.witness);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(a.statistics_evaluated, b.statistics_evaluated);
  EXPECT_EQ(a.cells, b.cells);
  EXPECT_EQ(a.cells_pruned, b.cells_pruned);
  EXPECT_EQ(a.max_pruned_bound, b.max_pruned_bound);
  ASSERT_EQ(a.max_gap_per_length.size(), b.max_gap_per_length.size());
  for (std::size_t k = 0; k < a.max_gap_per_length.size(); ++k) {
    const double x = a.max_gap_per_length[k], y = b.max_gap_per_length[k];
    ASSERT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << "T = " << k + 1;
  }
}

TEST(Threshold, PrunedSearchFindsTheFirstFractionNearAnIrrational) {
  const long double c = 0.6180339887498949L;  // the double c below, exactly
  const double w = 4e-9;
  std::uint64_t expected = 0;
  for (std::uint64_t t = 1; expected == 0; ++t) {
    const long double n = std::round(c * t);
    const long double distance = std::abs(n / t - c);
    // No fraction within 1e-6 relative of the boundary w/2: double rounding cannot decide.
    ASSERT_GT(std::abs(distance - w / 2) / (w / 2), 1e-6) << "T = " << t;
    if (distance < w / 2) expected = t;
  }
  EXPECT_EQ(expected, 17711u);  // F(22): 10946/17711 ≈ c within 1.4e-9
  const Transformer f = ShareOfOnes(Attention::kHardmax, 0.0);
  const Transformer g = Bump(static_cast<double>(c), w, 1.0);
  ValidateTransformer(g, "g");
  ThresholdOptions o = Options(0.5, 100000);
  const ThresholdResult r = FindThreshold(f, g, o);
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, expected);
  EXPECT_TRUE(r.exhaustive);
  EXPECT_TRUE(r.pruned);
  EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
  // Most statistics were certified by a bound rather than evaluated.
  EXPECT_GT(r.statistics_pruned, 100 * r.statistics_evaluated);
  EXPECT_EQ(r.statistics_total, r.statistics_evaluated + r.statistics_pruned);
  const std::vector<Token> wit = FromRuns(r.witness);
  EXPECT_EQ(wit.size(), expected);
  EXPECT_EQ(std::count(wit.begin(), wit.end(), Token{1}), 10946);
  // The same with every thread count.
  for (int threads : {1, 2, 3}) {
    o.threads = threads;
    ExpectSamePrunedSearch(FindThreshold(f, g, o), r);
  }
}

// A dealer that stands for the reducing rank of two MPI processes that share decisions: it
// computes every chunk here, in reverse order (as a slow rank 0 would receive them), and
// consumes them in index order. The pruned search must then deal every window through it
// and still give the one-process result bit for bit (the MPI run itself is
// tests/cli/dist_cli_test.cpp).
class TwoRankReducer final : public ItemDealer {
 public:
  bool Reduces() const override { return true; }
  std::uint64_t Processes() const override { return 2; }
  bool Shares() const override { return true; }
  void Broadcast(std::string& bytes) override {
    ++broadcasts;
    (void)bytes;  // rank 0's bytes are already these
  }
  DealReport Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                  const ChunkCompute& compute, const ItemConsume& consume, const StopFn&) override {
    ++deals;
    std::vector<std::vector<std::string>> parts;
    std::vector<std::uint64_t> starts;
    for (std::uint64_t b = begin; b < end; b += chunk) starts.push_back(b);
    parts.resize(starts.size());
    for (std::size_t k = starts.size(); k-- > 0;)
      parts[k] = compute(starts[k], std::min(end, starts[k] + chunk));
    DealReport report;
    for (std::size_t k = 0; k < parts.size(); ++k)
      for (std::string& item : parts[k]) {
        ++report.consumed;
        if (!consume(starts[k] + (&item - parts[k].data()), std::move(item))) return report;
      }
    return report;
  }
  int deals = 0, broadcasts = 0;
};

TEST(Threshold, PrunedSearchDealtToSharingRanksGivesTheOneProcessResult) {
  const Transformer f = ShareOfOnes(Attention::kHardmax, 0.0);
  const Transformer g = Bump(0.6180339887498949, 4e-9, 1.0);
  // T* = 17711 (the test above), and a budget that ends the search before it.
  for (const std::uint64_t budget : {std::uint64_t{100000000}, std::uint64_t{20000}}) {
    ThresholdOptions o;
    o.epsilon = 0.5;
    o.max_length = 100000;
    o.threads = 2;
    o.max_evaluations = budget;
    const ThresholdResult alone = FindThreshold(f, g, o);
    EXPECT_EQ(alone.complete, budget > 20000) << "the budget case must stop early";
    TwoRankReducer dealer;
    o.dealer = &dealer;
    const ThresholdResult dealt = FindThreshold(f, g, o);
    EXPECT_GT(dealer.deals, 2) << "the windows did not go through the dealer";
    EXPECT_EQ(dealer.broadcasts, 1 + dealer.deals - (alone.first_disagreement ? 1 : 0))
        << "one decision after the short lengths and one a window (none after T*'s own)";
    SCOPED_TRACE("budget " + std::to_string(budget));
    ExpectSamePrunedSearch(dealt, alone);
  }
}

// ---- Size limits ------------------------------------------------------------------------

TEST(Threshold, CountStatisticsByHand) {
  // S = 2, Δ = 1, τ = 0: 2 suffixes × (T − 1 + 1) splits of the far positions.
  for (std::uint64_t t = 1; t <= 10; ++t) EXPECT_EQ(CountStatistics(2, 1, 0, t), 2 * t);
  EXPECT_EQ(CountStatistics(2, 6, 0, 5), 32u);  // one far position in residues 1…4
  // S = 3, Δ = 2, τ = 1, T = 6: 3² suffixes, 4 far positions, 2 a residue: C(4, 2)² = 36.
  EXPECT_EQ(CountStatistics(3, 2, 1, 6), 9u * 36u);
  EXPECT_EQ(CountStatistics(3, 2, 1, 1), 3u);  // T ≤ τ: the suffix is the whole string
  EXPECT_EQ(CountStatistics(64, 1, 10, 1'000'000), std::uint64_t{1} << 62);  // saturates
}

void ExpectRefused(const Transformer& f, const Transformer& g, ThresholdOptions options,
                   const std::string& names) {
  try {
    FindThreshold(f, g, options);
    ADD_FAILURE() << "not refused: " << names;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(names), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Threshold, RefusesBeyondItsLimits) {
  const Transformer f = ShareOfOnes(Attention::kHardmax, 0.01);
  // Σ_{T ≤ N} 2T = N(N + 1) ≤ 2·10^7 up to N = 4471 (4472·4473 > 2·10^7).
  ThresholdOptions full = Options(0.1, 4472);
  full.prune = false;  // the full enumeration's limit; the pruned search has none of this kind
  ExpectRefused(f, f, full, "largest max length within the limit is 4471");
  // Options are named by their fields (the command line maps them to flags).
  ExpectRefused(f, f, Options(0.1, kThresholdMaxLength + 1), "max_length: must be in [1, ");
  ExpectRefused(f, f, Options(0.1, 0), "max_length: ");
  ExpectRefused(f, f, Options(-0.1, 10), "epsilon: ");
  ExpectRefused(f, f, Options(NAN, 10), "epsilon: ");
  // D* = 2·lcm(7, 5) = 70 > 64.
  ExpectRefused(MakeModPTask(7, 0), MakeModPTask(5, 0), Options(0.1, 5), "limit of 64");
  // τ* = 11 > 10.
  const Transformer local = ShareOfOnes(Attention::kHardmax, 0.01, 0, 11);
  ExpectRefused(f, local, Options(0.1, 5), "τ* = 11");
  // Alphabets, outputs, depth.
  Transformer three = f;
  three.alphabet = 3;
  three.embedding = Matrix::Zero(3, 3);
  ExpectRefused(f, three, Options(0.1, 5), "alphabets");
  Transformer two_outputs = f;
  two_outputs.readout_weight = Matrix::Zero(2, 3);
  two_outputs.readout_bias = Vector::Zero(2);
  ExpectRefused(f, two_outputs, Options(0.1, 5), "outputs");
  Transformer deep = WithEmptySecondLayer(WithEmptySecondLayer(f));
  ExpectRefused(f, deep, Options(0.1, 5), "one or two layers");
  // Two layers as before the path search: 100·Σ_{16 ≤ T ≤ N} T ≤ 10^8 ⇔ N(N + 1) ≤ 2,000,240,
  // up to N = 1413.
  ThresholdOptions sampled = Options(0.1, 1414);
  sampled.two_layer_paths = false;
  ExpectRefused(f, WithEmptySecondLayer(f), sampled, "largest max length within the limit is 1413");
  // The path search: beyond its node limit the random strings are limited the same way.
  const std::uint64_t exact = threshold::PathSearchLength(f, WithEmptySecondLayer(f), 1'000'000, 1);
  ThresholdOptions beyond = Options(0.1, exact + 100'000);
  beyond.threads = 1;
  ExpectRefused(f, WithEmptySecondLayer(f), beyond, "beyond the path search's limit");
  ThresholdOptions no_samples = Options(0.1, 20);
  no_samples.samples_per_length = 0;
  ExpectRefused(f, WithEmptySecondLayer(f), no_samples, "samples_per_length: ");
}

// ---- Two-layer pairs --------------------------------------------------------------------

// The same function as one and as two layers: no disagreement. Without the path search only
// the strings up to T_ex = 15 (Σ_{T ≤ 15} 2^T = 2^16 − 2) are all checked, so the answer is not
// exhaustive; the path search covers every string of every length.
TEST(Threshold, TwoLayerPairIsExhaustiveOnlyUpToItsLimitWithoutPaths) {
  const Transformer f = Finite(4);
  ThresholdOptions o = Options(1e-9, 20);
  o.two_layer_paths = false;
  const ThresholdResult r = FindThreshold(f, WithEmptySecondLayer(f), o);
  EXPECT_EQ(r.method, ThresholdMethod::kExhaustiveRandom);
  EXPECT_STREQ(ThresholdMethodName(r.method), "exhaustive+random");
  EXPECT_FALSE(r.first_disagreement.has_value());
  EXPECT_FALSE(r.exhaustive);
  EXPECT_EQ(r.exhaustive_up_to, 15u);
  EXPECT_EQ(r.checked_up_to, 20u);
  EXPECT_EQ(r.samples_per_length, 100u);
  EXPECT_EQ(r.evaluations, (1u << 16) - 2 + 5 * 100);
  for (double gap : r.max_gap_per_length) EXPECT_LE(gap, kTolerance);
}

TEST(Threshold, TwoLayerPairIsExhaustiveThroughPaths) {
  const Transformer f = Finite(4);
  const ThresholdResult r = Find(f, WithEmptySecondLayer(f), 1e-9, 200);
  EXPECT_EQ(r.method, ThresholdMethod::kPaths);
  EXPECT_STREQ(ThresholdMethodName(r.method), "paths");
  EXPECT_FALSE(r.first_disagreement.has_value());
  EXPECT_TRUE(r.exhaustive);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.exhaustive_up_to, 200u);
  EXPECT_EQ(r.checked_up_to, 200u);
  EXPECT_EQ(r.samples_per_length, 0u);
  EXPECT_GT(r.paths.sets_pruned, 0u);
  for (double gap : r.max_gap_per_length)
    if (!std::isnan(gap)) {
      EXPECT_LE(gap, kTolerance);
    }
}

// Found inside the exhaustive range, the answer is exact: the tie-rule pair of above.
TEST(Threshold, TwoLayerPairFoundExhaustivelyIsExact) {
  const Transformer f = WithEmptySecondLayer(ShareOfOnes(Attention::kHardmax, 0.01));
  Transformer g = ShareOfOnes(Attention::kHardmax, 0.01);
  g.tie_tolerance = 0.1;
  const ThresholdResult r = Find(f, g, 0.7, 100);
  ExpectAnswer(f, g, 0.7, r, 4, {0.0, 0.5, 2.0 / 3.0, 0.75});
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.exhaustive_up_to, 4u);
}

// Found by the random search: f has p = 4 (T_hard = 16 > T_ex), g has p = 10. At T = 16 every
// string holding both tokens has gap (c₀/16)/(c₁ + c₀/16) ≥ (1/16)/(15 + 1/16) > 0.004, and a
// uniform string of length 16 is constant with probability 2^−15: one of 100 samples holds both.
TEST(Threshold, TwoLayerPairFoundByTheSeededRandomSearch) {
  const Transformer f = WithEmptySecondLayer(Finite(4));
  const Transformer g = Finite(10);
  ThresholdOptions o = Options(0.001, 40, 7);
  o.two_layer_paths = false;
  const ThresholdResult r = FindThreshold(f, g, o);
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, 16u);
  EXPECT_FALSE(r.exhaustive);
  EXPECT_EQ(r.exhaustive_up_to, 15u);
  const std::vector<Token> w = FromRuns(r.witness);
  EXPECT_GT(SupDistance(EvaluateReference(f, w), EvaluateReference(g, w)), 0.001);
  // A function of the seed alone.
  const ThresholdResult again = FindThreshold(f, g, o);
  EXPECT_EQ(again.max_gap_per_length, r.max_gap_per_length);
  EXPECT_EQ(again.witness, r.witness);
  o.seed = 8;
  EXPECT_NE(FindThreshold(f, g, o).witness, r.witness);
}

// The same pair through the path search: T* = 16 certified (every string below evaluated or
// bounded), the witness realising the largest gap of length 16 (against every string by the
// reference evaluator) and confirmed in 50 digits.
TEST(Threshold, TwoLayerPairFoundExactlyByThePathSearch) {
  const Transformer f = WithEmptySecondLayer(Finite(4));
  const Transformer g = Finite(10);
  const ThresholdResult r = Find(f, g, 0.001, 40);
  EXPECT_EQ(r.method, ThresholdMethod::kPaths);
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, 16u);
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.exhaustive_up_to, 16u);
  EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
  const std::vector<Token> w = FromRuns(r.witness);
  ASSERT_EQ(w.size(), 16u);
  EXPECT_NEAR(SupDistance(EvaluateReference(f, w), EvaluateReference(g, w)), r.gap, 1e-12);
  // The witness realises the largest gap of length 16 (every string, by the reference).
  double best = 0.0;
  for (std::uint32_t code = 0; code < (1u << 16); ++code) {
    std::vector<Token> x(16);
    for (int k = 0; k < 16; ++k) x[k] = static_cast<Token>((code >> (15 - k)) & 1);
    best = std::max(best, SupDistance(EvaluateReference(f, x), EvaluateReference(g, x)));
  }
  EXPECT_NEAR(r.gap, best, 1e-12);
}

// ---- The statistics enumeration against brute force -------------------------------------

// A one-layer model with weights on a grid (so hardmax ties occur), drawn from `seed`.
Transformer GridModel(std::uint64_t seed, int alphabet, int period, int locality,
                      Attention attention) {
  boost::random::mt19937_64 engine(seed);
  boost::random::uniform_int_distribution<int> grid(-2, 2);
  const auto fill = [&](Matrix& m) {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) = 0.5 * grid(engine);
  };
  const int d = 3;
  Transformer m;
  m.alphabet = alphabet;
  m.width = d;
  m.period = period;
  m.locality = locality;
  m.embedding = Matrix(alphabet, d);
  m.positional = Matrix(period, d);
  fill(m.embedding);
  fill(m.positional);
  Layer layer;
  layer.attention = attention;
  layer.precision_bits = attention == Attention::kFinite ? 3 : 0;
  layer.bias_scaling = grid(engine) > 0 ? BiasScaling::kLog : BiasScaling::kNone;
  for (int h = 0; h < 2; ++h) {
    Head head{Matrix(d, d), Matrix(d, d), Vector(locality + 1)};
    fill(head.qk);
    fill(head.ov);
    for (int t = 0; t <= locality; ++t) head.bias[t] = 0.5 * grid(engine);
    layer.heads.push_back(head);
  }
  Mlp mlp{Matrix(2, d), Vector::Zero(2), Matrix(d, 2)};
  fill(mlp.in);
  fill(mlp.out);
  layer.mlp = mlp;
  m.layers.push_back(layer);
  m.readout_weight = Matrix(2, d);
  fill(m.readout_weight);
  m.readout_bias = Vector::Zero(2);
  return m;
}

// max over all S^T strings of ‖f(x) − g(x)‖_∞ by the reference evaluator, T = 1 … N.
std::vector<double> BruteForceMaxGaps(const Transformer& f, const Transformer& g, int alphabet,
                                      std::uint64_t max_length) {
  std::vector<double> gaps;
  for (std::uint64_t t = 1; t <= max_length; ++t) {
    std::vector<Token> x(t, 0);
    double best = 0.0;
    std::size_t k = t;
    do {
      best = std::max(best, SupDistance(EvaluateReference(f, x), EvaluateReference(g, x)));
      for (k = t; k > 0 && ++x[k - 1] == alphabet; --k) x[k - 1] = 0;
    } while (k > 0);
    gaps.push_back(best);
  }
  return gaps;
}

struct BruteCase {
  int alphabet, period_f, period_g, locality_f, locality_g;
  Attention mode_f, mode_g;
  std::uint64_t max_length;
};

TEST(Threshold, StatisticsAgreeWithBruteForceOverAllStrings) {
  const Attention kS = Attention::kSoftmax, kH = Attention::kHardmax, kF = Attention::kFinite;
  const std::vector<BruteCase> cases = {
      {2, 1, 1, 0, 0, kH, kS, 9}, {2, 2, 3, 1, 0, kS, kF, 8}, {2, 2, 1, 2, 1, kH, kH, 8},
      {3, 1, 1, 1, 1, kF, kH, 6}, {3, 2, 1, 0, 1, kS, kS, 6}, {2, 1, 2, 1, 2, kF, kF, 8},
  };
  std::uint64_t seed = 100;
  for (const BruteCase& c : cases) {
    SCOPED_TRACE("case with seed " + std::to_string(seed));
    const Transformer f = GridModel(seed++, c.alphabet, c.period_f, c.locality_f, c.mode_f);
    const Transformer g = GridModel(seed++, c.alphabet, c.period_g, c.locality_g, c.mode_g);
    const ThresholdResult r = Find(f, g, 1e9, c.max_length);  // ε beyond any gap: every length
    const std::vector<double> brute = BruteForceMaxGaps(f, g, c.alphabet, c.max_length);
    ASSERT_EQ(r.max_gap_per_length.size(), brute.size());
    bool any_gap = false;
    for (std::size_t k = 0; k < brute.size(); ++k) {
      // The fast and reference evaluators differ only by the association of sums.
      EXPECT_NEAR(r.max_gap_per_length[k], brute[k], 1e-10 * (1.0 + brute[k])) << "T = " << k + 1;
      any_gap = any_gap || brute[k] > 1e-6;
    }
    EXPECT_TRUE(any_gap);  // the pair is not trivially equal
    std::uint64_t statistics = 0;
    for (std::uint64_t t = 1; t <= c.max_length; ++t)
      statistics += CountStatistics(c.alphabet, r.view.period, r.view.locality, t);
    EXPECT_EQ(r.evaluations, statistics);
  }
}

}  // namespace
}  // namespace ltsim
