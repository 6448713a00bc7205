// Known answers, derived by hand, for every attention mode; both evaluators must give them.
#include "ltsim/eval/evaluate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// S = 2, d = 3 (0: [token 0], 1: [token 1], 2: output). Logit of a key = ln 2 if it is a 0
// (for any query), 0 if it is a 1; the output is the attention share of the 0s.
Transformer ShareOfZeros(Attention attention, int bits = 0) {
  Transformer m;
  m.alphabet = 2;
  m.width = 3;
  m.embedding = Matrix::Zero(2, 3);
  m.embedding(0, 0) = m.embedding(1, 1) = 1.0;
  m.positional = Matrix::Zero(1, 3);
  Head head{Matrix::Zero(3, 3), Matrix::Zero(3, 3), Vector::Zero(1)};
  head.qk(0, 0) = head.qk(0, 1) = std::log(2.0);
  head.ov(2, 0) = 1.0;
  Layer layer;
  layer.attention = attention;
  layer.precision_bits = bits;
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 3);
  m.readout_weight(0, 2) = 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "share-of-zeros");
  return m;
}

// Both evaluators on a string held in memory.
void ExpectBoth(const Transformer& m, const std::vector<Token>& x, double expected) {
  EXPECT_NEAR(EvaluateReference(m, x)[0], expected, 1e-12);
  EXPECT_NEAR(EvaluateOneLayer(m, CountTypes(x, m.alphabet, m.period, m.locality))[0], expected,
              1e-12);
}

TEST(Evaluate, SoftmaxWeighsZerosTwice) {
  ExpectBoth(ShareOfZeros(Attention::kSoftmax), {0, 1, 1, 1}, 2.0 / 5.0);
  ExpectBoth(ShareOfZeros(Attention::kSoftmax), {1, 0, 0}, 4.0 / 5.0);
}

TEST(Evaluate, HardmaxAveragesTheMaximalKeys) {
  ExpectBoth(ShareOfZeros(Attention::kHardmax), {0, 1, 1, 1}, 1.0);
  ExpectBoth(ShareOfZeros(Attention::kHardmax), {1, 1}, 0.0);  // only 1s: all tie
}

// Finite, p = 1: a 1-key weighs T^(−ln 2), dropped when ≤ 1/2, i.e. from T ≥ e on.
TEST(Evaluate, FinitePrecisionDropsSmallWeights) {
  const Transformer m = ShareOfZeros(Attention::kFinite, 1);
  const double w = std::pow(2.0, -std::log(2.0));  // T = 2
  ExpectBoth(m, {0, 1}, 1.0 / (1.0 + w));
  ExpectBoth(m, {0, 1, 1}, 1.0);
}

// Softmax, no token logits, φ = [0, 1] under `log` scaling: the key one step back weighs
// e^{ln T} = T against 1 for every other key.
TEST(Evaluate, LogBiasScalingLiftsTheLocalKey) {
  Transformer m = ShareOfZeros(Attention::kSoftmax);
  m.locality = 1;
  m.layers[0].bias_scaling = BiasScaling::kLog;
  m.layers[0].heads[0].qk.setZero();
  m.layers[0].heads[0].bias = Vector::Map(std::vector<double>{0.0, 1.0}.data(), 2);
  ExpectBoth(m, {0, 0, 1, 0}, 3.0 / 7.0);  // 0s at 1, 2, 4 weigh 1 each; the 1 weighs 4
  ExpectBoth(m, {1}, 0.0);                 // β(1) = ln 1 = 0
}

TEST(Evaluate, BundledPairKnownAnswer) {
  const Transformer f = ReadModel(std::string(LTSIM_SOURCE_DIR) + "/corpus/models/pair/f.json");
  const auto x = ParseTextString("0 1 1 2 0 2^5", "x");
  EXPECT_NEAR(Evaluate(f, *x)[0], 0.5, 1e-15);  // two 0s among four 0/1 positions
}

TEST(Evaluate, ThreeLayerModelsUseTheReferenceUpToItsLimit) {
  Transformer m = ShareOfZeros(Attention::kSoftmax);
  m.layers.push_back(m.layers[0]);
  m.layers.push_back(m.layers[0]);
  const std::vector<Token> x = {0, 1, 1, 0, 1};
  EXPECT_EQ(Evaluate(m, *MakeTokenSource(x, "x")), EvaluateReference(m, x));
  EXPECT_THROW(Evaluate(m, *MakeRunSource({{0, kReferenceLimit + 1}}, "long")), InputError);
}

TEST(Evaluate, AttentionDistanceIsZeroForTheSameCountsAndTwoAtMost) {
  const Transformer m = ShareOfZeros(Attention::kHardmax);
  const TypeCounts a = CountTypes(std::vector<Token>{0, 0, 1, 1}, 2, 1, 0);
  const TypeCounts b = CountTypes(std::vector<Token>{1, 1, 0, 1}, 2, 1, 0);
  EXPECT_EQ(AttentionDistance(m, a, a), 0.0);
  // a: far 0s hold 2/2 of the weight, the query (a 1) none; b: the far 0 holds all of it.
  EXPECT_NEAR(AttentionDistance(m, a, b), 0.0, 1e-15);
  const TypeCounts c = CountTypes(std::vector<Token>{1, 1, 1, 1}, 2, 1, 0);
  EXPECT_NEAR(AttentionDistance(m, a, c), 2.0, 1e-15);  // disjoint supports
}

}  // namespace
}  // namespace ltsim
