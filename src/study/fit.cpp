// Exponent fits with censoring and bootstrap intervals (docs/statistics.md).
#include "ltsim/study/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <limits>
#include <set>

#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"

namespace ltsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double TQuantile(double df, double level) {
  const boost::math::students_t t(df);
  return boost::math::quantile(boost::math::complement(t, (1 - level) / 2));
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = q * (static_cast<double>(v.size()) - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

bool Usable(const SeriesPoint& p, FitScale scale) {
  if (p.samples.empty() || !std::isfinite(p.regressor)) return false;
  if (scale == FitScale::kLogLog && !(p.regressor > 0)) return false;
  for (const Sample& s : p.samples)
    if (!(s.value > 0) || !std::isfinite(s.value)) return false;
  return true;
}

double MeanLog(const std::vector<Sample>& samples) {
  double sum = 0;
  for (const Sample& s : samples) sum += std::log(s.value);
  return sum / static_cast<double>(samples.size());
}

}  // namespace

LineFit FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  LTSIM_CHECK(x.size() == y.size());
  LineFit line{kNaN, kNaN, 0.0};
  const double m = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return line;
    mx += x[i] / m, my += y[i] / m;
  }
  // Spread is decided on the values themselves: rounding in Σ x_i/m can leave mean x a hair off
  // identical x_i, and sxx would then be > 0 without any spread.
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; })) return line;
  double sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    line.sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (line.sxx > 0) {
    line.slope = sxy / line.sxx;
    line.intercept = my - line.slope * mx;
  }
  return line;
}

const char* CensoringName(Censoring censoring) {
  switch (censoring) {
    case Censoring::kNone:
      return "none";
    case Censoring::kAbove:
      return "above";
    case Censoring::kBelow:
      return "below";
  }
  return "none";
}

const char* TrendName(Trend trend) {
  switch (trend) {
    case Trend::kRises:
      return "rises";
    case Trend::kNotShown:
      return "not shown";
    case Trend::kDegenerate:
      return "degenerate";
  }
  return "not shown";
}

Spread SampleSpread(const SeriesPoint& point) {
  Spread s{kNaN, kNaN, kNaN};
  if (point.samples.empty()) return s;
  std::vector<double> v;
  for (const Sample& sample : point.samples) v.push_back(sample.value);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.median = Quantile(v, 0.5);
  return s;
}

Censoring PointCensoring(const SeriesPoint& point) {
  Censoring c = Censoring::kNone;
  for (const Sample& s : point.samples) {
    if (s.censoring == Censoring::kAbove) return Censoring::kAbove;
    if (s.censoring == Censoring::kBelow) c = Censoring::kBelow;
  }
  return c;
}

ExponentEstimate FitSeries(const std::vector<SeriesPoint>& points, const FitOptions& options) {
  ExponentEstimate e;
  e.exponent = e.intercept = kNaN;
  e.points = static_cast<int>(points.size());
  std::vector<double> x, y;
  int unusable = 0;
  for (int i = 0; i < e.points; ++i) {
    const SeriesPoint& p = points[i];
    if (PointCensoring(p) != Censoring::kNone) {
      ++e.points_censored;
      continue;
    }
    if (!Usable(p, options.scale)) {
      ++unusable;
      continue;
    }
    e.used.push_back(i);
    x.push_back(options.scale == FitScale::kLogLog ? std::log(p.regressor) : p.regressor);
    y.push_back(MeanLog(p.samples));
  }
  e.points_used = static_cast<int>(e.used.size());
  const int distinct = static_cast<int>(std::set<double>(x.begin(), x.end()).size());
  const auto too_few = [&] {
    std::string r = "too few uncensored points (" + std::to_string(distinct) + " distinct of " +
                    std::to_string(e.points) + "; " + std::to_string(e.points_censored) +
                    " censored";
    if (unusable) r += ", " + std::to_string(unusable) + " with a non-positive length";
    return r + "; an interval needs " + std::to_string(options.min_points) + ")";
  };
  if (distinct >= 2) {
    const LineFit line = FitLine(x, y);
    e.exponent = line.slope;
    e.intercept = line.intercept;
  }
  if (distinct < std::max(3, options.min_points)) {
    e.reason = too_few();
    return e;
  }
  const LineFit line = FitLine(x, y);
  const auto m = static_cast<double>(x.size());
  std::vector<double> residual(x.size());
  double sse = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    residual[i] = y[i] - line.intercept - line.slope * x[i];
    sse += residual[i] * residual[i];
  }
  const double se = std::sqrt(sse / (m - 2) / line.sxx);
  const double q = TQuantile(m - 2, options.level);
  e.t_interval = std::make_pair(line.slope - q * se, line.slope + q * se);

  // Bootstrap: residuals (rescaled to undo the fit's shrinkage) plus each point's own seed
  // spread, resampled from StreamSeed(seed, "bootstrap") with Boost.Random.
  boost::random::mt19937_64 engine(StreamSeed(options.seed, "bootstrap"));
  const double inflate = std::sqrt(m / (m - 2));
  std::vector<double> slopes;
  slopes.reserve(static_cast<std::size_t>(std::max(options.replicates, 0)));
  std::vector<double> ystar(x.size());
  for (int r = 0; r < options.replicates; ++r) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      boost::random::uniform_int_distribution<std::size_t> pick_residual(0, x.size() - 1);
      const std::vector<Sample>& samples = points[e.used[i]].samples;
      boost::random::uniform_int_distribution<std::size_t> pick_sample(0, samples.size() - 1);
      double shift = 0;
      if (samples.size() > 1) {
        double sum = 0;
        for (std::size_t k = 0; k < samples.size(); ++k)
          sum += std::log(samples[pick_sample(engine)].value);
        shift = sum / static_cast<double>(samples.size()) - y[i];
      }
      ystar[i] =
          line.intercept + line.slope * x[i] + inflate * residual[pick_residual(engine)] + shift;
    }
    slopes.push_back(FitLine(x, ystar).slope);
  }
  if (!slopes.empty()) {
    const double alpha = (1 - options.level) / 2;
    e.bootstrap_interval = std::make_pair(Quantile(slopes, alpha), Quantile(slopes, 1 - alpha));
  }
  double low = e.t_interval->first, high = e.t_interval->second;
  if (e.bootstrap_interval) {
    low = std::min(low, e.bootstrap_interval->first);
    high = std::max(high, e.bootstrap_interval->second);
  }
  e.ci = std::make_pair(low, high);
  return e;
}

