// Differential properties: the fast one-layer evaluator against the reference forward pass.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// Relative agreement demanded by docs/model.md §3: 1e-9 of the output's magnitude (plus 1e-9
// absolute near zero). The two evaluators compute bit-identical logits; only the order of
// summation of the attention average differs, which costs ~T·1e-16.
void ExpectClose(const Vector& fast, const Vector& reference) {
  const double scale = 1.0 + reference.cwiseAbs().maxCoeff();
  RC_ASSERT(SupDistance(fast, reference) <= 1e-9 * scale);
}

RC_GTEST_PROP(OneLayerProperty, FastEqualsReferenceInEveryMode, ()) {
  const test::ModelShape shape = *test::GenShape();
  const Transformer model = test::MakeRandomModel(shape);
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, 300);
  const TypeCounts counts = CountTypes(x, model.alphabet, model.period, model.locality);
  RC_TAG(AttentionName(shape.attention), x.size() > 100 ? "T > 100" : "T <= 100");
  ExpectClose(EvaluateOneLayer(model, counts), EvaluateReference(model, x));
}

// The strings are shorter than τ+1 here, so every key is a suffix key.
RC_GTEST_PROP(OneLayerProperty, FastEqualsReferenceOnStringsShorterThanTheSuffix, ()) {
  const test::ModelShape shape = *test::GenShape();
  const Transformer model = test::MakeRandomModel(shape);
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, model.locality + 1);
  ExpectClose(EvaluateOneLayer(model, CountTypes(x, model.alphabet, model.period, model.locality)),
              EvaluateReference(model, x));
}

// docs/model.md §4.3: once i ≥ T_hard = 2^(p/γ), `finite` equals `hardmax` (with bias_scaling none;
// under `log` scaling the logits at i are not the set 𝒜 that γ is defined on). Grid weights
// keep γ ≥ 1/8 so T_hard ≤ 2^16 for p ≤ 2.
RC_GTEST_PROP(OneLayerProperty, FiniteEqualsHardmaxPastTheHardmaxLength, ()) {
  test::ModelShape shape = *test::GenShape();
  shape.attention = Attention::kFinite;
  shape.bias_scaling = BiasScaling::kNone;
  shape.grid = true;
  shape.precision_bits = *rc::gen::inRange(1, 3);
  const Transformer finite = test::MakeRandomModel(shape);
  shape.attention = Attention::kHardmax;
  const Transformer hardmax = test::MakeRandomModel(shape);
  const double t_hard = HardmaxLength(finite);
  RC_PRE(t_hard <= 70000.0);
  const int extra = *rc::gen::inRange(0, 2000);
  const std::vector<Token> x =
      *test::GenString(finite.alphabet, static_cast<int>(std::ceil(t_hard)) + extra,
                       static_cast<int>(std::ceil(t_hard)) + extra);
  const TypeCounts counts = CountTypes(x, finite.alphabet, finite.period, finite.locality);
  ExpectClose(EvaluateOneLayer(finite, counts), EvaluateOneLayer(hardmax, counts));
}

// The streaming counts of a source equal the counts of the same tokens in memory, for
// every chunk kind (words from text, runs, bytes).
RC_GTEST_PROP(OneLayerProperty, EvaluateOnSourcesMatchesInMemory, ()) {
  const Transformer model = test::MakeRandomModel(*test::GenShape());
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, 2000);
  const Vector expected =
      EvaluateOneLayer(model, CountTypes(x, model.alphabet, model.period, model.locality));
  RC_ASSERT(Evaluate(model, *MakeTokenSource(x, "x")) == expected);
  RC_ASSERT(Evaluate(model, *MakeRunSource(ToRuns(x), "x")) == expected);
  std::vector<std::uint8_t> bytes(x.begin(), x.end());
  RC_ASSERT(Evaluate(model, *MakeByteSource(bytes, "x")) == expected);
}

}  // namespace
}  // namespace ltsim
