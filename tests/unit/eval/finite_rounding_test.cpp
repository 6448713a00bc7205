// The finite cut-off w ≤ 2^(−p), decided exactly (docs/theory.md §8.6): against a 700-bit
// reference near the boundary, and every evaluator deciding it the same way.
#include "ltsim/model/finite_rounding.h"

#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {
namespace {

namespace mp = boost::multiprecision;
// 700 bits: twice the 332 the implementation uses, and independent of it.
using Reference = mp::number<mp::backends::cpp_bin_float<700, mp::backends::digit_base_2>>;

// (a_max − a)·ln T ≥ p·ln 2 for the exact difference of the doubles, in 700 bits.
bool ReferenceDropped(double a, double a_max, double t, int p) {
  const Reference gap = Reference(a_max) - Reference(a);
  if (!(gap > 0)) return false;
  return gap * log(Reference(t)) >= p * log(Reference(2));
}

// Tokens 0 and 1 with logits 0 and `gap` against a constant query coordinate; the head averages
// [token is 0] (coordinate 3), which the readout reads.
Transformer CutoffModel(double gap, int bits) {
  Transformer m;
  m.alphabet = 2;
  m.width = 4;
  m.period = 1;
  m.locality = 0;
  m.embedding = Matrix::Zero(2, 4);
  m.embedding(0, 0) = 1;
  m.embedding(1, 1) = 1;
  m.positional = Matrix::Zero(1, 4);
  m.positional(0, 2) = 1;
  Layer layer;
  layer.attention = Attention::kFinite;
  layer.precision_bits = bits;
  Head head{Matrix::Zero(4, 4), Matrix::Zero(4, 4), Vector::Zero(1)};
  head.qk(1, 2) = gap;  // a key of token 1 has logit gap for every query
  head.ov(3, 0) = 1;
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 4);
  m.readout_weight(0, 3) = 1;
  m.readout_bias = Vector::Zero(1);
  return m;
}

// The same model with a second layer that changes nothing (M = O = 0): the two-layer evaluator
// then decides the first layer's cut-off in its own kernels.
Transformer WithIdentityLayer(Transformer m) {
  Layer layer;
  layer.attention = Attention::kSoftmax;
  layer.heads.push_back(Head{Matrix::Zero(4, 4), Matrix::Zero(4, 4), Vector::Zero(1)});
  m.layers.push_back(layer);
  return m;
}

// The case: a gap of double(1/3) with p = 1 at T = 8. The exact weight
// 8^(−0.333…3148) = 0.50000000000000004 exceeds 2^(−1), so the key stays; log₂8·gap rounds to 1
// in double, and the old rule dropped it.
TEST(FiniteRounding, AGapOfOneThirdAtEightIsKept) {
  const double third = 1.0 / 3.0;
  EXPECT_FALSE(FiniteKeyDropped(0.0, third, 8.0, 1));
  EXPECT_FALSE(ReferenceDropped(0.0, third, 8.0, 1));
  EXPECT_EQ(std::log2(8.0) * third, 1.0);  // what the old comparison saw
  EXPECT_GT(std::exp2(FiniteLog2Weight(0.0, third, 8.0, 1)), 0.0);
  // One 0 among seven 1s: the 0 keeps weight 1/2 against seven keys of weight 1.
  const Transformer m = CutoffModel(third, 1);
  const std::vector<Token> x = {0, 1, 1, 1, 1, 1, 1, 1};
  const double expected = 0.5 / (0.5 + 7.0);
  EXPECT_NEAR(Evaluate(m, *MakeTokenSource(x, "x"))(0), expected, 1e-15);
  EXPECT_NEAR(EvaluateReference(m, x)(0), expected, 1e-15);
  EXPECT_NEAR(Evaluate(WithIdentityLayer(m), *MakeTokenSource(x, "x"))(0), expected, 1e-15);
  EXPECT_NEAR(EvaluatePrecise(m, *MakeTokenSource(x, "x"))[0].convert_to<double>(), expected,
              1e-15);
  // threshold sees it too: f against the same model with p = 60 (no key is dropped before 2^180)
  // agrees exactly at T = 8, where the old rule made them differ by 1/15 on this string.
  ThresholdOptions o;
  o.epsilon = 1e-6;
  o.max_length = 8;
  const ThresholdResult r = FindThreshold(m, CutoffModel(third, 60), o);
  EXPECT_FALSE(r.first_disagreement.has_value()) << *r.first_disagreement;
}

// At T = 2^m the boundary is an exact equality for gap = p/m: dropped (w = 2^(−p) ≤ 2^(−p)), and
// one ulp less keeps it; one ulp more drops it.
TEST(FiniteRounding, PowersOfTwoAreDecidedExactly) {
  for (int p = 1; p <= 12; ++p)
    for (int m = 1; m <= 40; ++m) {
      const double gap = static_cast<double>(p) / m;
      const double t = std::ldexp(1.0, m);
      if (std::fma(gap, m, -p) != 0) continue;  // p/m not a double
      EXPECT_TRUE(FiniteKeyDropped(-gap, 0.0, t, p)) << p << " " << m;
      EXPECT_FALSE(FiniteKeyDropped(-std::nextafter(gap, 0.0), 0.0, t, p)) << p << " " << m;
      EXPECT_TRUE(FiniteKeyDropped(-std::nextafter(gap, 1e9), 0.0, t, p)) << p << " " << m;
    }
}

