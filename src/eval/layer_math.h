// The per-key attention rule and the MLP of docs/model.md §3, shared by every evaluator.
#pragma once

#include <cmath>

#include "ltsim/model/finite_rounding.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// β(i) of the bias: 1 for `none`, ln i for `log` (docs/model.md §3).
inline double BiasScale(BiasScaling scaling, double i) {
  return scaling == BiasScaling::kLog ? std::log(i) : 1.0;
}

/// Unnormalised weight of a key with logit `a` when the largest logit is `a_max` at query
/// position i. Softmax: exp(a − a*). Hardmax: 1 if a ≥ a* − θ else 0. Finite (p bits):
/// w = i^(a − a*) = 2^(log₂ i·(a − a*)), set to 0 when w ≤ 2^(−p) (decided exactly). Both
/// evaluators call this with bit-identical arguments, so ties and the rounding threshold fall the
/// same way in each.
inline double AttentionWeight(const Layer& layer, double theta, double a, double a_max, double i) {
  switch (layer.attention) {
    case Attention::kSoftmax:
      return std::exp(a - a_max);
    case Attention::kHardmax:
      return a >= a_max - theta ? 1.0 : 0.0;
    case Attention::kFinite:
      // Dropped exactly when (a* − a)·ln i ≥ p·ln 2 for these two doubles, not when their
      // rounded product reaches p (docs/theory.md §8.6): every evaluator decides it the same way.
      return std::exp2(FiniteLog2Weight(a, a_max, i, layer.precision_bits));
  }
  return 0.0;
}

/// Logit of a key y_j for a query whose M·y_i is `mq`, with the local bias term when the
/// key is t ≤ τ positions back (pass t < 0 for a far key).
inline double Logit(const Vector& key, const Vector& mq, const Head& head, double beta, int t) {
  double a = key.dot(mq);
  if (t >= 0) a += beta * head.bias[t];
  return a;
}

/// y = u + B·ReLU(A u + b), or u when the layer has no MLP.
inline Vector ApplyMlp(const Layer& layer, const Vector& u) {
  if (!layer.mlp) return u;
  const Mlp& mlp = *layer.mlp;
  return u + mlp.out * (mlp.in * u + mlp.in_bias).cwiseMax(0.0);
}

/// y⁰ = E[s] + P[r], the input vector of a key or query of type (s, r).
inline Vector InputVector(const Transformer& model, int s, int r) {
  return model.embedding.row(s).transpose() + model.positional.row(r).transpose();
}

}  // namespace ltsim
