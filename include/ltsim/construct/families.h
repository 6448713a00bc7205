// Parametric families of one- and two-layer pairs with a closed-form first disagreement T*
// (docs/families.md): certified lower bounds on the training length N of Theorem 4.1.
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
  double min = 0.0, max = 0.0;  ///< inclusive range, checked before anything is built
  bool integer = false;
  std::string help;
};

/// The values of a family's parameters, by name.
using FamilyValues = std::map<std::string, double>;

/// A built member: two ordinary models (both with `meta` recording the family, its parameters,
/// ε and the closed-form T*) and the closed form's numbers.
struct FamilyMember {
  std::string family;
  FamilyValues values;  ///< every parameter, defaults filled in
  Transformer f, g;
  double eps = 0.0;  ///< the ε the closed form is stated for
  /// T*(f, g, ε) from the closed form: the smallest length with a string where
  /// ‖f(x) − g(x)‖_∞ > ε (docs/families.md derives it for each family).
  std::uint64_t first_disagreement = 0;
  std::string closed_form;  ///< the formula, e.g. "Δ·(⌊s/((2κ−1)ε)⌋ + 1)"
  /// The closed form's asymptotic growth, e.g. "Δ·s/(3ε)" (what a fit should find).
  std::string growth;
  /// The gap at T* predicted by the derivation (on the family's witness statistic).
  double gap_at_first_disagreement = 0.0;
  /// The largest gap over all strings (the supremum, attained or approached at long lengths):
  /// the pair disagrees by this much somewhere, not only by just over ε.
  double sup_gap = 0.0;
};

/// One family of the registry.
struct Family {
  std::string name;
  std::string summary;     ///< one line: the mechanism
  std::string parameters;  ///< which Thm 4.1 parameter(s) T* grows with
  std::vector<FamilyParameter> params;
  std::function<FamilyMember(const FamilyValues&)> build;  ///< values complete and in range
};

/// The explicit registry, in a fixed order: bump, precision, nested, induction, leak
/// (docs/families.md).
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

/// The `meta` object both model files carry (JSON text): {"family", "role" ("f"/"g"),
/// "params", "eps", "first_disagreement", "closed_form", "growth", "gap_at_first_disagreement",
/// "sup_gap"}.
std::string FamilyMeta(const FamilyMember& member, const std::string& role);

}  // namespace ltsim
