// Properties of what doubles can hold (docs/theory.md §8.7) and of finite attention against its
// hardmax twin under a large tie tolerance θ (§2.6), each against an independent oracle: the
// 50-digit evaluator, brute force over every string, and the closed-form tie bound.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/rounding.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// A random one-layer model whose coordinate 0 carries an offset C = 10^k (k in [0, 20]) that
// neither attention logits, values nor the MLP read, cancelled by the readout's bias: the exact
// outputs are of order 1, and the double evaluation loses about k digits of them.
Transformer IllConditioned(const test::ModelShape& shape, double C) {
  Transformer m = test::MakeRandomModel(shape);
  for (int s = 0; s < m.alphabet; ++s) m.embedding(s, 0) += C;
  for (Head& h : m.layers[0].heads) {
    h.qk.row(0).setZero();
    h.qk.col(0).setZero();
    h.ov.col(0).setZero();  // no head carries C into another coordinate
  }
  if (m.layers[0].mlp) m.layers[0].mlp->in.col(0).setZero();
  for (Eigen::Index o = 0; o < m.readout_bias.size(); ++o)
    m.readout_bias(o) -= m.readout_weight(o, 0) * C;
  return m;
}

rc::Gen<test::ModelShape> OneLayerShape() {
  return rc::gen::map(test::GenShape(), [](test::ModelShape s) {
    s.layers = 1;
    s.width = std::max(s.width, 2);
    return s;
  });
}

// ‖f̂(x) − f(x)‖_∞ ≤ E (OutputBound, decisions certain) against the 50-digit evaluator, and the
// checked evaluation (`ltsim eval`) within its own stated bound, for offsets up to 10^20.
RC_GTEST_PROP(RoundingProperty, TheBoundHoldsAgainstFiftyDigits, ()) {
  const test::ModelShape shape = *OneLayerShape();
  const double C = std::pow(10.0, *rc::gen::inRange(0, 21));
  const Transformer m = IllConditioned(shape, C);
  const std::vector<Token> x = *test::GenString(m.alphabet, 1, 200);
  const TypeCounts counts = CountTypes(x, m.alphabet, m.period, m.locality);
  const std::uint64_t terms = m.types() + m.locality + 1;
  const double bound = StatisticErrorBound(MakeOneLayerRounding(m, counts.length, terms), counts);
  const std::vector<double> exact = ToDouble(EvaluatePreciseOneLayer(m, counts));
  const Vector fast = EvaluateOneLayer(m, counts);
  RC_TAG(std::isfinite(bound) ? "bounded" : "uncertain decision",
         C >= 1e8 ? "C >= 1e8" : "C < 1e8");
  if (std::isfinite(bound))
    for (std::size_t k = 0; k < exact.size(); ++k)
      RC_ASSERT(std::abs(fast(static_cast<Eigen::Index>(k)) - exact[k]) <= bound);
  const CheckedOutput checked = EvaluateChecked(m, *MakeTokenSource(x, "x"));
  // The 50-digit outputs rounded to doubles carry their own half ulp: 1e-15 relative covers it.
  for (std::size_t k = 0; k < exact.size(); ++k)
    RC_ASSERT(std::abs(checked.output(static_cast<Eigen::Index>(k)) - exact[k]) <=
              checked.error_bound + 1e-15 * (1 + std::abs(exact[k])));
}

