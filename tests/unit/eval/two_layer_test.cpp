// The two-layer evaluator at large T against an independent long-double accumulation, and its
// dispatch.
#include "ltsim/eval/two_layer.h"

#include <gtest/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <cstdio>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// Section 5's shape: first layer softmax with `log` bias scaling, second layer `second`.
Transformer SectionFiveModel(Attention second, std::uint64_t seed) {
  boost::random::mt19937_64 engine(seed);
  boost::random::normal_distribution<double> normal(0.0, 0.5);
  auto draw = [&](int rows, int cols) {
    Matrix m(rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) m(i, j) = normal(engine);
    return m;
  };
  Transformer m;
  m.alphabet = 4;
  m.width = 6;
  m.period = 2;
  m.locality = 2;
  m.embedding = draw(4, 6);
  m.positional = draw(2, 6);
  for (Attention mode : {Attention::kSoftmax, second}) {
    Layer layer;
    layer.attention = mode;
    layer.bias_scaling = m.layers.empty() ? BiasScaling::kLog : BiasScaling::kNone;
    layer.precision_bits = mode == Attention::kFinite ? 6 : 0;
    for (int h = 0; h < 2; ++h) layer.heads.push_back({draw(6, 6), draw(6, 6), draw(3, 1).col(0)});
    layer.mlp = Mlp{draw(8, 6), draw(8, 1).col(0), draw(6, 8)};
    m.layers.push_back(layer);
  }
  m.readout_weight = draw(2, 6);
  m.readout_bias = draw(2, 1).col(0);
  ValidateTransformer(m, "section-5");
  return m;
}

// The same without a first-layer MLP: the second layer then reads the features φ_i, the path of
// the speed benchmark and of compact blocks.
Transformer FeaturesModel() {
  Transformer m = SectionFiveModel(Attention::kSoftmax, 3);
  m.layers[0].mlp.reset();
  return m;
}

// The second layer recomputed from the same first-layer stream with long-double sums and
// the exact maximum (two passes): it isolates the rounding of the evaluator's running,
// max-shifted, block-summed accumulation.
Vector LongDoubleSecondLayer(const Transformer& m, const Source& x) {
  const std::uint64_t n = x.length();
  Vector last;
  {
    FirstLayerStream stream(m);
    for (Token t : ReadAll(x, n)) last = stream.Push(t);
  }
  const Layer& layer = m.layers[1];
  Vector u = last;
  for (const Head& head : layer.heads) {
    const Vector mq = head.qk * last;
    auto logit = [&](const Vector& y, std::uint64_t i) {
      const std::uint64_t t = n - i;
      return y.dot(mq) + (t <= static_cast<std::uint64_t>(m.locality) ? head.bias[t] : 0.0);
    };
    long double a_max = -INFINITY;
    FirstLayerStream first(m);
    for (Token t : ReadAll(x, n))
      a_max = std::max<long double>(a_max, logit(first.Push(t), first.position()));
    Eigen::Matrix<long double, Eigen::Dynamic, 1> sum =
        Eigen::Matrix<long double, Eigen::Dynamic, 1>::Zero(m.width);
    long double total = 0;
    FirstLayerStream second(m);
    for (Token t : ReadAll(x, n)) {
      const Vector& y = second.Push(t);
      const long double w = std::exp(static_cast<long double>(logit(y, second.position())) - a_max);
      sum += w * y.cast<long double>();
      total += w;
    }
    u += head.ov * (sum / total).cast<double>();
  }
  const Vector y2 = u + layer.mlp->out * (layer.mlp->in * u + layer.mlp->in_bias).cwiseMax(0.0);
  return m.readout_weight * y2 + m.readout_bias;
}

// T = 2·10^6 keeps this unit test to a few seconds. Measured on this case: a naive running
// sum is off by 3.3e-11, the evaluator's block sums by 3.4e-14; the tolerance 1e-12
// relative separates the two with a factor 30 to spare.
TEST(TwoLayer, AccurateAtLargeTAgainstLongDouble) {
  const Transformer m = SectionFiveModel(Attention::kSoftmax, 3);
  const auto x = MakeIidSource(2'000'000, 4, 9, {0.4, 0.3, 0.2, 0.1});
  const Vector fast = EvaluateTwoLayer(m, *x);
  const Vector exact = LongDoubleSecondLayer(m, *x);
  std::printf("two-layer, T = 2e6: sup |fast - long double| = %.3g\n", SupDistance(fast, exact));
  EXPECT_LE(SupDistance(fast, exact), 1e-12 * (1.0 + exact.cwiseAbs().maxCoeff()))
      << fast.transpose() << " vs " << exact.transpose();
}

// The same without a first-layer MLP, so the second layer runs on the features φ_i (the
// path of the speed benchmark).
TEST(TwoLayer, FeaturesPathAccurateAtLargeTAgainstLongDouble) {
  const Transformer m = FeaturesModel();
  const auto x = MakeIidSource(2'000'000, 4, 9, {0.4, 0.3, 0.2, 0.1});
  const Vector fast = EvaluateTwoLayer(m, *x);
  const Vector exact = LongDoubleSecondLayer(m, *x);
  EXPECT_LE(SupDistance(fast, exact), 1e-12 * (1.0 + exact.cwiseAbs().maxCoeff()))
      << fast.transpose() << " vs " << exact.transpose();
}

