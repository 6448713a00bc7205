// `Certify` on pairs whose supremum over every length is derived by hand (docs/theory.md §12.8).
#include "ltsim/threshold/certify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/hand_models.h"

namespace ltsim {
namespace {

// The threshold search to length N at ε, every other option at its default.
ThresholdOptions SearchTo(double epsilon, std::uint64_t max_length) {
  ThresholdOptions o;
  o.epsilon = epsilon;
  o.max_length = max_length;
  return o;
}

using test::Bump;
using test::ShareOfOnes;

CertifyResult Decide(const Transformer& f, const Transformer& g, double eps,
                     std::uint64_t max_boxes = 2'000'000) {
  CertifyOptions o;
  o.max_boxes = max_boxes;
  o.epsilon = eps;
  o.threads = 1;
  o.extension_evaluations = 2'000'000;
  return Certify(f, g, o);
}

constexpr double kGolden = 0.6180339887498949;

TEST(Certify, IdenticalModelsAgreeWithBoundZeroWithoutASearch) {
  const Transformer f = ShareOfOnes(Attention::kSoftmax, 0.3);
  Transformer g = f;
  g.name = "copy";
  const CertifyResult r = Decide(f, g, 0.0);
  EXPECT_EQ(r.verdict, CertifyVerdict::kAgrees);
  EXPECT_TRUE(r.identical);
  EXPECT_FALSE(r.first_disagreement.has_value());
  EXPECT_EQ(r.sup_gap_lower, 0.0);
  EXPECT_EQ(r.sup_gap_upper, 0.0);
  EXPECT_EQ(r.threshold_runs, 0u);
  EXPECT_EQ(r.boxes, 0u);
}

// The same function with other parameters (the one head split into two equal heads with half
// the value map each: the same attention, the same sum) is not taken by the shortcut; the
// search certifies it at ε = 0 within its rounding slack.
TEST(Certify, ASplitHeadTwinAgreesAtEveryLengthThroughTheSearch) {
  const Transformer f = ShareOfOnes(Attention::kSoftmax, 0.3);
  Transformer g = f;
  Head half = g.layers.front().heads.front();
  half.ov *= 0.5;  // exact in binary
  g.layers.front().heads = {half, half};
  const CertifyResult r = Decide(f, g, 0.0);
  EXPECT_EQ(r.verdict, CertifyVerdict::kAgrees);
  EXPECT_FALSE(r.identical);
  EXPECT_GE(r.threshold_runs, 1u);
  EXPECT_LE(r.sup_gap_lower, 1e-15);  // the two sums' rounding: ov/2 + ov/2 in another order
  EXPECT_LE(r.sup_gap_upper, 1e-9);
}

// g − f = the bump, whose supremum over the rational shares x = n₁/T is h (c irrational: never
// attained, approached). ε above h: agreement at every length, and the bracket holds h.
TEST(Certify, BumpBelowEpsilonAgreesAtEveryLengthWithTheBracketAroundItsHeight) {
  const double h = 0.3;
  const CertifyResult r =
      Decide(ShareOfOnes(Attention::kHardmax, 0.0), Bump(kGolden, 0.05, h), 0.31);
  EXPECT_EQ(r.verdict, CertifyVerdict::kAgrees);
  EXPECT_LE(r.sup_gap_lower, h);
  EXPECT_GE(r.sup_gap_lower, h - 0.01);  // shares within 5e-4 of c occur from T = 21 on
  EXPECT_GE(r.sup_gap_upper, h);
  EXPECT_LE(r.sup_gap_upper, 0.31);
}

// ε below the bump's height h = 1 with half-width w = 4e-9: T* is the first denominator of a
// share within w/2 of c, F(22) = 17711 (unit/threshold/threshold_test.cpp derives it), beyond
// T₀ = 1000: the limit search finds a disagreeing statistic and the exact threshold T*.
TEST(Certify, BumpAboveEpsilonFindsTheFibonacciFirstDisagreement) {
  const CertifyResult r =
      Decide(ShareOfOnes(Attention::kHardmax, 0.0), Bump(kGolden, 4e-9, 1.0), 0.5);
  ASSERT_EQ(r.verdict, CertifyVerdict::kDisagrees);
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, 17711u);
  EXPECT_GT(r.witness_gap, 0.5);
  EXPECT_GE(r.sup_gap_upper, r.sup_gap_lower);
  EXPECT_LE(r.sup_gap_lower, 1.0 + 1e-9);
}

// T* = 10^7 (docs/theory.md §12.9, tools/bench/bench_certify.cpp): a triangle of slope 10⁹ and
// height 1/2 + 5·10⁻⁶ at c = 10⁻⁷ − 10⁻¹⁵ on the share x; at ε = 1/2 a share disagrees iff
// |x − c| < 5·10⁻¹⁵, first x = 1/10^7 (every other n/T with T < 10^7 is > 9·10⁻¹⁵ from c).
// The exact run to 10^7 needs the split rule of §11.3 that separates n₁ = 0 from n₁ = 1 over a
// window's lengths: with it, 2·10⁵ evaluations; with the lengths halved first, about three a
// length, far beyond the budget of 10⁶ set here.
TEST(Certify, ANarrowTriangleAtOneInTenMillionFirstDisagreesAtTenMillion) {
  const double h = 0.5 + 5e-6, slope = 1e9;
  CertifyOptions o;
  o.epsilon = 0.5;
  o.threads = 1;
  o.exact_evaluations = 1'000'000;
  const CertifyResult r =
      Certify(ShareOfOnes(Attention::kHardmax, 0.0), Bump(1e-7 - 1e-15, h / slope, h), o);
  ASSERT_EQ(r.verdict, CertifyVerdict::kDisagrees);
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, 10'000'000u);
  EXPECT_NEAR(r.witness_gap, h - slope * 1e-15, 1e-9);
}

