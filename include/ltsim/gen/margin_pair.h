// Model pairs with a controlled logit margin γ (docs/model.md §4.2, docs/theory.md §2.1: the first
// term 2^(p/γ) of Theorem 4.1).
#pragma once

#include <utility>

#include "ltsim/gen/model_generator.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// Rescales the first layer's logits of `model` so that γ(model) = margin: every head's M_h and
/// φ_h are multiplied by c = margin / γ₀ (γ₀ = LogitMargin before). Every logit a = kᵀM q + φ[t]
/// is then c·a, so every gap of a logit set is c times the old one, exact ties stay exact, and
/// the smallest positive gap becomes c·γ₀ = margin (to rounding, ~1e-15 relative). Returns false
/// (model unchanged) when γ₀ is ∞ (no logit set has a gap) or c is not finite. Hardmax output is
/// invariant under this scaling except for near-ties within θ (below); a `finite` layer's T_hard
/// becomes 2^(p/margin). Repeated (at most 4 passes) until |γ − margin| ≤ 1e-12·margin, since a
/// near-tie within θ can be lifted above θ by a large c.
bool SetLogitMargin(Transformer& model, double margin);

/// A pair of the spec and pair kind (GeneratePair) with γ(f) = γ(g) = margin, each model
/// rescaled by SetLogitMargin; a pair with a gapless model is redrawn from the same engine (at
/// most 16 draws; InputError after that). margin ≤ 0: GeneratePair unchanged.
std::pair<Transformer, Transformer> GenerateMarginPair(const ModelSpec& spec, const PairSpec& pair,
                                                       double margin, FuzzEngine& engine);

}  // namespace ltsim
