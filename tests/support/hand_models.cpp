// Small models whose outputs are derived by hand (ltsim_test/hand_models.h).
#include "ltsim_test/hand_models.h"

namespace ltsim::test {

Transformer ShareOfOnes(Attention attention, double one_logit, int bits, int locality) {
  Transformer m;
  m.name = "share-of-ones";
  m.alphabet = 2;
  m.width = 3;
  m.locality = locality;
  m.embedding = Matrix::Zero(2, 3);
  m.embedding(0, 0) = m.embedding(1, 1) = 1.0;
  m.positional = Matrix::Zero(1, 3);
  Head head{Matrix::Zero(3, 3), Matrix::Zero(3, 3), Vector::Zero(locality + 1)};
  head.qk(1, 0) = head.qk(1, 1) = one_logit;
  head.ov(2, 1) = 1.0;
  Layer layer;
  layer.attention = attention;
  layer.precision_bits = bits;
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 3);
  m.readout_weight(0, 2) = 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "share");
  return m;
}

Transformer Bump(double c, double w, double h) {
  Transformer m = ShareOfOnes(Attention::kHardmax, 0.0);
  Mlp mlp{Matrix::Zero(3, 3), Vector(3), Matrix::Zero(3, 3)};
  for (int i = 0; i < 3; ++i) mlp.in(i, 2) = 1.0;
  mlp.in_bias << -(c - w), -c, -(c + w);
  mlp.out(2, 0) = h / w;
  mlp.out(2, 1) = -2 * h / w;
  mlp.out(2, 2) = h / w;
  m.layers[0].mlp = mlp;
  ValidateTransformer(m, "bump");
  return m;
}

}  // namespace ltsim::test
