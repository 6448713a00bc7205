// Fast exact evaluation of one-layer limit transformers from type counts: O(D·H·d) after one pass.
#pragma once

#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// The attention distribution of one head at the last position, grouped by what the model
/// can distinguish: far[κ] is the total weight on far keys of type κ (count × per-key
/// weight), suffix[t] the weight on the key t positions before the query (t = 0: itself).
/// far and suffix together sum to 1.
struct HeadAttention {
  std::vector<double> far;
  std::vector<double> suffix;
};

/// Attention of every head of the first layer at position T, exactly as docs/model.md §3
/// specifies for the layer's mode (softmax, hardmax with tolerance θ, finite with p bits).
/// `counts` must have the model's alphabet, period and locality.
std::vector<HeadAttention> OneLayerAttention(const Transformer& model, const TypeCounts& counts);

/// y¹_T, the first layer's output (attention, residual, MLP) at the last position, for a
/// model of any depth.
Vector FirstLayerOutput(const Transformer& model, const TypeCounts& counts);

/// f(x) for a one-layer model from x's type counts (bit-for-bit the same logits as the
/// reference evaluator; sums differ only by floating-point association).
Vector EvaluateOneLayer(const Transformer& model, const TypeCounts& counts);

/// max over heads of ‖α_h(x) − α_h(z)‖₁ over the model's slots (far types and suffix
/// offsets): the η of docs/theory.md §2.3, so that ‖f(x) − f(z)‖_∞ ≤ L(f)·η.
double AttentionDistance(const Transformer& model, const TypeCounts& x, const TypeCounts& z);

}  // namespace ltsim
