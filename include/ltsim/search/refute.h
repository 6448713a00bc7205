// `ltsim refute`: search a class for a pair whose certified first disagreement exceeds a
// conjectured training length (docs/refute.md).
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/bounds/registry.h"
#include "ltsim/search/raw_threshold_search.h"

namespace ltsim {

struct RefuteOptions {
  RawSearchOptions search;
  /// A muParser expression over the constants `ltsim constants` knows (L, Delta, S, tau, gamma,
  /// p, C, gamma_pos, D, eps), or the name of a registry bound (e.g. thm4.1-length).
  std::string bound;
};

/// One candidate's verdict against the bound.
struct RefuteCandidate {
  int restart = 0;
  double bound_value = std::numeric_limits<double>::quiet_NaN();  ///< at the pair's constants
  /// T*/bound (T* = N + 1 when no disagreement up to N: then a lower bound); NaN when the bound
  /// is not a positive finite number.
  double ratio = std::numeric_limits<double>::quiet_NaN();
  bool refutes = false;  ///< separated, T* > bound (finite, > 0)
  ConstantMap constants;
  double lipschitz = std::numeric_limits<double>::quiet_NaN();   ///< L of the pair (constants)
  double eps_over_L = std::numeric_limits<double>::quiet_NaN();  ///< T*·ε/L, same T* as ratio
};

struct RefuteResult {
  RefuteOptions options;
  RawSearchResult search;
  RefuteCandidate best;  ///< a refuting candidate if any, else the largest ratio
  bool refuted = false;
  /// The best family member for the same class (FamilySeeds): name, T*, T*·ε/L; empty name if
  /// none fits.
  std::string family_name;
  std::optional<std::uint64_t> family_first_disagreement;
  double family_eps_over_L = std::numeric_limits<double>::quiet_NaN();
};

/// The value of the bound at a pair's constants (eps added). InputError for a bad expression.
double EvaluateRefuteBound(const std::string& bound, const ConstantMap& constants);

/// Checks the expression parses and names only known constants (InputError otherwise), before
/// any search.
void ValidateRefuteBound(const std::string& bound);

/// Runs the search (family seeds included) and judges every restart's best pair.
RefuteResult RunRefute(const RefuteOptions& options);

/// The printed JSON: context, refuted, first_disagreement, bound, bound_value, ratio,
/// evaluations, seed, budget, class, best {…}, family {…}.
nlohmann::json RefuteToJson(const RefuteResult& result);

/// Replays DIR/refute.json (reading DIR/f.json and DIR/g.json beside it) or a raw search
/// witness: T*, separation and the verdict against the recorded bound must reproduce.
/// InputError naming the file and key for a malformed file.
bool ReplayRefute(const std::string& path, std::string* report);

}  // namespace ltsim
