// `ltsim refute`: search a class for a pair whose certified first disagreement exceeds a
// conjectured training length (docs/refute.md).
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/bounds/registry.h"
#include "ltsim/search/raw_threshold_search.h"

namespace ltsim {

struct RefuteOptions {
  RawSearchOptions search;
  /// A muParser expression over the constants `ltsim constants` knows (L, Delta, S, tau, gamma,
  /// p, C, gamma_pos, D, eps), or the name of a registry bound (e.g. thm4.1-length).
  std::string bound;
  /// Seconds for certifying censored best pairs past the search's cap (CertifyPastCap);
  /// 0: no certification past N.
  double certify_seconds = 30.0;
  /// How many of the best censored pairs are certified past the cap (in rank order).
  int certify_pairs = 3;
  /// Rank pairs by certified T* alone (the largest T* in the class: `refute --exponent`), and
  /// certify censored pairs up to kThresholdMaxLength, not only up to the bound.
  bool maximise_first_disagreement = false;
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
  /// What limits the verdict, empty when it is genuine (docs/refute.md §4): "max_length" (a
  /// separated pair is still censored at a length below the bound, or in
  /// maximise_first_disagreement mode the best pair is censored), then "threshold_evaluations"
  /// when an evaluation cap censored that pair below N (or below its certification target,
  /// RawCensoredBy), "time_budget" (the
  /// search stopped on its time budget). With the reason in words.
  std::vector<std::string> limited_by;
  std::string limited_by_reason;
  /// Censored pairs certified past the search's N (CertifyPastCap), and the seconds it took.
  int certified_past_cap = 0;
  double certify_seconds = 0.0;
};

/// The value of the bound at a pair's constants (eps added). InputError for a bad expression.
double EvaluateRefuteBound(const std::string& bound, const ConstantMap& constants);

/// Checks the expression parses and names only known constants (InputError otherwise), before
/// any search.
void ValidateRefuteBound(const std::string& bound);

/// Runs the search (family seeds included) and judges every restart's best pair.
RefuteResult RunRefute(const RefuteOptions& options);

/// Judges one pair as given (a user's family member, docs/refute.md §7) against the bound: T*
/// exact up to options.search.max_length and the separation of EvaluateGivenPair, no search;
/// the result describes the pair's own class (its sizes, attention and L), one restart named
/// `start`, so RefuteToJson writes a refute.json that ReplayRefute reproduces. InputError
/// naming `f_name`/`g_name` for a pair that cannot be evaluated.
RefuteResult JudgeGivenPair(const RefuteOptions& options, const Transformer& f,
                            const Transformer& g, const std::string& start,
                            const std::string& f_name, const std::string& g_name);

/// The printed JSON: context, refuted, first_disagreement, bound, bound_value, ratio,
/// evaluations, seed, budget, class, best {…}, family {…}.
nlohmann::json RefuteToJson(const RefuteResult& result);

/// The constant that sets the length scale of each allowed mode of the class: hardmax L₀/ε,
/// softmax e^(2B) (B = max_logit), finite 2^(p/γ₀); null value (with a note) when unbounded.
nlohmann::json LengthScales(const RawSearchOptions& options);

/// Replays DIR/refute.json (reading DIR/f.json and DIR/g.json beside it) or a raw search
/// witness: T*, separation and the verdict against the recorded bound must reproduce.
/// InputError naming the file and key for a malformed file.
bool ReplayRefute(const std::string& path, std::string* report);

}  // namespace ltsim
