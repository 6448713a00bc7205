// Small one-layer pairs whose first disagreement T* is known in closed form, used as the lower
// side of `ltsim tightness` (docs/tightness.md §2 derives each T*).
#pragma once

#include <cstdint>
#include <string>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// A pair of one-layer models and what it is.
struct FamilyPair {
  Transformer f, g;
  std::string family;      ///< "bump" or "margin"
  std::string semantics;   ///< the semantic assumptions its T* relies on (docs/tightness.md §2)
  double predicted = 0.0;  ///< the closed-form T* (docs/tightness.md §2), 0 when not derived
};

/// The bump pair: one hardmax head that attends to the keys at positions ≡ 0 (mod Δ) (all keys
/// when Δ = 1; logit +1 on residue 0, zero biases over the τ+1 suffix), copies the share μ₁ of
/// token 1 among them; f = μ₁, g = μ₁ + h·tri(μ₁), tri the triangle of half-width w = 2ε/h
/// centred at c = w·(1 + offset), offset ∈ [0, 1). |f − g| > ε ⇔ |μ₁ − c| < ε/h, first
/// reachable with one token 1 among the ⌊T/Δ⌋ attended keys: T* ≈ Δ/(c + ε/h) ∝ Δ·h/ε.
/// InputError for alphabet < 2, period < 1, locality < 0, slope ≤ 0, ε ∉ (0, 1) or a bump
/// that does not fit in [0, 1].
FamilyPair MakeBumpPair(int alphabet, int period, int locality, double slope, double eps,
                        double offset);

/// The margin pair: f and g use `finite` p-bit attention; one head gives token 0 logit 0 and
/// token 1 logit −γ (f) or −γ(1 + η) (g), and both read the attention share of token 1.
/// Below T_hard(g) = 2^(p/(γ(1+η))) both weights survive and differ by at most a factor
/// T^(γη); from T_hard(g) on g drops token 1 while f keeps it (weight ≈ 2^(−p)), so with
/// one 0 and T − 1 ones the gap is ≥ 1/2 once γ ≤ 0.8: T* = ⌈2^(p/(γ(1+η)))⌉ for ε < 1/2.
/// InputError for γ ∉ (0, 0.8], bits ∉ [1, 30], η ∉ (0, 0.1].
FamilyPair MakeMarginPair(double margin, int bits, double eta);

}  // namespace ltsim
