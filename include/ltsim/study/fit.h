// Honest exponent fits for studies: censored points as bounds, several seeds a point, bootstrap
// and t intervals, log-log, log-linear and joint fits (docs/statistics.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ltsim {

/// How a measured length relates to the true quantity (docs/statistics.md "Censoring").
enum class Censoring {
  kNone,   ///< the measured value is the quantity
  kAbove,  ///< a cap was hit (|x|, the search's N): the quantity is ≥ the value
  kBelow,  ///< a floor was hit (the grid's first n): the quantity is ≤ the value
};

/// "none", "above" (at a cap: a lower bound) or "below" (at a floor: an upper bound).
const char* CensoringName(Censoring censoring);

/// One measurement of a point (one seed, one pair, one input).
struct Sample {
  double value = 0.0;  ///< the measured length (> 0 to enter a fit)
  Censoring censoring = Censoring::kNone;
};

/// One point of a series: the parameter, the regressor the fit uses and its samples.
struct SeriesPoint {
  double value = 0.0;      ///< the parameter as the user gave it
  double regressor = 0.0;  ///< log-log: the value (> 0; its log is taken); log-linear: as is
  std::vector<Sample> samples;
};

/// min / median / max of a point's samples (censored samples included at their value).
struct Spread {
  double min = 0.0, median = 0.0, max = 0.0;
};
Spread SampleSpread(const SeriesPoint& point);

/// A point is censored when any of its samples is: its summary is then only a bound
/// (conservative; docs/statistics.md). kAbove wins over kBelow when both occur.
Censoring PointCensoring(const SeriesPoint& point);

/// Ordinary least squares y = a + b·x over the pairs (x_i, y_i): the one line fit of the studies
/// (FitSeries and its bootstrap, the paper's exponents over a grid of tightness and refute
/// --exponent). a and b are NaN when x has no spread (every x_i equal, compared exactly) or a
/// value is not finite. x and y have the same size.
struct LineFit {
  double intercept = 0.0;  ///< a
  double slope = 0.0;      ///< b
  double sxx = 0.0;        ///< Σ (x_i − mean x)², the slope's denominator
};
LineFit FitLine(const std::vector<double>& x, const std::vector<double>& y);

/// ln y = a + b·ln x (log-log) or ln y = a + b·x (log-linear, e.g. x = 1/γ).
enum class FitScale { kLogLog, kLogLinear };

struct FitOptions {
  FitScale scale = FitScale::kLogLog;
  double level = 0.95;     ///< two-sided confidence level of every interval
  int replicates = 2000;   ///< bootstrap replicates
  std::uint64_t seed = 0;  ///< master seed of the bootstrap (StreamSeed(seed, "bootstrap"))
  int min_points = 3;      ///< uncensored points needed for an interval
};

/// The fitted exponent b with its interval, or the reason there is none.
struct ExponentEstimate {
  double exponent = 0.0;   ///< b (NaN when fewer than 2 uncensored points)
  double intercept = 0.0;  ///< a
  /// The reported interval: the envelope of the t interval and the bootstrap interval
  /// (conservative); nullopt when the data do not support one (see reason).
  std::optional<std::pair<double, double>> ci;
  std::optional<std::pair<double, double>> t_interval;          ///< Student t, m − 2 df
  std::optional<std::pair<double, double>> bootstrap_interval;  ///< percentile, residual+seed
  int points = 0;                                               ///< points in the series
  int points_used = 0;      ///< uncensored points that entered the fit
  int points_censored = 0;  ///< points left out as bounds
  std::vector<int> used;    ///< indices of the points that entered the fit
  std::string reason;       ///< why ci is empty ("" when it is not)
};

/// Fits the uncensored points (a censored point never enters): the response of point i is
/// the mean of ln(sample) over its samples (the geometric mean), the regressor ln x_i or
/// x_i, ordinary least squares over points. Interval: the envelope of
///  - Student's t on the slope with m − 2 degrees of freedom, and
///  - a percentile bootstrap (Boost.Random, seeded): each replicate adds to the fitted line
///    a resampled residual (rescaled by √(m/(m−2))) and the shift of the point's mean log
///    when its samples are resampled with replacement, then refits.
/// Without `min_points` uncensored points with distinct regressors there is no interval
/// (reason names the counts). Samples ≤ 0 or non-finite make the point unusable (reason).
ExponentEstimate FitSeries(const std::vector<SeriesPoint>& points, const FitOptions& options);

/// One observation of a joint fit: ln y = a + Σ_j b_j·r_j.
struct JointObservation {
  std::vector<double> regressors;  ///< r_j (already logged or inverted by the caller)
  double value = 0.0;              ///< y > 0
  Censoring censoring = Censoring::kNone;
};

/// A joint least-squares fit over several regressors.
struct JointFit {
  std::vector<std::string> names;
  std::vector<double> coefficients;                          ///< b_j
  std::vector<std::optional<std::pair<double, double>>> ci;  ///< t intervals (m − k − 1 df)
  double intercept = 0.0;
  int observations_used = 0, observations_censored = 0;
  std::string reason;  ///< why the intervals are empty, "" otherwise
};

/// Fits the uncensored observations jointly (Eigen's QR least squares); intervals from the
/// coefficient covariance σ²(XᵀX)⁻¹ and Student's t. No interval with fewer than k + 2
/// uncensored observations or a rank-deficient design.
JointFit FitJoint(const std::vector<std::string>& names,
                  const std::vector<JointObservation>& observations,
                  double level = FitOptions{}.level);

/// What a series shows about growth (`sweep`, `experiment paper`).
enum class Trend {
  kRises,       ///< the interval excludes 0 from below and the series is monotone in its spread
  kNotShown,    ///< anything else (reason says which condition failed)
  kDegenerate,  ///< every point sits on a floor or a cap
};
const char* TrendName(Trend trend);  ///< "rises", "not shown", "degenerate"

struct TrendVerdict {
  Trend trend = Trend::kNotShown;
  std::string reason;
  bool monotone = false;  ///< non-decreasing within the spread (max of each later point ≥
                          ///< min of every earlier one), over uncensored points
};

/// "rises" only when estimate.ci exists with ci.low > 0 and the uncensored points, in order of
/// regressor, are monotone within their spread; "degenerate" when no point is uncensored.
TrendVerdict DecideTrend(const std::vector<SeriesPoint>& points, const ExponentEstimate& estimate);

}  // namespace ltsim
