// The a-priori rounding bound of one-layer evaluation (docs/theory.md §8.7): it holds against the
// 50-digit evaluator, and where it is large the claims of eval and threshold come from 50 digits.
#include "ltsim/eval/rounding.h"

#include <gtest/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/precise.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// The pair: E = [[1e20, 0], [1e20, 1]], P = [[1, 0]] (f) or 0 (g), readout reading
// coordinate 0 with bias −1e20; one hardmax head that does nothing. f = 1 and g = 0 on every
// string, exactly; in double E₀ + P₀ rounds to 1e20 and both print 0.
Transformer Ill(double p0) {
  Transformer m;
  m.alphabet = 2;
  m.width = 2;
  m.period = 1;
  m.locality = 0;
  m.embedding = Matrix::Zero(2, 2);
  m.embedding << 1e20, 0, 1e20, 1;
  m.positional = Matrix::Zero(1, 2);
  m.positional(0, 0) = p0;
  Layer layer;
  layer.attention = Attention::kHardmax;
  layer.heads.push_back(Head{Matrix::Zero(2, 2), Matrix::Zero(2, 2), Vector::Zero(1)});
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 2);
  m.readout_weight(0, 0) = 1;
  m.readout_bias = Vector::Constant(1, -1e20);
  return m;
}

TEST(Rounding, DoublesThatCannotHoldTheModelAreNotBelieved) {
  const Transformer f = Ill(1.0), g = Ill(0.0);
  const auto x = MakeTokenSource({0, 1, 0}, "x");
  EXPECT_EQ(Evaluate(f, *x)(0), 0.0);  // what doubles say
  const CheckedOutput cf = EvaluateChecked(f, *x), cg = EvaluateChecked(g, *x);
  EXPECT_TRUE(cf.precise);
  EXPECT_EQ(cf.output(0), 1.0);
  EXPECT_EQ(cg.output(0), 0.0);
  EXPECT_LE(cf.error_bound, 1e-12);
  // The double bound itself says the double value may be off by far more than 1.
  const TypeCounts counts = CountTypes(*x, 2, 1, 0);
  EXPECT_GT(StatisticErrorBound(MakeOneLayerRounding(f, 3, 4), counts), 1.0);
  // threshold: "no disagreement" was claimed; the exact answer is T* = 1 with gap 1, pruned and
  // fully enumerated alike.
  for (bool prune : {true, false}) {
    ThresholdOptions o;
    o.epsilon = 0.5;
    o.max_length = 10;
    o.prune = prune;
    const ThresholdResult r = FindThreshold(f, g, o);
    ASSERT_TRUE(r.first_disagreement.has_value()) << prune;
    EXPECT_EQ(*r.first_disagreement, 1u);
    EXPECT_EQ(r.gap, 1.0);
    EXPECT_GT(r.statistics_precise, 0u);
    EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
  }
}

// Random one-layer models in every mode with a large offset C on coordinate 0 (read by neither
// attention nor MLP) cancelled by the readout's bias: the double evaluation loses log₁₀C digits.
// Against the 50-digit evaluator, ‖f̂ − f‖_∞ ≤ E whenever E is finite, for C from 1 to 10^20.
TEST(Rounding, TheBoundHoldsAgainstFiftyDigits) {
  boost::random::mt19937_64 engine(5);
  boost::random::uniform_int_distribution<int> exponent(0, 20), length(1, 60);
  int checked = 0, large = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    test::ModelShape shape;
    shape.seed = seed;
    shape.alphabet = 2 + static_cast<int>(seed % 3);
    shape.width = 2 + static_cast<int>(seed % 3);
    shape.period = 1 + static_cast<int>(seed % 2);
    shape.locality = static_cast<int>(seed % 2);
    shape.heads = 1 + static_cast<int>(seed % 2);
    shape.attention = static_cast<Attention>(seed % 3);
    shape.precision_bits = 2 + static_cast<int>(seed % 4);
    shape.bias_scaling = seed % 5 == 0 ? BiasScaling::kLog : BiasScaling::kNone;
    shape.mlp = seed % 2 == 0;
    Transformer m = test::MakeRandomModel(shape);
    const double C = std::pow(10.0, exponent(engine));
    for (int s = 0; s < m.alphabet; ++s) m.embedding(s, 0) += C;
    for (Head& h : m.layers[0].heads) {
      h.qk.row(0).setZero();
      h.qk.col(0).setZero();
    }
    if (m.layers[0].mlp) m.layers[0].mlp->in.col(0).setZero();
    m.readout_bias(0) -= m.readout_weight(0, 0) * C;
    std::vector<Token> x(static_cast<std::size_t>(length(engine)));
    for (std::size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<Token>((seed + k * k) % m.alphabet);
    const TypeCounts counts = CountTypes(x, m.alphabet, m.period, m.locality);
    const std::uint64_t terms = m.types() + m.locality + 1;
    const double bound = StatisticErrorBound(MakeOneLayerRounding(m, counts.length, terms), counts);
    const Vector fast = EvaluateOneLayer(m, counts);
    const std::vector<double> precise = ToDouble(EvaluatePreciseOneLayer(m, counts));
    if (!std::isfinite(bound)) continue;
    double error = 0.0;
    for (std::size_t k = 0; k < precise.size(); ++k)
      error = std::max(error, std::abs(fast(static_cast<Eigen::Index>(k)) - precise[k]));
    ASSERT_LE(error, bound) << "seed " << seed << " C " << C;
    ++checked;
    large += error > 1e-6;
    // The checked evaluation is within its own bound of 50 digits.
    const CheckedOutput c = EvaluateChecked(m, *MakeTokenSource(x, "x"));
    for (std::size_t k = 0; k < precise.size(); ++k)
      ASSERT_LE(std::abs(c.output(static_cast<Eigen::Index>(k)) - precise[k]),
                c.error_bound + 1e-9 * (1 + std::abs(precise[k])))
          << "seed " << seed;
  }
  EXPECT_GT(checked, 300);
  EXPECT_GT(large, 20);  // cases where doubles really lost the answer
  std::printf("bound checked on %d models; %d with a double error above 1e-6\n", checked, large);
}

}  // namespace
}  // namespace ltsim