// The Fibonacci bump above (T* = 17711) with the exact lengths capped at 1000 and an exact
// budget (5000 evaluations) that completes the first run to T₀ = 50 but not the run confirming
// the limit search's disagreement at a length beyond the cap (extensions reach 1000 with their
// own budget): the result says the confirming run stopped (exact_stopped_confirming) at the
// length it reached (measured 71), not at exact_up_to = 1000, and T* ≤ the disagreeing length.
TEST(Certify, AStoppedConfirmingRunReportsWhereItStopped) {
  CertifyOptions o;
  o.epsilon = 0.5;
  o.threads = 1;
  o.initial_length = 50;
  o.max_exact_length = 1000;
  o.exact_evaluations = 5000;
  o.extension_evaluations = 2'000'000;
  const CertifyResult r =
      Certify(ShareOfOnes(Attention::kHardmax, 0.0), Bump(kGolden, 4e-9, 1.0), o);
  ASSERT_EQ(r.verdict, CertifyVerdict::kDisagrees);
  EXPECT_FALSE(r.first_disagreement.has_value());
  ASSERT_TRUE(r.first_disagreement_at_most.has_value());
  EXPECT_GE(*r.first_disagreement_at_most, 17711u);
  EXPECT_EQ(r.exact_up_to, 1000u);
  EXPECT_TRUE(r.exact_stopped_confirming);
  EXPECT_EQ(r.exact_stopped, ThresholdStop::kEvaluations);
  EXPECT_GE(r.exact_stopped_at, 50u);
  EXPECT_LT(r.exact_stopped_at, r.exact_up_to);
}

