// Differential properties of the streaming first layer and the two-layer evaluator against the
// reference.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// model.md's agreement: 1e-9 relative to the output's magnitude (1e-9 absolute near zero).
// The evaluators sum the same terms in different orders, so they differ by ~T·1e-16.
bool Close(const Vector& a, const Vector& b) {
  return SupDistance(a, b) <= 1e-9 * (1.0 + b.cwiseAbs().maxCoeff());
}

RC_GTEST_PROP(TwoLayerProperty, FastEqualsReferenceInEveryMode, ()) {
  const test::ModelShape shape = *test::GenTwoLayerShape();
  const Transformer model = test::MakeRandomModel(shape);
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, 300);
  RC_TAG(AttentionName(shape.attention), AttentionName(shape.attention2));
  RC_ASSERT(Close(EvaluateTwoLayer(model, *MakeTokenSource(x, "x")), EvaluateReference(model, x)));
}

// The first layer's output at every position, against the reference run of the first layer
// alone (a one-layer model whose readout is the identity).
RC_GTEST_PROP(TwoLayerProperty, FirstLayerStreamEqualsReferenceAtEveryPosition, ()) {
  Transformer model = test::MakeRandomModel(*test::GenShape());
  model.readout_weight = Matrix::Identity(model.width, model.width);
  model.readout_bias = Vector::Zero(model.width);
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, 120);
  FirstLayerStream stream(model);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Vector y = stream.Push(x[i]);
    const std::vector<Token> prefix(x.begin(), x.begin() + i + 1);
    RC_ASSERT(Close(y, EvaluateReference(model, prefix)));
  }
}

}  // namespace
}  // namespace ltsim
