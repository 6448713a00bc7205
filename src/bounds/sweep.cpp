// Sweeps: worst needed length per parameter value, log-log exponent fit, empirical constant.
#include "ltsim/bounds/sweep.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"

namespace ltsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// max(sim_f, sim_g) of the frequency construction at target n; +∞ when it cannot build z.
double MaxSim(const Transformer& f, const Transformer& g, const Source& x, std::uint64_t n) {
  SandwichOptions options;
  options.method = "frequency";
  options.length = n;
  try {
    const SandwichResult s = RunSandwich(f, g, x, options);
    return std::max(s.f.sim, s.g.sim);
  } catch (const InputError&) {
    return std::numeric_limits<double>::infinity();
  }
}

// n_k = ⌈n₀·2^(k/4)⌉ below |x|, then |x| itself.
std::vector<std::uint64_t> LengthGrid(std::uint64_t n0, std::uint64_t x_length) {
  std::vector<std::uint64_t> grid;
  for (int k = 0;; ++k) {
    const auto n = static_cast<std::uint64_t>(std::ceil(n0 * std::exp2(k / 4.0)));
    if (n >= x_length) break;
    if (grid.empty() || n > grid.back()) grid.push_back(n);
  }
  grid.push_back(x_length);
  return grid;
}

void CheckValue(const std::string& parameter, double value, const ModelSpec& base) {
  if (!(value > 0) || !std::isfinite(value))
    throw InputError("--values: " + parameter + " values must be positive (the fit is log-log)");
  const bool integral = parameter == "alphabet" || parameter == "period" || parameter == "locality";
  if (integral && value != std::floor(value))
    throw InputError("--values: " + parameter + " values must be integers");
  // Sweeps build every model in memory: S·Δ types, τ+1 bias entries.
  constexpr double kLargestIntegral = 4096;
  if (integral && value > kLargestIntegral)
    throw InputError("--values: " + parameter + " values must be at most 4096");
  if (parameter == "alphabet" && value < 2) throw InputError("--values: alphabet must be ≥ 2");
  if (parameter == "scale" && value < base.grid)
    throw InputError("--values: scale must be at least the weight grid " +
                     std::to_string(base.grid));
  if (parameter == "eps" && value >= 1) throw InputError("--values: eps must be in (0, 1)");
}

void ValidateOptions(const SweepOptions& o) {
  PaperExponent(o.parameter);  // names the valid parameters
  if (o.values.size() < 2) throw InputError("--values: a sweep needs at least 2 values");
  for (double v : o.values) CheckValue(o.parameter, v, o.base);
  if (o.pairs < 1) throw InputError("--pairs must be at least 1");
  if (!(o.eps > 0 && o.eps < 1)) throw InputError("--eps must be in (0, 1)");
  if (o.x_length < 10) throw InputError("--x-length must be at least 10");
}

// The base spec and ε with the swept parameter set to `value`.
ModelSpec PointSpec(const SweepOptions& o, double value, double& eps) {
  ModelSpec spec = o.base;
  spec.layers = 1;
  spec.attention = Attention::kHardmax;
  eps = o.eps;
  if (o.parameter == "scale") spec.scale = value;
  if (o.parameter == "alphabet") spec.alphabet = static_cast<int>(value);
  if (o.parameter == "period") spec.period = static_cast<int>(value);
  if (o.parameter == "locality") spec.locality = static_cast<int>(value);
  if (o.parameter == "eps") eps = value;
  return spec;
}

SweepPair RunPair(const SweepOptions& o, const ModelSpec& spec, double eps, std::uint64_t index) {
  SweepPair pair;
  pair.seed = StreamSeed(o.seed, "sweep", index);
  FuzzEngine engine(pair.seed);
  PairSpec pair_spec;
  pair_spec.kind = PairKind::kPerturbed;
  pair_spec.delta = o.delta;
  const auto [f, g] = GeneratePair(spec, pair_spec, engine);
  InputSpec input;
  input.kind = o.input;
  input.length = o.x_length;
  input.alphabet = spec.alphabet;
  input.seed = StreamSeed(pair.seed, "x");
  const auto x = MakeInput(input);
  pair.needed = NeededLength(f, g, *x, eps, &pair.reached);
  pair.sim_at_fixed = MaxSim(f, g, *x, std::min(o.fixed_n, o.x_length));
  pair.constants = PairConstants(ModelConstants(f), ModelConstants(g));
  pair.constants["eps"] = eps;
  pair.constants["n"] = static_cast<double>(pair.needed);
  pair.constants["T"] = static_cast<double>(o.x_length);
  return pair;
}

