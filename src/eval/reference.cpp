// The literal forward pass of docs/model.md for any depth; slow on purpose, it is the oracle.
#include "ltsim/eval/reference.h"

#include <algorithm>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// Attention output Σ_j α_ij y_j of one head at 0-based query index i.
Vector HeadOutput(const Transformer& model, const Layer& layer, const Head& head,
                  const std::vector<Vector>& y, std::size_t i) {
  const double position = static_cast<double>(i + 1);
  const double beta = BiasScale(layer.bias_scaling, position);
  const Vector mq = head.qk * y[i];
  std::vector<double> logits(i + 1);
  for (std::size_t j = 0; j <= i; ++j) {
    const std::size_t t = i - j;
    logits[j] = Logit(y[j], mq, head, beta,
                      t <= static_cast<std::size_t>(model.locality) ? static_cast<int>(t) : -1);
  }
  const double a_max = *std::max_element(logits.begin(), logits.end());
  Vector acc = Vector::Zero(model.width);
  double total = 0.0;
  for (std::size_t j = 0; j <= i; ++j) {
    const double w = AttentionWeight(layer, model.tie_tolerance, logits[j], a_max, position);
    if (w == 0.0) continue;
    acc += w * y[j];
    total += w;
  }
  LTSIM_CHECK(total > 0.0);  // the maximal key always has weight 1
  return acc / total;
}

// Output of one layer at 0-based position i.
Vector LayerOutput(const Transformer& model, const Layer& layer, const std::vector<Vector>& y,
                   std::size_t i) {
  Vector u = y[i];
  for (const Head& head : layer.heads) u += head.ov * HeadOutput(model, layer, head, y, i);
  return ApplyMlp(layer, u);
}

}  // namespace

Vector EvaluateReference(const Transformer& model, const std::vector<Token>& x) {
  LTSIM_CHECK(!x.empty());
  std::vector<Vector> y(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) {
    LTSIM_CHECK(x[j] < model.alphabet);
    y[j] = InputVector(model, x[j], static_cast<int>((j + 1) % model.period));
  }
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const bool last = l + 1 == model.layers.size();
    std::vector<Vector> next(x.size());
    // The last layer is read out only at position T.
    for (std::size_t i = last ? x.size() - 1 : 0; i < x.size(); ++i)
      next[i] = LayerOutput(model, model.layers[l], y, i);
    y = std::move(next);
  }
  return model.readout_weight * y.back() + model.readout_bias;
}

}  // namespace ltsim
