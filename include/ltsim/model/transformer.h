// The in-memory limit transformer of docs/model.md §2: any depth, any number of heads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/io/names.h"

namespace ltsim {

/// How a layer turns logits into attention weights (docs/model.md §3).
enum class Attention { kSoftmax, kHardmax, kFinite };

/// β(i) multiplying the local bias: `none` gives 1, `log` gives ln i.
enum class BiasScaling { kNone, kLog };

/// One attention head: M = KᵀQ (`qk`), O = value·output (`ov`), τ-local bias φ[0..τ].
struct Head {
  Matrix qk;
  Matrix ov;
  Vector bias;
};

/// Optional ReLU MLP of a layer: y = u + B·ReLU(A u + b).
struct Mlp {
  Matrix in;       ///< A, m×d
  Vector in_bias;  ///< b, m
  Matrix out;      ///< B, d×m
};

/// One layer: its attention mode, bias scaling, heads and optional MLP.
struct Layer {
  Attention attention = Attention::kHardmax;
  BiasScaling bias_scaling = BiasScaling::kNone;
  int precision_bits = 0;  ///< p, only for Attention::kFinite (≥ 1 there, 0 elsewhere)
  std::vector<Head> heads;
  std::optional<Mlp> mlp;
};

/// A limit transformer: Δ-periodic positions, τ-local bias, readout at the last position.
struct Transformer {
  std::string name;
  int alphabet = 0;             ///< S
  int width = 0;                ///< d
  int period = 1;               ///< Δ
  int locality = 0;             ///< τ
  double tie_tolerance = 1e-9;  ///< θ of hardmax ties and of the logit margin
  Matrix embedding;             ///< E, S×d
  Matrix positional;            ///< P, Δ×d
  std::vector<Layer> layers;
  Matrix readout_weight;         ///< W, k×d
  Vector readout_bias;           ///< c, k
  std::string meta_json = "{}";  ///< free-form `meta` object, kept verbatim as JSON text

  int outputs() const { return static_cast<int>(readout_weight.rows()); }
  /// D = S·Δ, the number of far-key types (token, residue).
  int types() const { return alphabet * period; }
};

/// The names of the attention modes in model files, campaign files and on the command line.
inline constexpr io::NameTable<Attention, 3> kAttentionNames{"attention mode",
                                                             {{{Attention::kSoftmax, "softmax"},
                                                               {Attention::kHardmax, "hardmax"},
                                                               {Attention::kFinite, "finite"}}}};
/// The names of the bias scalings in model files.
inline constexpr io::NameTable<BiasScaling, 2> kBiasScalingNames{
    "bias scaling", {{{BiasScaling::kNone, "none"}, {BiasScaling::kLog, "log"}}}};

/// Name of an attention mode as written in model files ("softmax", "hardmax", "finite").
inline const char* AttentionName(Attention attention) { return kAttentionNames.Name(attention); }
/// Name of a bias scaling as written in model files ("none", "log").
inline const char* BiasScalingName(BiasScaling scaling) { return kBiasScalingNames.Name(scaling); }

/// Checks every shape and range rule (docs/model.md §2, docs/formats.md §1); throws InputError
/// naming `source` and the key.
void ValidateTransformer(const Transformer& model, const std::string& source);

/// True when `a` and `b` compute the same function: equal alphabet, width, Δ, τ, θ, layer
/// modes, precisions, bias scalings, head and MLP shapes, and every weight equal as a number
/// (0.0 == -0.0). Names and `meta` are ignored. Equal parameters give equal outputs on every
/// string, so ‖a(x) − b(x)‖ = 0 at every length (docs/theory.md §12.10).
bool SameFunction(const Transformer& a, const Transformer& b);

/// Calls visit(array) on every weight array of `model` (Matrix or Vector, by reference) in one
/// fixed order: E, P; per layer each head's qk, ov, bias, then the MLP's in, in_bias, out; then
/// the readout W, c. Seeded draws that walk the weights follow this order.
template <class Model, class Visit>
void ForEachWeightArray(Model& model, Visit&& visit) {
  visit(model.embedding);
  visit(model.positional);
  for (auto& layer : model.layers) {
    for (auto& head : layer.heads) {
      visit(head.qk);
      visit(head.ov);
      visit(head.bias);
    }
    if (layer.mlp) {
      visit(layer.mlp->in);
      visit(layer.mlp->in_bias);
      visit(layer.mlp->out);
    }
  }
  visit(model.readout_weight);
  visit(model.readout_bias);
}

}  // namespace ltsim