SweepPoint RunPoint(const SweepOptions& o, double value, std::uint64_t point) {
  SweepPoint p;
  p.value = value;
  double eps = 0;
  const ModelSpec spec = PointSpec(o, value, eps);
  double largest_l = 0;
  // An ε sweep measures the same pairs at every ε; the others draw new pairs per point.
  const std::uint64_t stream = o.parameter == "eps" ? 0 : point;
  for (int k = 0; k < o.pairs; ++k) {
    p.pairs.push_back(RunPair(o, spec, eps, stream * o.pairs + k));
    p.pairs.back().index = k;
    largest_l = std::max(largest_l, p.pairs.back().constants["L"]);
    if (p.pairs.back().needed > p.needed || k == 0) {
      p.needed = p.pairs.back().needed;
      p.witness = k;
    }
    p.sim_at_fixed = std::max(p.sim_at_fixed, p.pairs.back().sim_at_fixed);
  }
  p.fit_x = o.parameter == "scale" ? largest_l : value;
  // The point's bound covers all its pairs: their shared S, Δ, τ, ε with the largest L (a
  // pair with L = 0 is constant and bounds nothing).
  ConstantMap c = p.pairs[p.witness].constants;
  c["L"] = largest_l;
  p.bound = FindBound("thm4.1-length").value(c);
  p.ours = FindBound("frequency-length").value(c);
  p.ratio = p.bound > 0 ? static_cast<double>(p.needed) / p.bound : kNaN;
  return p;
}

}  // namespace

const std::vector<std::string>& SweepParameters() {
  static const std::vector<std::string> names = {"scale", "alphabet", "period", "locality", "eps"};
  return names;
}

double PaperExponent(const std::string& parameter) {
  const std::vector<std::string>& names = SweepParameters();
  static const double exponents[] = {2, 6, 7, 2, -2};
  const auto it = std::find(names.begin(), names.end(), parameter);
  if (it == names.end())
    throw InputError("--parameter: unknown '" + parameter +
                     "' (known: scale, alphabet, period, locality, eps)");
  return exponents[it - names.begin()];
}

ExponentFit FitExponent(const std::vector<double>& x, const std::vector<double>& y, double level) {
  LTSIM_CHECK(x.size() == y.size() && x.size() >= 2);
  ExponentFit fit;
  fit.points = static_cast<int>(x.size());
  const double m = fit.points;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += std::log(x[i]) / m, my += std::log(y[i]) / m;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (std::log(x[i]) - mx) * (std::log(x[i]) - mx);
    sxy += (std::log(x[i]) - mx) * (std::log(y[i]) - my);
  }
  fit.slope = sxx > 0 ? sxy / sxx : kNaN;
  fit.intercept = my - fit.slope * mx;
  fit.lower = fit.upper = fit.standard_error = kNaN;
  if (fit.points < 3 || !(sxx > 0)) return fit;
  double sse = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = std::log(y[i]) - fit.intercept - fit.slope * std::log(x[i]);
    sse += r * r;
  }
  fit.standard_error = std::sqrt(sse / (m - 2) / sxx);
  const boost::math::students_t t(m - 2);
  const double q = boost::math::quantile(boost::math::complement(t, (1 - level) / 2));
  fit.lower = fit.slope - q * fit.standard_error;
  fit.upper = fit.slope + q * fit.standard_error;
  return fit;
}

std::uint64_t NeededLength(const Transformer& f, const Transformer& g, const Source& x, double eps,
                           bool* reached) {
  const auto tau = static_cast<std::uint64_t>(std::max(f.locality, g.locality));
  const std::vector<std::uint64_t> grid = LengthGrid(tau + 2, x.length());
  std::size_t lo = 0, hi = grid.size() - 1;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (MaxSim(f, g, x, grid[mid]) <= eps) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (reached) *reached = grid[lo] < x.length();
  return grid[lo];
}

SweepResult RunSweep(const SweepOptions& options) {
  ValidateOptions(options);
  SweepResult r;
  r.options = options;
  r.paper_exponent = PaperExponent(options.parameter);
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < options.values.size(); ++i) {
    r.points.push_back(RunPoint(options, options.values[i], i));
    if (r.points.back().fit_x > 0) {  // a scale point whose pairs all have L = 0 is unfit
      xs.push_back(r.points.back().fit_x);
      ys.push_back(static_cast<double>(r.points.back().needed));
    }
  }
  if (xs.size() < 2) throw InputError("--values: fewer than 2 points with L > 0 to fit");
  r.fit = FitExponent(xs, ys);
  r.empirical_constant = kNaN;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (std::isnan(r.empirical_constant) || r.points[i].ratio > r.empirical_constant) {
      r.empirical_constant = r.points[i].ratio;
      r.constant_point = static_cast<int>(i);
    }
  }
  return r;
}

}  // namespace ltsim