// A disagreement at T* = 1 below m = τ* + 1 = 3: the run that found T* stopped there, and the
// lengths 2 and 3 (no far keys) were bounded by nothing; sup_gap_upper (the limit search's
// bound from length 4 on, 161.6) was below the gap 220.8 attained at length 2. A random pair
// of the certify property (S = 1, finite p = 1 with Δ = 2, τ = 2 against softmax with Δ = 3,
// τ = 1).
constexpr const char* kShortF =
    R"({"format":"ltsim-model","version":1,"name":"random","alphabet":1,"width":2,"period":2,"l)"
    R"(ocality":2,"tie_tolerance":1e-09,"embedding":[[-0.3265411794613827,1.4540145581588773]],)"
    R"("positional":[[-0.3904499988172174,-0.6700741429480336],[-0.037352702715995285,1.3963606)"
    R"(48055829]],"layers":[{"attention":"finite","bias_scaling":"none","precision_bits":1,"hea)"
    R"(ds":[{"qk":[[-0.3095927452585732,-1.4448025199716845],[2.292951287967546,1.1240534996441)"
    R"(907]],"ov":[[-0.31297284387761876,-1.3385789515982942],[-1.0618194916840773,-0.535346774)"
    R"(7156452]],"bias":[0.900301604963203,0.4685530281464502,1.3578401451856423]}]}],"readout")"
    R"(:{"weight":[[0.9010043352194333,-0.38650563326857396]],"bias":[0.4026222776798567]},"met)"
    R"(a":{}})";
