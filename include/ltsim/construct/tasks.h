// The paper's experiment tasks as constructed one-layer limit transformers (docs/theory.md §6).
#pragma once

#include "ltsim/model/transformer.h"

namespace ltsim {

/// SimpleTask(ω): f*(x) = sin(ω·(c₀ − c₁)/(c₀ + c₁)) over the alphabet {0, 1}. One hardmax
/// layer with all logits equal (so attention is the uniform average; γ = ∞), no positional
/// information (Δ = 1, τ = 0), and an MLP that interpolates sin(ω·u) linearly on [−1, 1]
/// with knot spacing h = √(8·accuracy)/ω, so |f(x) − f*(x)| ≤ ω²h²/8 ≤ accuracy.
Transformer MakeSimpleTask(double omega, double accuracy);

/// ModPTask(p, k): the fraction of 1s among positions j ≡ k (mod p), alphabet {0, 1}, Δ = p,
/// τ = 0. One hardmax head whose logit is 1 on keys of residue k and 0 elsewhere (γ = 1), so
/// f(x) equals the target exactly (up to rounding) whenever T ≥ p (some position ≡ k exists;
/// for k = 0 that needs T ≥ p, otherwise T ≥ k). With `precision_bits` > 0 the layer is
/// `finite` with that many bits instead (T_hard = 2^p).
Transformer MakeModPTask(int p, int k, int precision_bits = 0);

}  // namespace ltsim
