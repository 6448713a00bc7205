// Every weight of a model as one flat list, for tests that compare or bound weights.
#pragma once

#include <vector>

#include "ltsim/model/transformer.h"

namespace ltsim::test {

/// Every weight in a fixed order: E, P, each layer's heads (qk, ov, bias) and MLP, readout.
inline std::vector<double> AllWeights(const Transformer& model) {
  std::vector<double> w;
  auto add = [&w](const auto& m) { w.insert(w.end(), m.data(), m.data() + m.size()); };
  add(model.embedding);
  add(model.positional);
  for (const Layer& layer : model.layers) {
    for (const Head& head : layer.heads) {
      add(head.qk);
      add(head.ov);
      add(head.bias);
    }
    if (layer.mlp) {
      add(layer.mlp->in);
      add(layer.mlp->in_bias);
      add(layer.mlp->out);
    }
  }
  add(model.readout_weight);
  add(model.readout_bias);
  return w;
}

}  // namespace ltsim::test
