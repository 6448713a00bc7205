// `ltsim refute --exponent P --grid v1,v2,…`: the largest certified T* found in a class at each
// value of one parameter, its fitted exponent and the bound's own (docs/refute.md §6).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ltsim/io/names.h"
#include "ltsim/search/refute.h"
#include "ltsim/study/fit.h"

namespace ltsim {

/// The class parameter varied over the grid (the others stay as given).
enum class ExponentParameter { kEps, kScale, kPeriod, kAlphabet, kLocality, kHeads };

inline constexpr io::NameTable<ExponentParameter, 6> kExponentParameterNames{
    "exponent parameter",
    {{{ExponentParameter::kEps, "eps"},
      {ExponentParameter::kScale, "scale"},
      {ExponentParameter::kPeriod, "period"},
      {ExponentParameter::kAlphabet, "alphabet"},
      {ExponentParameter::kLocality, "locality"},
      {ExponentParameter::kHeads, "heads"}}}};

/// The regressor of the log-log fit for a grid value: 1/ε (eps), L₀ (scale), Δ, |Σ|, τ + 1
/// (locality: τ = 0 is allowed) and H.
double ExponentRegressor(ExponentParameter parameter, double value);

struct RefuteExponentOptions {
  RefuteOptions refute;  ///< the class at fixed parameters, the bound, the search per point
  ExponentParameter parameter = ExponentParameter::kEps;
  std::vector<double> grid;  ///< ≥ 3 distinct values (integers for period, alphabet, …)
  /// Where each point's witness file is written (`point_<i>.json`, ltsim-raw-search-witness);
  /// empty: none written. `witness_name_dir` is the directory the results name them in (the
  /// final directory when witness_dir is a staging copy of it; empty: witness_dir).
  std::string witness_dir, witness_name_dir;
  /// Called before each point: index, points, value. Never changes the result.
  std::function<void(int, int, double)> progress;
};

/// One grid point: the best pair's certified T* (the largest found by the search, certified
/// past the cap when censored), or a lower bound when it is still censored.
struct ExponentPoint {
  double value = 0.0;
  double regressor = 0.0;
  std::optional<std::uint64_t> first_disagreement;  ///< certified T*; none: censored
  std::uint64_t lower_bound = 0;                    ///< T*, or checked_up_to + 1 when censored
  bool separated = false;
  double lipschitz = std::numeric_limits<double>::quiet_NaN();    ///< L of the pair
  double bound_value = std::numeric_limits<double>::quiet_NaN();  ///< at the pair's constants
  std::string witness_file;  ///< path of the point's witness ("" when none written)
  std::uint64_t evaluations = 0;
  std::vector<std::string> limited_by;
  std::string start;
  RefuteResult refute;  ///< the whole search result of the point
};

struct RefuteExponentResult {
  RefuteExponentOptions options;
  std::vector<ExponentPoint> points;
  ExponentEstimate estimate;  ///< over the uncensored, separated points (censored: never fitted)
  /// The bound's own exponent: the least-squares slope of ln(bound) against ln(regressor), the
  /// bound evaluated at the first point's pair constants with only the varied one changed.
  double bound_exponent = std::numeric_limits<double>::quiet_NaN();
  std::string verdict;  ///< "contradicts", "consistent" or "inconclusive"
  std::string reason;
};

/// Runs one refute search per grid point (maximising certified T*), fits and decides.
/// OptionError for a grid of fewer than 3 distinct values or values outside the parameter's
/// range.
RefuteExponentResult RunRefuteExponent(const RefuteExponentOptions& options);

/// The JSON document: context, parameter, grid, points [{value, regressor, first_disagreement,
/// first_disagreement_lower_bound, censored, separated, lipschitz, bound_value, witness_file,
/// limited_by, start, evaluations}], exponent, exponent_ci, bound_exponent, verdict, reason.
nlohmann::json RefuteExponentToJson(const RefuteExponentResult& result);

}  // namespace ltsim
