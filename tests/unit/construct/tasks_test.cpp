// SimpleTask and ModPTask compute their targets (docs/theory.md §6), are valid and round-trip.
#include "ltsim/construct/tasks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/model/transformer.h"

namespace ltsim {
namespace {

// The two evaluators compute the same logits and differ only in the order of the attention
// sums (O(T) terms of size ≤ 1 in the reference, O(S·Δ) in the fast path): both round to
// within ~T·ε ≈ 1e-13 for the T ≤ 400 used with the reference evaluator.
constexpr double kEvaluatorAgreement = 1e-12;

// A uniform double in [0, 1) from the raw 53 high bits: std::mt19937_64's output sequence is
// fixed by the standard, unlike the standard distributions, so the strings are the same on
// every compiler.
double Uniform01(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1p-53; }

// T i.i.d. binary tokens with P(1) = q.
std::vector<Token> RandomBinary(std::mt19937_64& engine, std::size_t length, double q) {
  std::vector<Token> tokens(length);
  for (Token& token : tokens) token = Uniform01(engine) < q ? 1 : 0;
  return tokens;
}

// f(x) by the fast one-layer path: the only way to evaluate long strings in a unit test.
double FastEval(const Transformer& model, const std::vector<Token>& tokens) {
  return EvaluateOneLayer(model,
                          CountTypes(tokens, model.alphabet, model.period, model.locality))(0);
}

double SimpleTarget(double omega, const std::vector<Token>& tokens) {
  double c0 = 0.0, c1 = 0.0;
  for (Token token : tokens) (token == 0 ? c0 : c1) += 1.0;
  return std::sin(omega * (c0 - c1) / (c0 + c1));
}

// Fraction of 1s among the 1-based positions j ≡ k (mod p).
double ModPTarget(int p, int k, const std::vector<Token>& tokens) {
  double ones = 0.0, total = 0.0;
  for (std::size_t j = 1; j <= tokens.size(); ++j) {
    if (static_cast<int>(j % p) != k) continue;
    total += 1.0;
    ones += tokens[j - 1];
  }
  return ones / total;
}

// Bit-exact equality of everything ParseModel reads back: the writer prints every number
// with round-trip precision, so equal files mean equal models.
void ExpectSameModel(const Transformer& a, const Transformer& b) {
  EXPECT_EQ(ModelToJson(a), ModelToJson(b));
}

// Valid, and ModelToJson → ParseModel gives back the same model (and the same outputs).
void ExpectValidAndRoundTrips(const Transformer& model) {
  EXPECT_NO_THROW(ValidateTransformer(model, model.name));
  const Transformer again = ParseModel(ModelToJson(model), "round-trip.json");
  ExpectSameModel(model, again);
  const std::vector<Token> x = {0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1};
  EXPECT_EQ(EvaluateReference(model, x), EvaluateReference(again, x));
}

// ---------------------------------------------------------------------------------------
// SimpleTask(ω)

class SimpleTaskTest : public ::testing::TestWithParam<double> {};

TEST_P(SimpleTaskTest, ComputesSinOfTheCountRatioWithinAccuracy) {
  const double omega = GetParam();
  const double accuracy = 1e-3;
  const Transformer model = MakeSimpleTask(omega, accuracy);
  // The interpolation error is at most ω²h²/8 ≤ accuracy (tasks.h); the MLP adds up at most
  // a few hundred ReLU terms of size ≤ 2ω, so rounding stays below 1e-12 — allow 1e-9.
  const double tolerance = accuracy + 1e-9;
  std::mt19937_64 engine(20260101 + static_cast<std::uint64_t>(omega));

  // Long strings through the fast path, with P(1) swept across (0, 1) so that the ratio
  // (c0 − c1)/T covers [−1, 1], plus the constant strings (ratio exactly ±1).
  for (int trial = 0; trial < 200; ++trial) {
    const double q = (trial + 0.5) / 200.0;
    const std::size_t length = 1000 + (engine() % 50000);
    const std::vector<Token> x = RandomBinary(engine, length, q);
    EXPECT_NEAR(FastEval(model, x), SimpleTarget(omega, x), tolerance)
        << "trial " << trial << " T = " << length;
  }
  for (Token token : {Token{0}, Token{1}}) {
    const std::vector<Token> x(5000, token);
    EXPECT_NEAR(FastEval(model, x), SimpleTarget(omega, x), tolerance);
  }

  // Short strings through both evaluators: each within accuracy, and the two agree.
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t length = 1 + (engine() % 400);
    const std::vector<Token> x = RandomBinary(engine, length, Uniform01(engine));
    const double reference = EvaluateReference(model, x)(0);
    EXPECT_NEAR(reference, SimpleTarget(omega, x), tolerance) << "T = " << length;
    EXPECT_NEAR(FastEval(model, x), reference, kEvaluatorAgreement) << "T = " << length;
  }
}

TEST_P(SimpleTaskTest, ShapeMarginAndRoundTrip) {
  const Transformer model = MakeSimpleTask(GetParam(), 1e-3);
  EXPECT_EQ(model.alphabet, 2);
  EXPECT_EQ(model.period, 1);
  EXPECT_EQ(model.locality, 0);
  EXPECT_EQ(model.layers.size(), 1u);
  EXPECT_EQ(model.outputs(), 1);
  // All logits are equal: no gap anywhere (tasks.h: γ = ∞).
  EXPECT_EQ(LogitMargin(model), std::numeric_limits<double>::infinity());
  ExpectValidAndRoundTrips(model);
}

INSTANTIATE_TEST_SUITE_P(Omega, SimpleTaskTest, ::testing::Values(1.0, 4.0, 10.0));

TEST(SimpleTask, LipschitzGrowsWithOmega) {
  // L = Θ(ω) (docs/theory.md §6): the MLP's slopes are ≈ ω cos(ω·u).
  const double l1 = LipschitzConstant(MakeSimpleTask(1.0, 1e-3));
  const double l10 = LipschitzConstant(MakeSimpleTask(10.0, 1e-3));
  EXPECT_GT(l10, 2.0 * l1);
}

// ---------------------------------------------------------------------------------------
// ModPTask(p, k)

struct ModPCase {
  int p;
  int k;
};

class ModPTaskTest : public ::testing::TestWithParam<ModPCase> {};

// Exact up to rounding: the head averages 0/1 values over the positions j ≡ k, so the only
// error is the final division and the O(S·Δ) (fast) or O(T) (reference) summation of
// integers stored exactly — well below 1e-12 for T ≤ 1e6.
constexpr double kModPTolerance = 1e-12;

TEST_P(ModPTaskTest, FractionOfOnesAtResidueK) {
  const auto [p, k] = GetParam();
  const Transformer model = MakeModPTask(p, k);
  std::mt19937_64 engine(7000 + 100 * p + k);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t length = p + (engine() % 20000);
    const std::vector<Token> x = RandomBinary(engine, length, Uniform01(engine));
    EXPECT_NEAR(FastEval(model, x), ModPTarget(p, k, x), kModPTolerance) << "T = " << length;
  }
  // The smallest lengths T = p … p + 20 and some short random strings, by both evaluators.
  for (std::size_t length = p; length <= static_cast<std::size_t>(p) + 20; ++length) {
    const std::vector<Token> x = RandomBinary(engine, length, 0.5);
    const double reference = EvaluateReference(model, x)(0);
    EXPECT_NEAR(reference, ModPTarget(p, k, x), kModPTolerance) << "T = " << length;
    EXPECT_NEAR(FastEval(model, x), reference, kModPTolerance) << "T = " << length;
  }
  // One long string (a million tokens) through the fast path.
  const std::vector<Token> x = RandomBinary(engine, 1000003, 0.3);
  EXPECT_NEAR(FastEval(model, x), ModPTarget(p, k, x), kModPTolerance);
}