// Gaps within a few ulps of p/log₂T, at lengths 2 … 10^7: the decision is the 700-bit one in
// every case (1000s of cases straddle the boundary; the old rule got 22–30% of them wrong).
TEST(FiniteRounding, NearTheBoundaryTheDecisionIsExact) {
  boost::random::mt19937_64 engine(7);
  boost::random::uniform_int_distribution<int> bits(1, 30), ulps(-6, 6);
  boost::random::uniform_real_distribution<double> log_t(1.0, std::log2(1e7));
  int straddling = 0, old_wrong = 0;
  for (int c = 0; c < 10000; ++c) {
    const int p = bits(engine);
    const double t = std::floor(std::exp2(log_t(engine)));
    double gap = p / std::log2(t);
    for (int k = ulps(engine); k != 0; k += k > 0 ? -1 : 1)
      gap = std::nextafter(gap, k > 0 ? 1e300 : 0.0);
    // Logits of either sign and size: a* − a is the gap exactly when both are small integers
    // plus it; use a shifted pair whose difference is still exact.
    const double a_max = c % 2 ? 0.0 : 3.0, a = a_max - gap;
    if (a_max - a != gap) continue;
    const bool exact = ReferenceDropped(a, a_max, t, p);
    ASSERT_EQ(FiniteKeyDropped(a, a_max, t, p), exact) << p << " " << t << " " << gap;
    ++straddling;
    old_wrong += (std::log2(t) * (a - a_max) <= -p) != exact;
  }
  EXPECT_GT(straddling, 5000);
  RecordProperty("old_rule_wrong", old_wrong);
  std::printf("near-boundary cases %d, decided wrongly by the double product: %d\n", straddling,
              old_wrong);
}

// Every evaluator against the 50-digit one on cut-off models whose gap is within a few ulps of
// p/log₂T at the string's length: one-layer (type counts), reference, two-layer, precise.
TEST(FiniteRounding, EvaluatorsAgreeWithThePreciseOneAtTheBoundary) {
  boost::random::mt19937_64 engine(11);
  boost::random::uniform_int_distribution<int> bits(1, 8), ulps(-3, 3), length(3, 400);
  int disagreements_old = 0;
  for (int c = 0; c < 300; ++c) {
    const int p = bits(engine);
    const int T = length(engine);
    double gap = p / std::log2(static_cast<double>(T));
    for (int k = ulps(engine); k != 0; k += k > 0 ? -1 : 1)
      gap = std::nextafter(gap, k > 0 ? 1e300 : 0.0);
    const Transformer m = CutoffModel(gap, p);
    std::vector<Token> x(static_cast<std::size_t>(T), 1);
    x[0] = 0;  // one 0 (gap below the maximum) among 1s
    const auto source = MakeTokenSource(x, "x");
    const double precise = EvaluatePrecise(m, *source)[0].convert_to<double>();
    const double tolerance = 1e-12;
    ASSERT_NEAR(Evaluate(m, *source)(0), precise, tolerance) << p << " " << T << " " << gap;
    ASSERT_NEAR(EvaluateReference(m, x)(0), precise, tolerance) << p << " " << T << " " << gap;
    ASSERT_NEAR(Evaluate(WithIdentityLayer(m), *source)(0), precise, tolerance)
        << p << " " << T << " " << gap;
    const bool dropped = precise == 0.0;
    disagreements_old += (std::log2(static_cast<double>(T)) * (-gap) <= -p) != dropped;
  }
  std::printf("cases the old rule decided otherwise than the 50-digit evaluator: %d of 300\n",
              disagreements_old);
}

// FiniteDropLength is the first length the rule drops a gap at (and the rule is monotone).
TEST(FiniteRounding, DropLengthIsTheFirstLengthDropped) {
  boost::random::mt19937_64 engine(3);
  boost::random::uniform_int_distribution<int> bits(1, 12);
  boost::random::uniform_real_distribution<double> gaps(0.2, 3.0);
  for (int c = 0; c < 2000; ++c) {
    const int p = bits(engine);
    const double gap = gaps(engine);
    const std::uint64_t t = FiniteDropLength(gap, p);
    ASSERT_GE(t, 2u);
    EXPECT_TRUE(FiniteKeyDropped(-gap, 0.0, static_cast<double>(t), p));
    EXPECT_FALSE(FiniteKeyDropped(-gap, 0.0, static_cast<double>(t - 1), p));
    EXPECT_NEAR(static_cast<double>(t), std::exp2(p / gap), 1.0 + 1e-9 * t) << p << " " << gap;
  }
  EXPECT_EQ(FiniteDropLength(1.0 / 3.0, 1), 9u);  // 8 keeps a gap of double(1/3), 9 drops it
  EXPECT_EQ(FiniteDropLength(0.5, 1), 4u);        // 4^(−1/2) = 2^(−1) exactly
  EXPECT_EQ(FiniteDropLength(0.0, 4), 0u);
}

}  // namespace
}  // namespace ltsim
