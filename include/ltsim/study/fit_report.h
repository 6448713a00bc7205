// The one JSON writer of an ExponentEstimate (study/fit.h): every document that reports a fit
// (tightness, sweep, experiment, statistic --sweep) writes its fields through it
// (docs/formats.md §3).
#pragma once

#include <initializer_list>

#include "ltsim/io/json.h"
#include "ltsim/study/fit.h"

namespace ltsim {

/// The confidence level of every interval the studies report: FitOptions' default (0.95).
inline constexpr double kReportedLevel = FitOptions{}.level;

/// A field of an ExponentEstimate as the documents write it.
enum class EstimateField {
  kExponent,              ///< "exponent": b, null when not finite
  kExponentWithInterval,  ///< "exponent": b only when the interval exists, else null
  kCi,                    ///< "ci": the reported interval [low, high] or null
  kLevel,                 ///< "level": kReportedLevel
  kTInterval,             ///< "t_interval"
  kBootstrapInterval,     ///< "bootstrap_interval"
  kPoints,                ///< "points": points in the series
  kPointsUsed,            ///< "points_used"
  kPointsCensored,        ///< "points_censored"
  kReason,                ///< "reason"
};

/// Appends `fields` of `estimate` to the object `json`, in the order given (each document keeps
/// its own key order, docs/formats.md §3).
void AppendEstimate(io::Json& json, const ExponentEstimate& estimate,
                    std::initializer_list<EstimateField> fields);

/// sweep.json's `fit` object, the simulator's estimate in the keys its readers know: slope and
/// intercept only with an interval (null otherwise), lower and upper the reported interval,
/// level, standard_error (null: the interval is the envelope of the t and bootstrap intervals,
/// not one standard error) and points (the points used).
io::Json SlopeFitJson(const ExponentEstimate& estimate);

}  // namespace ltsim