TEST_P(ModPTaskTest, MarginOneValidAndRoundTrips) {
  const auto [p, k] = GetParam();
  const Transformer model = MakeModPTask(p, k);
  EXPECT_EQ(model.period, p);
  EXPECT_EQ(model.locality, 0);
  EXPECT_EQ(model.alphabet, 2);
  // Logit 1 on keys of residue k, 0 elsewhere. For p = 1 every key has residue 0 = k, so all
  // logits are 1 and there is no gap at all.
  EXPECT_EQ(LogitMargin(model), p == 1 ? std::numeric_limits<double>::infinity() : 1.0);
  EXPECT_TRUE(std::isnan(HardmaxLength(model)));  // hardmax layer: not applicable
  ExpectValidAndRoundTrips(model);
  ExpectValidAndRoundTrips(MakeModPTask(p, k, 6));
}

INSTANTIATE_TEST_SUITE_P(Residues, ModPTaskTest,
                         ::testing::Values(ModPCase{1, 0}, ModPCase{2, 0}, ModPCase{2, 1},
                                           ModPCase{3, 0}, ModPCase{3, 2}, ModPCase{5, 1},
                                           ModPCase{5, 4}, ModPCase{7, 0}, ModPCase{7, 3}),
                         [](const auto& info) {
                           return "p" + std::to_string(info.param.p) + "k" +
                                  std::to_string(info.param.k);
                         });

TEST(ModPTask, ExactAlsoForShortStringsWithSomePositionAtResidueK) {
  // tasks.h: for k ≥ 1 any T ≥ k has a position ≡ k, so f is exact even when T < p.
  const Transformer model = MakeModPTask(7, 3);
  std::mt19937_64 engine(99);
  for (std::size_t length = 3; length < 7; ++length) {
    const std::vector<Token> x = RandomBinary(engine, length, 0.5);
    EXPECT_NEAR(EvaluateReference(model, x)(0), ModPTarget(7, 3, x), kModPTolerance);
  }
}

