// Parametric families of one- and two-layer pairs with a closed-form first disagreement T*
// (docs/families.md): certified lower bounds on the training length N of Theorem 4.1, and the
// pairs of `ltsim tightness` (docs/tightness.md §2). One file per family in
// src/construct/families/, one registry that `construct family` and `tightness` look them up in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// One numeric parameter of a family.
struct FamilyParameter {
  std::string name;  ///< as a command-line option: `--NAME value`
  double default_value = 0.0;
  double min = 0.0, max = 0.0;  ///< the range, checked before anything is built
  bool integer = false;
  std::string help;
  bool min_open = false, max_open = false;  ///< an end of the range that is excluded
};

/// The range of `p` as the registry checks it, e.g. "[1e-09, 1)".
std::string RangeText(const FamilyParameter& p);

/// The values of a family's parameters, by name.
using FamilyValues = std::map<std::string, double>;

/// A built member: two ordinary models (both with `meta` recording the family, its parameters,
/// ε and the closed-form T*) and the closed form's numbers.
struct FamilyMember {
  std::string family;   ///< the family's name (a tightness pair: the label its rows print)
  FamilyValues values;  ///< every parameter, defaults filled in
  Transformer f, g;
  double eps = 0.0;  ///< the ε the closed form is stated for
  /// T*(f, g, ε) from the closed form: the smallest length with a string where
  /// ‖f(x) − g(x)‖_∞ > ε (docs/families.md derives it for each family); 0 where a tightness
  /// pair claims no closed form. average-bump: the first average disagreement (least T with
  /// E_T > ε).
  std::uint64_t first_disagreement = 0;
  std::string closed_form;  ///< the formula, e.g. "Δ·(⌊s/((2κ−1)ε)⌋ + 1)"
  /// The closed form's asymptotic growth, e.g. "Δ·s/(3ε)" (what a fit should find).
  std::string growth;
  /// The gap at T* predicted by the derivation (on the family's witness statistic).
  double gap_at_first_disagreement = 0.0;
  /// The largest gap over all strings (the supremum, attained or approached at long lengths):
  /// the pair disagrees by this much somewhere, not only by just over ε.
  double sup_gap = 0.0;
  /// The semantic assumptions T* relies on (attention, positions, ties; docs/tightness.md §2).
  std::string semantics;
  /// average-bump: lim_(T→∞) E‖f − g‖_∞ under its Dirichlet prior (AverageBumpLimit); else 0.
  double average_limit = 0.0;
};

/// One family of the registry.
struct Family {
  std::string name;
  std::string summary;     ///< one line: the mechanism
  std::string parameters;  ///< which Thm 4.1 parameter(s) T* grows with
  std::vector<FamilyParameter> params;
  std::function<FamilyMember(const FamilyValues&)> build;  ///< values complete and in range
  /// The builder writes the models' `meta` and the member's `family` label itself (the
  /// tightness pairs, whose files docs/tightness.md §2 describes); otherwise BuildFamilyMember
  /// writes FamilyMeta.
  bool own_meta = false;
};

/// The explicit registry, in a fixed order: bump, precision, nested, induction, leak, and the
/// tightness pairs offset-bump, margin, positional-margin, two-layer-margin, average-bump
/// (docs/families.md, docs/tightness.md §2).
const std::vector<Family>& Families();

/// The family `name`; InputError naming the known families otherwise.
const Family& FindFamily(const std::string& name);

/// Builds a member: unknown parameter names, values outside a parameter's range, non-integer
/// values of integer parameters and parameter combinations outside the derivation's
/// hypotheses (stated per family) are InputErrors naming the parameter.
FamilyMember BuildFamilyMember(const std::string& name, const FamilyValues& values);

/// The nested family's m_S(T) for T = 0 … limit (docs/families.md): the least Σ_j u_j over the
/// statistics of length T with query 0 and C₁ ≥ 1 (+∞ at T ≤ 1), in long double, by divide and
/// conquer over monotone minimisers (O(limit·log limit) a level).
std::vector<long double> NestedChainMinima(int alphabet, int limit);

/// The same by the quadratic recursion, for tests.
std::vector<long double> NestedChainMinimaReference(int alphabet, int limit);

/// The query's share q(T) = 1/(1 + (T − 1)·T^(−φ)) of a softmax head under `log` bias scaling
/// whose only logit term is the self bias φ·ln T (the other T − 1 keys have logit 0), computed
/// as the evaluators do (weights exp(a − a*) relative to the query's). q(1) = 1. The
/// positional-margin family's T* is the first T with a·q(T) < (κ − 1)ε.
double SelfShare(double phi, std::uint64_t length);

/// The expected bump E[s·max(0, w − |p − c|)] over p ~ Beta(α, α) (docs/families.md, average-bump),
/// by tanh-sinh quadrature of the bump against the Beta(α, α) density on each side of the centre:
/// the limit of the average-bump pair's expected gap.
double AverageBumpLimit(double alpha, double slope, double half_width, double centre);

/// The average-bump pair's expected gap at length T by the direct Beta-binomial sum
/// Σ_k P(n₁ = k)·s·max(0, w − |k/T − c|), n₁ ~ BetaBinomial(T, α, α) (docs/families.md,
/// average-bump).
double AverageBumpGap(double alpha, double slope, double half_width, double centre,
                      std::uint64_t length);

/// The `meta` object both model files carry (JSON text): {"family", "role" ("f"/"g"),
/// "params", "eps", "first_disagreement", "closed_form", "growth", "gap_at_first_disagreement",
/// "sup_gap"}.
std::string FamilyMeta(const FamilyMember& member, const std::string& role);

}  // namespace ltsim
