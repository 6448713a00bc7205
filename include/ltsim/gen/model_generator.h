// Random limit transformers and model pairs for fuzzing campaigns (Boost.Random engines and
// distributions).
#pragma once

#include <boost/random/mersenne_twister.hpp>
#include <string>
#include <utility>

#include "ltsim/io/names.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// The engine of every fuzzing stream; seed it with StreamSeed(master, name, index).
using FuzzEngine = boost::random::mt19937_64;

/// The shape and weight law of a generated model.
struct ModelSpec {
  int layers = 1;  ///< 1 or 2
  int alphabet = 2;
  int width = 4;
  int period = 1;
  int locality = 0;
  int heads = 1;                                  ///< heads in every layer
  Attention attention = Attention::kHardmax;      ///< every layer's mode
  BiasScaling bias_scaling = BiasScaling::kNone;  ///< first layer (later layers: none)
  int precision_bits = 8;                         ///< for `finite`
  bool mlp = false;
  int outputs = 1;
  /// Weights: N(0, scale²) when grid == 0; otherwise multiples of `grid` in [−scale, scale],
  /// grid = 2^−k (k ≥ 0). Then every logit is a multiple of grid³, so γ(f) ≥ grid³ (or ∞),
  /// T_hard ≤ 2^(p/grid³) and γ_pos ≥ grid (proof in model_generator.cpp).
  double scale = 1.0;
  double grid = 0.0;
  /// θ of the models (docs/model.md §3), ≥ 0 and finite.
  double tie_tolerance = 1e-9;
};

/// A model of the spec, a pure function of the spec and the engine's state.
Transformer GenerateModel(const ModelSpec& spec, FuzzEngine& engine);

/// How g relates to f in a generated pair (docs/theory.md §1: f the target, g the learned model).
enum class PairKind {
  kIndependent,  ///< f and g drawn independently from the same spec
  kPerturbed,    ///< g = f + δ·N(0, 1) on every weight (the realistic learned-model case)
  kModeSwap,     ///< g = f with another attention mode (finite ↔ hardmax ↔ softmax)
  kPrunedHead,   ///< g = f without one head of the first layer (f needs ≥ 2 heads)
};

/// The names of the pair kinds in campaign files and on the command line.
inline constexpr io::NameTable<PairKind, 4> kPairKindNames{
    "pair kind",
    {{{PairKind::kIndependent, "independent"},
      {PairKind::kPerturbed, "perturbed"},
      {PairKind::kModeSwap, "mode-swap"},
      {PairKind::kPrunedHead, "pruned-head"}}}};

/// "independent", "perturbed", "mode-swap", "pruned-head".
const char* PairKindName(PairKind kind);
/// Inverse of PairKindName; InputError naming the valid names.
PairKind ParsePairKind(const std::string& name);

/// The pair parameters: δ for kPerturbed, the other mode for kModeSwap.
struct PairSpec {
  PairKind kind = PairKind::kIndependent;
  double delta = 0.01;
  Attention other_mode = Attention::kHardmax;
};

/// (f, g) of the pair kind; both validated.
std::pair<Transformer, Transformer> GeneratePair(const ModelSpec& spec, const PairSpec& pair,
                                                 FuzzEngine& engine);

}  // namespace ltsim
