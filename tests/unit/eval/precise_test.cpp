// The high-precision evaluator: differential against the double evaluators, and cases where
// double rounding decides the answer.
#include "ltsim/eval/precise.h"

#include <gtest/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/reference.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// Double evaluation rounds each of a few hundred operations by ≤ 2^-53 relative to the
// magnitudes involved (weights N(0, 1), d ≤ 5, so logits and outputs are O(10)): 1e-12
// relative to 1 + |output| leaves a factor ~50 of headroom and still fails on any rule
// difference (a wrong tie, a dropped key, a missing bias), which moves outputs by O(0.01–1).
constexpr double kAgreement = 1e-12;

std::vector<Token> RandomTokens(std::uint64_t seed, int alphabet, int length) {
  boost::random::mt19937_64 engine(seed);
  boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
  std::vector<Token> x(static_cast<std::size_t>(length));
  for (Token& t : x) t = static_cast<Token>(token(engine));
  return x;
}

void ExpectAgrees(const PreciseVector& precise, const Vector& reference, const std::string& what) {
  ASSERT_EQ(precise.size(), static_cast<std::size_t>(reference.size())) << what;
  for (std::size_t k = 0; k < precise.size(); ++k) {
    const double p = precise[k].convert_to<double>();
    EXPECT_NEAR(p, reference[k], kAgreement * (1.0 + std::abs(reference[k])))
        << what << " output " << k;
  }
}

test::ModelShape Shape(std::uint64_t seed, Attention mode, int layers) {
  test::ModelShape s;
  s.seed = seed;
  s.alphabet = 2 + static_cast<int>(seed % 3);
  s.width = 2 + static_cast<int>(seed % 4);
  s.period = 1 + static_cast<int>(seed % 3);
  s.locality = static_cast<int>(seed % 3);
  s.heads = 1 + static_cast<int>(seed % 2);
  s.outputs = 1 + static_cast<int>(seed % 2);
  s.attention = mode;
  s.bias_scaling = seed % 4 == 1 ? BiasScaling::kLog : BiasScaling::kNone;
  s.precision_bits = 2 + static_cast<int>(seed % 5);
  s.mlp = seed % 2 == 0;
  s.grid = seed % 3 == 0;  // exact ties: exercises the hardmax tolerance
  s.layers = layers;
  s.attention2 = static_cast<Attention>((seed / 3) % 3);
  s.bias_scaling2 = seed % 5 == 2 ? BiasScaling::kLog : BiasScaling::kNone;
  s.precision_bits2 = 3;
  s.heads2 = 1 + static_cast<int>((seed / 2) % 2);
  s.mlp2 = seed % 3 == 1;
  return s;
}

TEST(PreciseEvalTest, OneLayerAgreesWithTheDoubleEvaluatorsOnRandomModels) {
  for (Attention mode : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite}) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      const Transformer model = test::MakeRandomModel(Shape(seed, mode, 1));
      const int length = 1 + static_cast<int>((seed * 37) % 300);
      const std::vector<Token> x = RandomTokens(seed, model.alphabet, length);
      const auto source = MakeTokenSource(x, "x");
      const PreciseVector precise = EvaluatePrecise(model, *source);
      const std::string what = std::string(AttentionName(mode)) + " seed " + std::to_string(seed);
      ExpectAgrees(precise, EvaluateReference(model, x), what + " vs reference");
      ExpectAgrees(precise, Evaluate(model, *source), what + " vs one-layer");
    }
  }
}

TEST(PreciseEvalTest, TwoLayersAgreeWithTheDoubleEvaluatorsOnRandomModels) {
  for (Attention mode : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite}) {
    for (std::uint64_t seed = 1; seed <= 15; ++seed) {
      const Transformer model = test::MakeRandomModel(Shape(seed, mode, 2));
      const int length = 1 + static_cast<int>((seed * 53) % 150);
      const std::vector<Token> x = RandomTokens(seed + 100, model.alphabet, length);
      const auto source = MakeTokenSource(x, "x");
      const PreciseVector precise = EvaluatePrecise(model, *source);
      const std::string what = std::string(AttentionName(mode)) + " seed " + std::to_string(seed);
      ExpectAgrees(precise, EvaluateReference(model, x), what + " vs reference");
      ExpectAgrees(precise, Evaluate(model, *source), what + " vs two-layer");
    }
  }
}