// `threshold` on an ill-conditioned pair (g shifts coordinate 0 of every input vector by a δ
// that doubles cannot see next to C) against brute force: every string of every length ≤ 5 (4
// for three tokens),
// evaluated in 50 digits, disagreeing when the 50-digit gap exceeds ε + 10⁻⁹·max(1, ‖f‖, ‖g‖).
// Both the pruned and the full search must give the brute force's first length.
RC_GTEST_PROP(RoundingProperty, ThresholdAgreesWithFiftyDigitBruteForce, ()) {
  test::ModelShape shape = *OneLayerShape();
  shape.alphabet = *rc::gen::inRange(2, 4);
  const double C = std::pow(10.0, *rc::gen::inRange(0, 21));
  const Transformer f = IllConditioned(shape, C);
  Transformer g = f;
  const double shift = *rc::gen::element(0.0, 0.5, 1.0, 2.0);
  g.positional.col(0).array() += shift;
  const int N = f.alphabet == 2 ? 5 : 4;
  // Brute force: the first length with a disagreeing string, and the gaps seen.
  std::vector<std::vector<double>> gaps(N + 1);
  std::optional<std::uint64_t> expected;
  const double eps = *rc::gen::element(0.05, 0.2, 0.5, 1.0);
  for (int T = 1; T <= N; ++T) {
    std::vector<Token> x(static_cast<std::size_t>(T), 0);
    while (true) {
      const auto source = MakeTokenSource(x, "x");
      const PreciseVector a = EvaluatePrecise(f, *source), b = EvaluatePrecise(g, *source);
      PreciseReal scale = 1;
      for (const PreciseVector* v : {&a, &b})
        for (const PreciseReal& y : *v) scale = std::max(scale, PreciseReal(abs(y)));
      const PreciseReal gap = PreciseSupDistance(a, b);
      const PreciseReal boundary = PreciseReal(eps) + PreciseReal(kThresholdGapTolerance) * scale;
      // A gap within 1e-12 of the boundary is a tie no search is asked to break.
      RC_PRE(abs(gap - boundary) > PreciseReal(1e-12));
      if (gap > boundary && !expected) expected = T;
      std::size_t k = 0;
      while (k < x.size() && ++x[k] == f.alphabet) x[k++] = 0;
      if (k == x.size()) break;
    }
    if (expected) break;
  }
  RC_TAG(expected ? "disagrees" : "agrees", C >= 1e8 ? "C >= 1e8" : "C < 1e8");
  for (bool prune : {true, false}) {
    ThresholdOptions o;
    o.epsilon = eps;
    o.max_length = N;
    o.prune = prune;
    const ThresholdResult r = FindThreshold(f, g, o);
    RC_ASSERT(r.first_disagreement == expected);
    if (expected) RC_ASSERT(r.recheck.status == RecheckStatus::kAgrees);
  }
}

// With θ up to 1 (the fuzzer's `fuzz/theta` range) a `finite` model in its window
// T_hard ≤ T < T_split is within L(f)·2·tanh(ϑ ln T/4) of its hardmax twin (§2.6), outputs
// compared with the 1e-9 slack of §8.5; outside the window no bound is claimed.
RC_GTEST_PROP(RoundingProperty, FiniteIsWithinTheTieBoundOfItsHardmaxTwin, ()) {
  test::ModelShape shape = *OneLayerShape();
  shape.attention = Attention::kFinite;
  shape.bias_scaling = BiasScaling::kNone;
  shape.precision_bits = *rc::gen::inRange(1, 4);
  Transformer finite = test::MakeRandomModel(shape);
  finite.tie_tolerance = std::pow(10.0, -2.0 * *rc::gen::inRange(0, 101) / 100.0);
  Transformer twin = finite;
  twin.layers[0].attention = Attention::kHardmax;
  twin.layers[0].precision_bits = 0;
  const double log2_hard = Log2HardmaxLength(finite), log2_split = Log2SplitLength(finite);
  RC_PRE(std::isfinite(log2_hard) && log2_hard <= 12.0 && log2_hard < log2_split);
  const double hi = std::min({log2_split, 13.0});
  const double T =
      std::floor(std::exp2(log2_hard + (hi - log2_hard) * *rc::gen::inRange(0, 101) / 100.0));
  const double distance = FiniteHardmaxDistance(finite, T);
  RC_PRE(std::isfinite(distance) && T >= 1.0);
  RC_TAG(NearTieSpread(finite) > 0 ? "near ties" : "no near ties");
  const std::vector<Token> x =
      *test::GenString(finite.alphabet, static_cast<int>(T), static_cast<int>(T));
  const Vector a =
      EvaluateOneLayer(finite, CountTypes(x, finite.alphabet, finite.period, finite.locality));
  const Vector b = EvaluateOneLayer(twin, CountTypes(x, twin.alphabet, twin.period, twin.locality));
  RC_ASSERT(SupDistance(a, b) <=
            LipschitzConstant(finite) * distance + 1e-9 * (1 + a.cwiseAbs().maxCoeff()));
}

}  // namespace
}  // namespace ltsim
