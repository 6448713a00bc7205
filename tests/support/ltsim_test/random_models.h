// Shared generators of random limit transformers and strings for the property tests (docs/design.md
// §8).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "ltsim/model/transformer.h"

namespace ltsim::test {

/// The shape of a random one-layer model; weights come from a seeded Boost.Random engine.
struct ModelShape {
  int alphabet = 2;
  int width = 3;
  int period = 1;
  int locality = 0;
  int heads = 1;
  int outputs = 1;
  Attention attention = Attention::kHardmax;
  BiasScaling bias_scaling = BiasScaling::kNone;
  int precision_bits = 0;
  bool mlp = false;
  /// Grid weights (multiples of 1/2 in [−1, 1]) make exact logit ties common, which
  /// exercises hardmax ties; otherwise weights are N(0, scale²).
  bool grid = false;
  double scale = 1.0;
  std::uint64_t seed = 0;
  /// 1 or 2 layers; the second layer has its own mode, scaling, bits, heads and MLP.
  int layers = 1;
  Attention attention2 = Attention::kSoftmax;
  BiasScaling bias_scaling2 = BiasScaling::kNone;
  int precision_bits2 = 0;
  int heads2 = 1;
  bool mlp2 = false;
};

/// Builds the model of a shape (deterministic in the shape, including its seed).
Transformer MakeRandomModel(const ModelShape& shape);

/// Shapes of every attention mode, Δ ∈ [1, 4], τ ∈ [0, 3], 1–3 heads, MLP on and off.
rc::Gen<ModelShape> GenShape();

/// Shapes in the hardmax regime of docs/theory.md §2.4: hardmax, or finite with p ≤ 3 bits on a
/// grid (so T_hard = 2^(p/γ) stays small); bias scaling none.
rc::Gen<ModelShape> GenHardmaxRegimeShape();

/// Two-layer shapes: every mode in either layer, Δ ∈ [1, 4], τ ∈ [0, 3], 1–3 heads a layer,
/// MLPs on and off.
rc::Gen<ModelShape> GenTwoLayerShape();

/// A shape for a second model sharing `alphabet` (pairs need one alphabet).
rc::Gen<ModelShape> WithAlphabet(rc::Gen<ModelShape> gen, int alphabet);

/// Random tokens of length in [min_length, max_length] over `alphabet`, drawn from a random
/// skewed distribution so that rare types and long runs both occur.
rc::Gen<std::vector<Token>> GenString(int alphabet, int min_length, int max_length);

}  // namespace ltsim::test