TEST(ModPTask, FiniteVariantHasHardmaxLengthTwoToTheBits) {
  for (int bits : {1, 4, 8, 12}) {
    const Transformer model = MakeModPTask(3, 1, bits);
    EXPECT_EQ(model.layers.front().attention, Attention::kFinite);
    EXPECT_EQ(model.layers.front().precision_bits, bits);
    EXPECT_EQ(LogitMargin(model), 1.0);
    EXPECT_EQ(Log2HardmaxLength(model), bits);
    EXPECT_EQ(HardmaxLength(model), std::ldexp(1.0, bits));
  }
}

TEST(ModPTask, FiniteVariantIsExactAboveTwoToTheBits) {
  // For T > 2^bits = T_hard the weight T^(−1) < 2^(−bits) of the other residues is rounded to
  // 0 and `finite` equals `hardmax` (docs/model.md §4.3).
  std::mt19937_64 engine(4242);
  for (const auto& [p, k, bits] : {std::tuple{2, 1, 4}, std::tuple{3, 0, 6}, std::tuple{5, 2, 8},
                                   std::tuple{4, 3, 10}, std::tuple{3, 1, 12}}) {
    const Transformer model = MakeModPTask(p, k, bits);
    const std::size_t t_hard = std::size_t{1} << bits;
    for (std::size_t length = t_hard + 1; length < t_hard + 5; ++length) {
      const std::vector<Token> x = RandomBinary(engine, length, 0.5);
      const double target = ModPTarget(p, k, x);
      EXPECT_NEAR(EvaluateReference(model, x)(0), target, kModPTolerance)
          << "p " << p << " bits " << bits << " T = " << length;
      EXPECT_NEAR(FastEval(model, x), target, kModPTolerance)
          << "p " << p << " bits " << bits << " T = " << length;
    }
    for (int trial = 0; trial < 20; ++trial) {
      const std::size_t length = t_hard + 1 + engine() % 100000;
      const std::vector<Token> x = RandomBinary(engine, length, Uniform01(engine));
      EXPECT_NEAR(FastEval(model, x), ModPTarget(p, k, x), kModPTolerance) << "T = " << length;
    }
  }
}

TEST(ModPTask, FiniteVariantIsExactAtTwoToTheBits) {
  // The boundary T = T_hard = 2^bits: the other residues' weight is T^(−1) = 2^(−bits)
  // exactly, and docs/model.md §3 rounds w ≤ 2^(−p) to 0, so f equals the target here too. Every
  // bits value from 1 to 12 is tried: an implementation that computes T^(−1) as exp(−ln T)
  // lands one ulp above 2^(−bits) for some of them (e.g. 3, 6, 7, 8, 12).
  std::mt19937_64 engine(4243);
  for (int bits = 1; bits <= 12; ++bits) {
    const int p = 2 + bits % 3;
    const int k = bits % p;
    const Transformer model = MakeModPTask(p, k, bits);
    const std::size_t t_hard = std::size_t{1} << bits;
    if (t_hard < static_cast<std::size_t>(p)) continue;  // the target needs T ≥ p
    const std::vector<Token> x = RandomBinary(engine, t_hard, 0.5);
    const double target = ModPTarget(p, k, x);
    EXPECT_NEAR(EvaluateReference(model, x)(0), target, kModPTolerance)
        << "p " << p << " k " << k << " bits " << bits << " T = " << t_hard;
    EXPECT_NEAR(FastEval(model, x), target, kModPTolerance)
        << "p " << p << " k " << k << " bits " << bits << " T = " << t_hard;
  }
}

TEST(ModPTask, FiniteVariantDiffersBelowHardmaxLength) {
  // p = 2, k = 1, 4 bits: T_hard = 16. x = (10)^4 has T = 8, all 1s at the odd positions,
  // so the target is 1. At T = 8 the other residue's weight 8^(−1) = 0.125 > 2^(−4) survives
  // rounding: f = 4·1 / (4 + 4·0.125) = 8/9. (8^(−1) is computed as exp(−ln 8), within a few
  // ulps of 0.125, hence the 1e-12.)
  const Transformer model = MakeModPTask(2, 1, 4);
  const std::vector<Token> x = {1, 0, 1, 0, 1, 0, 1, 0};
  EXPECT_EQ(ModPTarget(2, 1, x), 1.0);
  EXPECT_NEAR(EvaluateReference(model, x)(0), 8.0 / 9.0, 1e-12);
  EXPECT_NEAR(FastEval(model, x), 8.0 / 9.0, 1e-12);
  // The hardmax model gets it exactly.
  EXPECT_NEAR(FastEval(MakeModPTask(2, 1), x), 1.0, kModPTolerance);
}

}  // namespace
}  // namespace ltsim