constexpr const char* kShortG =
    R"({"format":"ltsim-model","version":1,"name":"random","alphabet":1,"width":2,"period":3,"l)"
    R"(ocality":1,"tie_tolerance":1e-09,"embedding":[[-1.8689654258157724,-2.333404708830458]],)"
    R"("positional":[[4.141629897166329,-1.4904935698491368],[0.13054480517751893,0.59724684342)"
    R"(89234],[-7.8797409727417875,-1.9434901041184411]],"layers":[{"attention":"softmax","bias)"
    R"(_scaling":"none","heads":[{"qk":[[-4.617077759718888,-3.271507237060388],[1.773342348974)"
    R"(6496,0.304682493622337]],"ov":[[-2.6280063252521644,1.3203587718595906],[2.4154697461317)"
    R"(72,1.8863329469285202]],"bias":[-1.460486133190395,2.7491217748954053]},{"qk":[[4.999284)"
    R"(76256839,-8.379348830468771],[2.5055559468499116,4.2436511660693235]],"ov":[[0.969696989)"
    R"(4386662,2.030952968157104],[1.303591779679822,6.453583364418134]],"bias":[5.040468189759)"
    R"(751,1.0076060513060547]}]}],"readout":{"weight":[[2.5927503866345605,-5.526730071953301])"
    R"(],"bias":[-1.895864623926823]},"meta":{}})";

TEST(Certify, ADisagreementBelowTheShortLengthsStillBoundsThem) {
  const Transformer f = ModelFromJson(nlohmann::ordered_json::parse(kShortF), "f");
  const Transformer g = ModelFromJson(nlohmann::ordered_json::parse(kShortG), "g");
  ThresholdOptions all;
  all.epsilon = 1e6;
  all.max_length = 60;
  all.prune = false;
  const ThresholdResult brute = FindThreshold(f, g, all);
  double brute_max = 0.0;
  for (double gap : brute.max_gap_per_length) brute_max = std::max(brute_max, gap);
  const CertifyResult r = Decide(f, g, 0.5 * brute_max);
  ASSERT_EQ(r.verdict, CertifyVerdict::kDisagrees);
  EXPECT_EQ(r.first_disagreement.value_or(0), 1u);
  EXPECT_GE(r.sup_gap_upper, brute_max * (1 - 1e-12));
  EXPECT_GE(r.sup_gap_upper, r.sup_gap_lower);
}

// Softmax, keys of 1s e^a times heavier in g: g − f = x(1 − x)(e^a − 1)/(x e^a + 1 − x) at
// share x, largest at x* = 1/(1 + e^(a/2)) (irrational), sup = tanh(a/4) approached, never
// attained. Above it: agrees; below: disagrees at the threshold's T*; at it: undecided, with
// a bracket around it.
TEST(Certify, SoftmaxTiltHasSupremumTanhAOverFour) {
  const double a = 0.1, sup = std::tanh(a / 4);
  const Transformer f = ShareOfOnes(Attention::kSoftmax, 0.0);
  const Transformer g = ShareOfOnes(Attention::kSoftmax, a);
  const CertifyResult above = Decide(f, g, sup + 1e-4);
  EXPECT_EQ(above.verdict, CertifyVerdict::kAgrees);
  EXPECT_LE(above.sup_gap_lower, sup);
  EXPECT_GE(above.sup_gap_upper, sup - 1e-12);
  const CertifyResult below = Decide(f, g, sup - 1e-4);
  ASSERT_EQ(below.verdict, CertifyVerdict::kDisagrees);
  ASSERT_TRUE(below.first_disagreement.has_value());
  const ThresholdResult t =
      FindThreshold(f, g, SearchTo(sup - 1e-4, *below.first_disagreement + 10));
  EXPECT_EQ(t.first_disagreement, below.first_disagreement);
  // At ε = sup no finite computation can decide: the bracket closes in on sup (measured: within
  // 5·10⁻⁶ after 2·10⁶ boxes, so the 10⁻⁶ tolerance is not reached and the budget ends it).
  const CertifyResult at = Decide(f, g, sup, 100'000);
  EXPECT_EQ(at.verdict, CertifyVerdict::kUndecided) << at.reason;
  EXPECT_LE(at.sup_gap_lower, sup);
  EXPECT_GE(at.sup_gap_upper, sup);
  EXPECT_LE(at.sup_gap_upper - at.sup_gap_lower, 1e-3);
}

// p-bit finite attention: 0-keys (logit 1 below the 1s) weigh T^(−1) until T ≥ 2^p, where they
// are dropped. f with p = 12 and g with p = 13 are the same function for T < 4096; at
// T = 4096 on 0^4095 1, f = 1 and g = 1/(1 + 4095/4096) ≈ 0.5: T* = 4096 > T₀, found through
// the finite precision's cut-off. Beyond 2^13 both are hardmax again.
TEST(Certify, FinitePrecisionCutOffsGiveTheFirstDisagreementAtTwoToTheP) {
  const Transformer f = ShareOfOnes(Attention::kFinite, 1.0, 12);
  const Transformer g = ShareOfOnes(Attention::kFinite, 1.0, 13);
  const CertifyResult r = Decide(f, g, 0.4);
  ASSERT_EQ(r.verdict, CertifyVerdict::kDisagrees);
  ASSERT_TRUE(r.first_disagreement.has_value());
  EXPECT_EQ(*r.first_disagreement, 4096u);
  // Against hardmax: the 0-keys count until 2^p; the gap 1 − 1/(1 + (T−1)/T) < 1/2 for T < 2^p,
  // 0 beyond: agreement at ε = 1/2 every length.
  const CertifyResult h = Decide(ShareOfOnes(Attention::kHardmax, 1.0), f, 0.5);
  EXPECT_EQ(h.verdict, CertifyVerdict::kAgrees);
  EXPECT_LE(h.sup_gap_upper, 0.5);
  EXPECT_GE(h.sup_gap_lower, 0.49);
}

TEST(Certify, BadInputIsAnInputError) {
  const Transformer f = ShareOfOnes(Attention::kHardmax, 0.0);
  EXPECT_THROW(Decide(f, f, -1.0), InputError);
  Transformer two = f;
  two.layers.push_back(Layer{});
  EXPECT_THROW(Decide(f, two, 0.1), InputError);
  Transformer logscaled = f;
  logscaled.layers[0].bias_scaling = BiasScaling::kLog;
  EXPECT_THROW(Decide(f, logscaled, 0.1), InputError);
  CertifyOptions o;
  o.epsilon = 0.1;
  o.tolerance = 0.0;
  EXPECT_THROW(Certify(f, f, o), OptionError);
}

}  // namespace
}  // namespace ltsim