// The compact layout is the fast path of the benchmark: once every type is far and no row can
// overflow, every block must take it (the property tests check its values; this checks that
// they check the layout actually used). x: 16 blocks of 256 iid tokens; the 8 types (S = 4,
// Δ = 2) are all far within the first block, which is dense because the window starts empty.
TEST(FirstLayerBlocks, AreCompactOnceEveryTypeIsFar) {
  const Transformer m = FeaturesModel();
  const std::vector<Token> x = ReadAll(*MakeIidSource(4096, 4, 9, {}), 4096);
  FirstLayerStream stream(m);
  FirstLayerBlock block;
  std::vector<int> compact;
  for (std::size_t start = 0; start < x.size(); start += 256) {
    stream.PushBlock(x.data() + start, 256, block);
    compact.push_back(block.compact ? 1 : 0);
  }
  std::vector<int> expected(16, 1);
  expected[0] = 0;
  EXPECT_EQ(compact, expected);
}

// A compact block reads the stream's live tables, so using it after the stream has advanced (here
// by one Push) is a programming error the stream refuses rather than a silently stale answer.
TEST(FirstLayerBlocksDeathTest, CompactBlockAfterTheStreamAdvancedIsRefused) {
  const Transformer m = FeaturesModel();
  const std::vector<Token> x = ReadAll(*MakeIidSource(512, 4, 9, {}), 512);
  FirstLayerStream stream(m);
  FirstLayerBlock block;
  for (std::size_t start : {0, 256}) stream.PushBlock(x.data() + start, 256, block);
  ASSERT_TRUE(block.compact);
  Matrix alpha;
  stream.BlockAttention(block, alpha);  // still current
  stream.Push(0);
  EXPECT_DEATH(stream.BlockAttention(block, alpha), "position_");
}

// A type absent from the far keys whose logit exceeds the present maximum by 800 (e^800
// overflows) while the log-scaled bias −30 makes its suffix term tiny: the block path must
// not form e^800 on its own (it fell back to the per-token path only when the product could
// overflow, and returned NaN). x = 0^5000 1; the reference decides.
TEST(TwoLayer, HugeLogitGapOfAnAbsentTypeMatchesTheReference) {
  Transformer m;
  m.alphabet = 2;
  m.width = 2;
  m.period = 1;
  m.locality = 0;
  m.embedding = Matrix::Identity(2, 2);
  m.positional = Matrix::Zero(1, 2);
  for (int l = 0; l < 2; ++l) {
    Layer layer;
    layer.attention = Attention::kSoftmax;
    layer.bias_scaling = l == 0 ? BiasScaling::kLog : BiasScaling::kNone;
    Head head{Matrix::Zero(2, 2), Matrix::Identity(2, 2),
              Vector::Constant(1, l == 0 ? -30.0 : 0.0)};
    if (l == 0) head.qk(1, 1) = 800.0;
    layer.heads.push_back(head);
    m.layers.push_back(layer);
  }
  m.readout_weight = Matrix::Ones(1, 2);
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "huge-gap");
  std::vector<Token> x(5000, 0);
  x.push_back(1);
  const Vector reference = EvaluateReference(m, x);
  const Vector fast = EvaluateTwoLayer(m, *MakeTokenSource(x, "x"));
  ASSERT_TRUE(fast.allFinite()) << fast.transpose();
  EXPECT_LE(SupDistance(fast, reference), 1e-9 * (1.0 + reference.cwiseAbs().maxCoeff()))
      << fast.transpose() << " vs " << reference.transpose();
}

TEST(TwoLayer, MatchesTheReferenceForEverySecondLayerMode) {
  for (Attention mode : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite}) {
    const Transformer m = SectionFiveModel(mode, 4);
    const std::vector<Token> x = ReadAll(*MakeIidSource(1500, 4, 10, {}), 1500);
    const Vector reference = EvaluateReference(m, x);
    EXPECT_LE(SupDistance(EvaluateTwoLayer(m, *MakeTokenSource(x, "x")), reference),
              1e-9 * (1.0 + reference.cwiseAbs().maxCoeff()))
        << AttentionName(mode);
  }
}

TEST(TwoLayer, EvaluateUsesItBeyondTheReferenceLimit) {
  const Transformer m = SectionFiveModel(Attention::kHardmax, 5);
  const auto x = MakeIidSource(kReferenceLimit * 5, 4, 11, {});
  EXPECT_EQ(Evaluate(m, *x), EvaluateTwoLayer(m, *x));
}

TEST(TwoLayer, AlphabetMismatchIsAnInputError) {
  const Transformer m = SectionFiveModel(Attention::kSoftmax, 6);
  EXPECT_THROW(EvaluateTwoLayer(m, *MakeRunSource({{0, 10}, {7, 1}}, "x")), InputError);
}

}  // namespace
}  // namespace ltsim