JointFit FitJoint(const std::vector<std::string>& names,
                  const std::vector<JointObservation>& observations, double level) {
  JointFit fit;
  fit.names = names;
  const std::size_t k = names.size();
  fit.coefficients.assign(k, kNaN);
  fit.ci.assign(k, std::nullopt);
  fit.intercept = kNaN;
  std::vector<const JointObservation*> used;
  for (const JointObservation& o : observations) {
    if (o.censoring != Censoring::kNone) {
      ++fit.observations_censored;
      continue;
    }
    if (o.regressors.size() != k || !(o.value > 0) || !std::isfinite(o.value)) continue;
    used.push_back(&o);
  }
  fit.observations_used = static_cast<int>(used.size());
  const auto m = static_cast<Eigen::Index>(used.size());
  const auto columns = static_cast<Eigen::Index>(k + 1);
  if (m < columns) {
    fit.reason = "too few uncensored observations (" + std::to_string(m) + " for " +
                 std::to_string(columns) + " coefficients)";
    return fit;
  }
  Eigen::MatrixXd design(m, columns);
  Eigen::VectorXd response(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    design(i, 0) = 1;
    for (std::size_t j = 0; j < k; ++j)
      design(i, static_cast<Eigen::Index>(j + 1)) = used[i]->regressors[j];
    response(i) = std::log(used[i]->value);
  }
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(design);
  if (qr.rank() < columns) {
    fit.reason = "the design is rank-deficient (a parameter does not vary independently)";
    return fit;
  }
  const Eigen::VectorXd beta = qr.solve(response);
  fit.intercept = beta(0);
  for (std::size_t j = 0; j < k; ++j) fit.coefficients[j] = beta(static_cast<Eigen::Index>(j + 1));
  const Eigen::Index df = m - columns;
  if (df < 1) {
    fit.reason = "no degrees of freedom left for an interval (" + std::to_string(m) +
                 " observations, " + std::to_string(columns) + " coefficients)";
    return fit;
  }
  const double sigma2 = (response - design * beta).squaredNorm() / static_cast<double>(df);
  const Eigen::MatrixXd covariance = sigma2 * (design.transpose() * design).inverse();
  const double q = TQuantile(static_cast<double>(df), level);
  for (std::size_t j = 0; j < k; ++j) {
    const auto c = static_cast<Eigen::Index>(j + 1);
    const double se = std::sqrt(std::max(0.0, covariance(c, c)));
    fit.ci[j] = std::make_pair(fit.coefficients[j] - q * se, fit.coefficients[j] + q * se);
  }
  return fit;
}

TrendVerdict DecideTrend(const std::vector<SeriesPoint>& points, const ExponentEstimate& estimate) {
  TrendVerdict v;
  std::vector<const SeriesPoint*> open;
  for (const SeriesPoint& p : points)
    if (PointCensoring(p) == Censoring::kNone) open.push_back(&p);
  if (open.empty()) {
    v.trend = Trend::kDegenerate;
    v.reason = "every point sits on a floor or a cap (" + std::to_string(points.size()) +
               " censored): the series measures the grid, not the parameter";
    return v;
  }
  std::stable_sort(open.begin(), open.end(), [](const SeriesPoint* a, const SeriesPoint* b) {
    return a->regressor < b->regressor;
  });
  // A non-decreasing choice inside [min_i, max_i] exists iff no earlier min exceeds a later max.
  v.monotone = true;
  double running_min = -std::numeric_limits<double>::infinity();
  for (const SeriesPoint* p : open) {
    const Spread s = SampleSpread(*p);
    if (s.max < running_min) v.monotone = false;
    running_min = std::max(running_min, s.min);
  }
  if (!estimate.ci) {
    v.reason = "no interval: " + estimate.reason;
  } else if (!(estimate.ci->first > 0)) {
    v.reason = "the interval [" + std::to_string(estimate.ci->first) + ", " +
               std::to_string(estimate.ci->second) + "] does not exclude 0";
  } else if (!v.monotone) {
    v.reason = "the series goes back down beyond its spread";
  } else {
    v.trend = Trend::kRises;
    v.reason = "interval above 0 and monotone within the spread";
  }
  return v;
}

}  // namespace ltsim
