// The paper's bounds (docs/theory.md §2–§4) and user bound expressions over named model constants.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// Named constants a bound is a function of: L, Delta, S, tau, eps, gamma, p, C, gamma_pos,
/// alpha0, G, D, H, n, T (the quantities of docs/model.md §4, the number H of distinct
/// first-layer heads, plus the run's ε, n, T and the prior's α₀).
using ConstantMap = std::map<std::string, double>;

/// One bound of the registry: N (or a rate) as a function of the constants.
struct Bound {
  std::string name;     ///< "thm4.1-length"
  std::string formula;  ///< human-readable, e.g. "L^2 Delta^7 S^6 max(tau, 1)^2 / eps^2"
  std::string source;   ///< "[paper]" or "[ours]"
  std::string note;     ///< the O(·) constants we chose, and where the bound comes from
  std::function<double(const ConstantMap&)> value;
};

/// The explicit registry (docs/design.md §6), in the paper's order:
///   thm4.1-hardmax = 2^(p/γ)                          (docs/theory.md §2.1, first term)
///   thm4.1-length  = L²Δ⁷S⁶·max(τ, 1)²/ε²             (docs/theory.md §2.1, second term;
///                    O-constant 1; τ = 0 counts as a one-token window, so it never vanishes)
///   thm4.2         = ε^(−2−2/α₀)                       (docs/theory.md §3; polynomial factors 1)
///   thm5.2         = (C/ε)^max(1/γ_pos, 3)             (docs/theory.md §4.2)
///   lemma5.3       = (G + L)(τ + 1)/n^(1/3)            (docs/theory.md §4.4; a rate, not a length)
///   frequency-length = Δ·(D·(Θ·3^(H/3)·(24DL/ε)^(H−1) + 1) + 1) + τ + 1,
///                    Θ = 6(D + τ + 1)L/ε, D = SΔ        (docs/theory.md §2.4, ours: proven)
///   two-layer-length = the smallest n with B(n, ℓ) ≤ ε  (docs/theory.md §4.8, ours: proven for
///                    two-layer pairs of its class; tl_* constants, bounds/two_layer_length.h)
const std::vector<Bound>& BoundRegistry();

/// The registry entry `name`; InputError naming the known bounds otherwise.
const Bound& FindBound(const std::string& name);

/// Constants of one model (docs/model.md §4): L = L(f), Delta = Δ, S = |Σ|, tau = τ,
/// gamma = γ(f), p = the first layer's precision bits (0 unless `finite`: hardmax from the
/// start), C = C(f), gamma_pos = γ_pos(f), D = SΔ, H = the first layer's distinct heads; for
/// two-layer models also the tl_* constants of docs/theory.md §4.8 (NaN outside its class). Run
/// constants (eps, n, T, alpha0, G) are the caller's.
ConstantMap ModelConstants(const Transformer& model);

/// Constants of a pair (f, g): max of L, C and p; min of γ and γ_pos; max of S and τ;
/// Δ = lcm(Δ_f, Δ_g); D = SΔ (docs/theory.md §7.5: one z serves both models); H = H_f + H_g.
ConstantMap PairConstants(const ConstantMap& f, const ConstantMap& g);

/// The same for two models, with H their distinct first-layer heads: a head of g with the same
/// logits as one of f has the same support on every x, so one z constraint serves both.
ConstantMap PairConstants(const Transformer& f, const Transformer& g);

/// Heads of the models' first layers counted once per distinct logit function (same model
/// inputs, mode, M and φ): the H of frequency-length (docs/theory.md §2.4).
int DistinctHeads(const std::vector<const Transformer*>& models);

/// Evaluates a user bound expression (muParser syntax: + − * / ^, sqrt, log, exp, min,
/// max, …) over the named constants. InputError (one line) for a syntax error or an unknown
/// variable, naming it and the expression.
double EvaluateBoundExpression(const std::string& expression, const ConstantMap& constants);

}  // namespace ltsim
