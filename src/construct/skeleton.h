// The zero model every hand-built construction starts from (private to construct/).
#pragma once

#include "ltsim/model/transformer.h"

namespace ltsim::construct {

/// One layer of `heads` zero heads (τ = 0: one query-bias entry each), zero embedding,
/// positional table and one zero readout row; the builder then sets the entries it needs.
inline Transformer Skeleton(int alphabet, int width, int period, Attention attention,
                            int heads = 1) {
  Transformer model;
  model.alphabet = alphabet;
  model.width = width;
  model.period = period;
  model.locality = 0;
  model.embedding = Matrix::Zero(alphabet, width);
  model.positional = Matrix::Zero(period, width);
  Layer layer;
  layer.attention = attention;
  for (int h = 0; h < heads; ++h)
    layer.heads.push_back(
        {Matrix::Zero(width, width), Matrix::Zero(width, width), Vector::Zero(1)});
  model.layers.push_back(layer);
  model.readout_weight = Matrix::Zero(1, width);
  model.readout_bias = Vector::Zero(1);
  return model;
}

}  // namespace ltsim::construct