TEST(PreciseEvalTest, OneLayerTakesAnyLengthThroughTypeCounts) {
  // Runs, so the counting pass is instant: T ≈ 2·10^12 costs what T = 10 does.
  const Transformer model = test::MakeRandomModel(Shape(7, Attention::kSoftmax, 1));
  const auto x = ParseTextString("0^1000000000000 1^999999999999 0 1 1", "runs");
  ExpectAgrees(EvaluatePrecise(model, *x), Evaluate(model, *x), "T = 2·10^12");
}

TEST(PreciseEvalTest, TwoLayersAboveTheLimitAreRefusedWithTheSourceName) {
  const Transformer model = test::MakeRandomModel(Shape(2, Attention::kSoftmax, 2));
  const auto x = OpenSource("iid:length=" + std::to_string(kPreciseTwoLayerLimit + 1) +
                            ",alphabet=" + std::to_string(model.alphabet) + ",seed=1");
  std::string reason;
  EXPECT_FALSE(PreciseEvaluable(model, x->length(), &reason));
  try {
    EvaluatePrecise(model, *x);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("iid:length="), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("limited to"), std::string::npos) << e.what();
  }
}

// One softmax layer, S = 2, Δ = 1, τ = 0, d = 3, x = "0 1". The query is token 1; the keys
// are y₀ = (1, 0, 0) (far) and y₁ = (1, δ, 0) (itself), δ = 2^-60, and M maps y to (y₁, y₁, 0),
// so the logits are a₀ = 1 and a₁ = 1 + δ. In double 1 + 2^-60 rounds to 1: both weights are
// 1/2. Exactly, α₁ = σ(δ) = 1/(1 + e^-δ) = 1/2 + δ/4 − O(δ³). O copies 2^120·y[1] into the
// third coordinate, so the readout y[2] − 2^59 is 2^120·α₁·δ − 2^59 = 2^60·(σ(δ) − 1/2) =
// 1/4 − O(2^-120) exactly, and 0 in double.
Transformer NearTieSoftmax() {
  const double delta = std::ldexp(1.0, -60);
  Transformer m;
  m.alphabet = 2;
  m.width = 3;
  m.embedding = Matrix{{1, 0, 0}, {1, delta, 0}};
  m.positional = Matrix::Zero(1, 3);
  Layer layer;
  layer.attention = Attention::kSoftmax;
  Head head{Matrix{{1, 0, 0}, {1, 0, 0}, {0, 0, 0}}, Matrix::Zero(3, 3), Vector::Zero(1)};
  head.ov(2, 1) = std::ldexp(1.0, 120);
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix{{0, 0, 1}};
  m.readout_bias = Vector::Constant(1, -std::ldexp(1.0, 59));
  ValidateTransformer(m, "near-tie");
  return m;
}

TEST(PreciseEvalTest, SoftmaxLogitsThatDifferBelowDoubleResolution) {
  const Transformer model = NearTieSoftmax();
  const std::vector<Token> x = {0, 1};
  const auto source = MakeTokenSource(x, "x");
  EXPECT_EQ(Evaluate(model, *source)[0], 0.0);  // the double answer, rounded to a tie
  EXPECT_EQ(EvaluateReference(model, x)[0], 0.0);
  const PreciseReal precise = EvaluatePrecise(model, *source)[0];
  // 1/4 − 2^-120/48 + …: the 50-digit result is within 1e-30 of 1/4.
  EXPECT_LT(abs(precise - PreciseReal(0.25)), PreciseReal(1e-30)) << PreciseText(precise);
}

// A readout that cancels: y = (10^16, 1) and f = y₀ + y₁ − 10^16. In double 10^16 + 1 is a
// tie between 10^16 and 10^16 + 2 and rounds to even, 10^16, so f = 0; exactly f = 1.
TEST(PreciseEvalTest, AReadoutSumThatCancels) {
  Transformer m;
  m.alphabet = 1;
  m.width = 2;
  m.embedding = Matrix{{1e16, 1}};
  m.positional = Matrix::Zero(1, 2);
  Layer layer;
  layer.heads.push_back({Matrix::Zero(2, 2), Matrix::Zero(2, 2), Vector::Zero(1)});
  m.layers.push_back(layer);
  m.readout_weight = Matrix{{1, 1}};
  m.readout_bias = Vector::Constant(1, -1e16);
  ValidateTransformer(m, "cancel");
  const auto x = MakeTokenSource({0, 0, 0}, "x");
  EXPECT_EQ(Evaluate(m, *x)[0], 0.0);
  EXPECT_EQ(EvaluatePrecise(m, *x)[0], PreciseReal(1));
}

// A two-layer model whose softmax first layer has logits ±10^30 (valid: the magnitude bound
// of docs/formats.md §6.1 allows 10^100). The streaming pass tabled e^a per key, which is ∞
// in 50 digits for a of order 10^9 and more, so ∞/∞ = NaN reached the second layer and its internal
// check aborted (found by the eval fuzz harness). The first layer attends to the newest 1
// (y⁰ = 10^15 ≫ the 0s), so both evaluators give the same finite outputs.
TEST(PreciseEvalTest, SoftmaxLogitsBeyondTheExponentRangeOfATable) {
  Transformer m;
  m.alphabet = 2;
  m.width = 1;
  m.embedding = Matrix{{-1e15}, {1e15}};
  m.positional = Matrix::Zero(1, 1);
  Layer first;
  first.attention = Attention::kSoftmax;
  first.heads.push_back({Matrix{{1}}, Matrix{{1e-15}}, Vector::Zero(1)});
  Layer second;
  second.heads.push_back({Matrix{{1e-30}}, Matrix{{1e-15}}, Vector::Zero(1)});
  m.layers = {first, second};
  m.readout_weight = Matrix{{1e-15}};
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "huge-logits");
  const std::vector<Token> x = {0, 1, 0, 0, 1, 1, 0};
  const auto source = MakeTokenSource(x, "x");
  const Vector reference = EvaluateReference(m, x);
  ASSERT_TRUE(std::isfinite(reference[0]));
  ExpectAgrees(EvaluatePrecise(m, *source), reference, "huge logits");
  ExpectAgrees(EvaluatePrecise(m, *source), Evaluate(m, *source), "huge logits");
}

// Finite attention, p = 2, keys one logit unit below the query's: log₂ w = −log₂ T, dropped
// exactly when log₂ T ≥ 2, i.e. from T = 4 = T_hard on, where the comparison is an equality
// (docs/model.md §3). The precise evaluator must take log₂ 4 = 2 exactly, like the double one.
TEST(PreciseEvalTest, FiniteDropRuleAtTheHardmaxLengthIsExact) {
  Transformer m;
  m.alphabet = 2;
  m.width = 2;
  m.embedding = Matrix{{1, 0}, {0, 1}};
  m.positional = Matrix::Zero(1, 2);
  Layer layer;
  layer.attention = Attention::kFinite;
  layer.precision_bits = 2;
  // Query token 1: logit 1 on token-1 keys, 0 on token-0 keys; the value is the key's y[0].
  layer.heads.push_back({Matrix{{0, 0}, {0, 1}}, Matrix{{0, 0}, {1, 0}}, Vector::Zero(1)});
  m.layers.push_back(layer);
  m.readout_weight = Matrix{{0, 1}};
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "finite");
  for (int zeros = 1; zeros <= 6; ++zeros) {
    std::vector<Token> x(static_cast<std::size_t>(zeros), 0);
    x.push_back(1);
    const auto source = MakeTokenSource(x, "x");
    const double T = static_cast<double>(x.size());
    // Token-0 keys weigh T^-1 each while T < 4: y[1] = 1 + zeros·T^-1/(zeros·T^-1 + 1).
    const double expected = T < 4 ? 1.0 + (zeros / T) / (zeros / T + 1.0) : 1.0;
    EXPECT_NEAR(Evaluate(m, *source)[0], expected, 1e-15) << "T = " << T;
    EXPECT_NEAR(EvaluatePrecise(m, *source)[0].convert_to<double>(), expected, 1e-15)
        << "T = " << T;
  }
}

TEST(PreciseEvalTest, PreciseTextKeepsTheDigits) {
  EXPECT_EQ(PreciseText(PreciseReal(1) / 3, 20), "3.3333333333333333333e-01");
  EXPECT_TRUE(PreciseLessOrClose(PreciseReal(1) + PreciseReal(1e-13), PreciseReal(1)));
  EXPECT_FALSE(PreciseLessOrClose(PreciseReal(1) + PreciseReal(1e-11), PreciseReal(1)));
}

}  // namespace
}  // namespace ltsim
