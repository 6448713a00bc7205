// Sweeps: every pair's needed length per parameter value with its censoring and the hardmax
// regime, the fits of the simulator and the upper side, the trend, the empirical constant.
#include "ltsim/study/sweep.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>

#include "ltsim/check/needed_length.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/gen/margin_pair.h"
#include "ltsim/model/model_bytes.h"
#include "ltsim/search/search.h"
#include "ltsim/strings/source.h"
#include "ltsim/study/point_witness.h"
#include "ltsim/study/simulator_check.h"

namespace ltsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLargestMargin = 64;

void CheckValue(StudyParameter p, double value, const ModelSpec& base) {
  const std::string parameter = ParameterName(p);
  if (!(value > 0) || !std::isfinite(value))
    throw OptionError("values", parameter + " values must be positive (the fit is log-log)");
  const bool integral = IsIntegral(p);
  if (p == StudyParameter::kMargin && value > kLargestMargin)
    throw OptionError("values", "margin must be at most 64 (T_hard = 2^(p/γ) is then below 2)");
  if (integral && value != std::floor(value))
    throw OptionError("values", parameter + " values must be integers");
  // Sweeps build every model in memory: S·Δ types, τ+1 bias entries.
  constexpr double kLargestIntegral = 4096;
  if (integral && value > kLargestIntegral)
    throw OptionError("values", parameter + " values must be at most 4096");
  if (p == StudyParameter::kAlphabet && value < 2)
    throw OptionError("values", "alphabet must be ≥ 2");
  if (p == StudyParameter::kScale && value < base.grid)
    throw OptionError("values",
                      "scale must be at least the weight grid " + std::to_string(base.grid));
  if (p == StudyParameter::kEps && value >= 1) throw OptionError("values", "eps must be in (0, 1)");
}

void ValidateOptions(const SweepOptions& o) {
  PaperExponent(o.parameter);  // refuses n
  if (o.values.size() < 2) throw OptionError("values", "a sweep needs at least 2 values");
  for (double v : o.values) CheckValue(o.parameter, v, o.base);
  if (o.pairs < 1) throw OptionError("pairs", "must be at least 1");
  if (o.iterations < 0) throw OptionError("iterations", "must be at least 0");
  if (o.threads < 0) throw OptionError("threads", "must be at least 0");
  if (o.precision_bits < 1 || o.precision_bits > 64)
    throw OptionError("precision_bits", "must be in [1, 64]");
  if (!(o.eps > 0 && o.eps < 1)) throw OptionError("eps", "must be in (0, 1)");
  if (o.x_length < 10) throw OptionError("x_length", "must be at least 10");
  // x is held as runs in memory: the generators' intended range (input_generator.h).
  if (o.pair) {
    if (o.parameter != StudyParameter::kEps)
      throw OptionError("parameter",
                        "a user's pair is measured as given, so only eps can be swept (the "
                        "other parameters would change its models)",
                        ParameterName(o.parameter));
    if (o.search)
      throw OptionError("strategy",
                        "a user's pair is measured as given: random (K inputs per point), not a "
                        "search that moves its weights",
                        "search");
    if (o.pair->f.layers.size() != 1 || o.pair->g.layers.size() != 1)
      throw InputError(o.pair->f_file + ", " + o.pair->g_file +
                       ": sweep measures the frequency simulator, which needs one-layer models");
    CheckPair(o.pair->f, o.pair->g, o.pair->f_file, o.pair->g_file);
  }
  constexpr std::uint64_t kMaxGrownLength = 10'000'000;
  if (o.max_x_length != 0 && (o.max_x_length < o.x_length || o.max_x_length > kMaxGrownLength))
    throw OptionError("max_x_length",
                      fmt::format("must be 0 (|x| fixed) or in [x_length, {}]", kMaxGrownLength),
                      std::to_string(o.max_x_length));
}

// The base spec and ε with the swept parameter set to `value`.
ModelSpec PointSpec(const SweepOptions& o, double value, double& eps) {
  ModelSpec spec = o.base;
  spec.layers = 1;
  spec.attention = Attention::kHardmax;
  eps = o.eps;
  if (o.parameter == StudyParameter::kScale) spec.scale = value;
  if (o.parameter == StudyParameter::kAlphabet) spec.alphabet = static_cast<int>(value);
  if (o.parameter == StudyParameter::kPeriod) spec.period = static_cast<int>(value);
  if (o.parameter == StudyParameter::kLocality) spec.locality = static_cast<int>(value);
  if (o.parameter == StudyParameter::kEps) eps = value;
  if (o.parameter == StudyParameter::kMargin) {
    spec.attention = Attention::kFinite;
    spec.precision_bits = o.precision_bits;
  }
  return spec;
}

// ε and γ leave the pair's shape alone: every point starts from the same pairs, so the fit
// sees the parameter and not a new draw.
bool SharesPairs(StudyParameter parameter) {
  return parameter == StudyParameter::kEps || parameter == StudyParameter::kMargin;
}

double PointMargin(const SweepOptions& o, double value) {
  return o.parameter == StudyParameter::kMargin ? value : 0.0;
}

SearchOptions PointSearch(const SweepOptions& o, const ModelSpec& spec, double eps,
                          std::uint64_t seed, double margin) {
  SearchOptions s;
  s.objective = SearchObjective::kNeeded;
  s.proposals = ProposalSet::kLogits;
  s.eps = eps;
  s.restarts = 1;
  s.iterations = o.iterations;
  s.seed = seed;
  s.delta = o.delta;
  s.margin = margin;
  s.base = spec;
  s.input.kind = o.input;
  s.input.length = o.x_length;
  return s;
}

// The candidate's x at about `length` tokens: the generator's string of that length, or the
// explicit runs scaled by the nearest whole factor (at least 1).
SearchCandidate WithLength(SearchCandidate c, std::uint64_t length, std::uint64_t first) {
  if (c.x_runs.empty()) {
    c.input.length = length;
    return c;
  }
  const std::uint64_t factor = std::max<std::uint64_t>(1, (length + first / 2) / first);
  for (Run& r : c.x_runs) r.count *= factor;
  return c;
}

// The witness's own numbers: needed length, sim at the fixed n and the pair's constants. With
// max_x_length the x grows first (GrowSimulatorLength) and the worst step's x is kept.
void Measure(const SweepOptions& o, SearchCandidate c, double eps, SweepPair& pair) {
  if (o.max_x_length > 0) {
    const std::uint64_t first = CandidateInput(c)->length();
    ConstantMap k = PairConstants(c.f, c.g);
    k["eps"] = eps;
    std::vector<SearchCandidate> tried;
    const SimulatorCheck grown = GrowSimulatorLength(
        first, std::max(o.max_x_length, first), CertifiedLength(k), [&](std::uint64_t length) {
          tried.push_back(WithLength(c, length, first));
          const auto x = CandidateInput(tried.back());
          SimulatorStep step;
          step.needed = NeededLength(c.f, c.g, *x, eps, &step.reached);
          step.attained_x_length = x->length();
          return step;
        });
    for (const SimulatorStep& step : grown.steps)
      pair.x_steps.push_back({step.attained_x_length, step.needed});
    pair.x_stop = grown.stop;
    c = tried[grown.worst_step];
  }
  const auto x = CandidateInput(c);
  pair.x_length = x->length();
  pair.x_explicit = !c.x_runs.empty();
  pair.needed = NeededLength(c.f, c.g, *x, eps, &pair.reached);
  pair.sim_at_fixed = MaxFrequencySim(c.f, c.g, *x, std::min(o.fixed_n, pair.x_length));
  pair.constants = PairConstants(c.f, c.g);
  pair.constants["eps"] = eps;
  pair.constants["n"] = static_cast<double>(pair.needed);
  pair.constants["T"] = static_cast<double>(pair.x_length);
  if (!o.out_dir.empty()) {  // the point witness's pair and x (written by the reducer)
    pair.f = c.f;
    pair.g = c.g;
    pair.input = c.input;
    pair.x_runs = c.x_runs;
  }
}

// The random pair of (point, k); with search, the start of its climb, so a searched pair needs
// at least as long as the random one (the climb never lowers its objective).
SweepPair RunPair(const SweepOptions& o, double value, std::uint64_t index) {
  double eps = 0;
  const ModelSpec spec = PointSpec(o, value, eps);
  SweepPair pair;
  pair.seed = StreamSeed(o.seed, "sweep", index);
  FuzzEngine engine(pair.seed);
  PairSpec pair_spec;
  pair_spec.kind = PairKind::kPerturbed;
  pair_spec.delta = o.delta;
  SearchCandidate c;
  if (o.pair) {  // the user's pair as given; k picks the input x
    c.f = o.pair->f;
    c.g = o.pair->g;
  } else {
    std::tie(c.f, c.g) = GenerateMarginPair(spec, pair_spec, PointMargin(o, value), engine);
  }
  c.input.kind = o.input;
  c.input.length = o.x_length;
  c.input.alphabet = c.f.alphabet;
  c.input.seed = StreamSeed(pair.seed, "x");
  if (o.search) {
    const SearchOptions s = PointSearch(o, spec, eps, pair.seed, PointMargin(o, value));
    c.objective = EvaluateCandidate(s, c);
    const SearchRestart r = HillClimbFrom(s, std::move(c), pair.seed);
    c = r.best;
    pair.accepted = r.accepted;
  }
  Measure(o, c, eps, pair);
  return pair;
}

// A pair's censoring, T_hard and upper side, from the fields every process has.
void Derive(SweepPair& q) {
  if (!q.reached) {
    q.censoring = Censoring::kAbove;  // no n < |x| met ε: the needed length is ≥ |x|
  } else {
    const auto tau = static_cast<std::uint64_t>(q.constants.at("tau"));
    const std::uint64_t floor = NeededLengthGrid(tau + 2, q.x_length).front();
    q.censoring = q.needed <= floor ? Censoring::kBelow : Censoring::kNone;
  }
  const double p = q.constants.at("p");
  q.log2_t_hard = p > 0 ? p / q.constants.at("gamma") : kNaN;
  q.hardmax_regime = !(p > 0) || std::log2(static_cast<double>(q.x_length)) >=
                                     std::log2(kHardmaxRegimeMargin) + q.log2_t_hard;
  q.upper_side = CertifiedLength(q.constants);
}

// Every pair's sample, the worst case over a point's pairs (computed already), its bounds and
// its regressor.
SweepPoint Summarise(const SweepOptions& o, double value, std::vector<SweepPair> pairs) {
  SweepPoint p;
  p.value = value;
  p.pairs = std::move(pairs);
  double largest_l = 0;
  for (int k = 0; k < static_cast<int>(p.pairs.size()); ++k) {
    p.pairs[k].index = k;
    SweepPair& q = p.pairs[k];
    Derive(q);
    p.simulator.samples.push_back({static_cast<double>(q.needed), q.censoring});
    p.upper_side.samples.push_back({q.upper_side, Censoring::kNone});
    if (!q.hardmax_regime) p.hardmax_regime = false;
    if (!std::isnan(q.log2_t_hard))
      p.t_hard = std::isnan(p.t_hard) ? std::exp2(q.log2_t_hard)
                                      : std::max(p.t_hard, std::exp2(q.log2_t_hard));
    largest_l = std::max(largest_l, p.pairs[k].constants["L"]);
    if (p.pairs[k].needed > p.needed || k == 0) {
      p.needed = p.pairs[k].needed;
      p.witness = k;
    }
    p.sim_at_fixed = std::max(p.sim_at_fixed, p.pairs[k].sim_at_fixed);
  }
  p.fit_x = o.parameter == StudyParameter::kScale ? largest_l
            : FitsInverseValue(o.parameter)       ? 1 / value
                                                  : value;
  p.simulator.value = p.upper_side.value = value;
  p.simulator.regressor = p.upper_side.regressor = p.fit_x;
  p.censoring = PointCensoring(p.simulator);
  p.spread = SampleSpread(p.simulator);
  p.upper_spread = SampleSpread(p.upper_side);
  // The point's bound covers all its pairs: their shared S, Δ, τ, ε with the largest L (a
  // pair with L = 0 is constant and bounds nothing). For margin: Thm 4.1's max of both terms.
  ConstantMap c = p.pairs[p.witness].constants;
  c["L"] = largest_l;
  p.bound = FindBound("thm4.1-length").value(c);
  if (o.parameter == StudyParameter::kMargin)
    p.bound = std::max(p.bound, FindBound("thm4.1-hardmax").value(c));
  p.ours = FindBound("frequency-length").value(c);
  p.ratio = p.bound > 0 ? static_cast<double>(p.needed) / p.bound : kNaN;
  return p;
}

// A cell's pair as exact bytes for the dealer (with out_dir, its models and x too).
// The dealt fields of a pair (core/bytes.h): the derived ones are computed again after dealing.
template <typename Visit, typename Pair>
void PairFields(Visit& visit, Pair& p, bool with_witness) {
  visit(p.index, p.seed, p.x_length, p.x_explicit, p.accepted, p.needed, p.reached, p.sim_at_fixed,
        p.x_steps, p.x_stop, p.constants);
  if (with_witness) visit(p.f, p.g, p.input, p.x_runs);
}

std::string PairBytes(const SweepPair& p, bool with_witness) {
  ByteWriter w;
  FieldWriter visit{w};
  PairFields(visit, p, with_witness);
  return w.Take();
}

SweepPair PairFromBytes(const std::string& bytes, bool with_witness) {
  ByteReader in(bytes);
  SweepPair p;
  FieldReader visit{in};
  PairFields(visit, p, with_witness);
  LTSIM_CHECK(in.done());
  return p;
}

// The witness of (point, pair) relative to out_dir (as sweep.json names it).
std::string RelativeStem(const SweepOptions& o, int point, int pair) {
  return (std::filesystem::path(ParameterName(o.parameter)) / fmt::format("p{}_m{}", point, pair))
      .string();
}

// Pair k of point i as a needed-length point witness (docs/witnesses.md §6): the pair, x as
// explicit runs, the needed n, ε, the censoring and the 50-digit recheck of the decisions.
std::string WritePairWitness(const SweepOptions& o, const SweepPoint& point, int i,
                             const SweepPair& q) {
  PointWitness w;
  w.kind = "needed-length";
  w.study = "sweep";
  w.label = "simulator on found x: the frequency simulator's needed length (neither bound)";
  w.context = {{"parameter", ParameterName(o.parameter)},
               {"value", point.value},
               {"point", i},
               {"pair", q.index},
               {"seed", q.seed},
               {"strategy", o.search ? "search" : "random"},
               {"x_explicit", q.x_explicit},
               {"input", InputSpecToJson(q.input)},
               {"censoring", CensoringName(q.censoring)},
               {"hardmax_regime", q.hardmax_regime},
               {"upper_side_certified", q.upper_side},
               {"fixed_n", o.fixed_n},
               {"sim_at_fixed", q.sim_at_fixed}};
  w.f = q.f;
  w.g = q.g;
  w.eps = q.constants.at("eps");
  if (!q.x_runs.empty()) {
    w.x = q.x_runs;
  } else {
    const auto x = MakeInput(q.input);
    w.x = ToRuns(ReadAll(*x, kMaxPointLength));
  }
  w.value = q.needed;
  w.censored = !q.reached;
  RecheckPoint(w);
  const std::string stem = RelativeStem(o, i, q.index);
  WritePointWitness(w, (std::filesystem::path(o.out_dir) / stem).string());
  return stem + ".point.json";
}

}  // namespace

const std::vector<StudyParameter>& SweepParameters() {
  static const std::vector<StudyParameter> parameters = {
      StudyParameter::kScale,    StudyParameter::kAlphabet, StudyParameter::kPeriod,
      StudyParameter::kLocality, StudyParameter::kEps,      StudyParameter::kMargin};
  return parameters;
}

double PaperExponent(StudyParameter parameter, int precision_bits) {
  switch (parameter) {
    case StudyParameter::kScale:
      return 2;
    case StudyParameter::kAlphabet:
      return 6;
    case StudyParameter::kPeriod:
      return 7;
    case StudyParameter::kLocality:
      return 2;
    case StudyParameter::kEps:
      return -2;
    case StudyParameter::kMargin:
      return precision_bits * std::log(2.0);
    default:  // n (Lemma 5.3's) and the parameters of other theorems
      break;
  }
  throw OptionError("parameter", "'" + std::string(ParameterName(parameter)) +
                                     "' is not a parameter of Theorem 4.1's sweep (known: scale, "
                                     "alphabet, period, locality, eps, margin)");
}

namespace {

// The simulator's and the upper side's fits over the points in the hardmax regime with a
// positive regressor (a scale point whose pairs all have L = 0 bounds nothing), and the trend.
void FitSweep(SweepResult& r) {
  const SweepOptions& o = r.options;
  std::vector<SeriesPoint> simulator, upper;
  std::vector<std::size_t> index;  // the sweep point of each fitted series point
  int positive = 0;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    SweepPoint& p = r.points[i];
    if (!(p.fit_x > 0)) {
      p.excluded = "L = 0";
      continue;
    }
    ++positive;
    if (!p.hardmax_regime) {
      ++r.points_outside_regime;
      p.excluded = "outside the hardmax regime";
      continue;
    }
    if (p.censoring != Censoring::kNone)
      p.excluded = std::string("censored ") + CensoringName(p.censoring);
    simulator.push_back(p.simulator);
    upper.push_back(p.upper_side);
    index.push_back(i);
  }
  if (positive < 2) throw OptionError("values", "fewer than 2 points with L > 0 to fit");
  FitOptions fit;
  fit.scale = FitsInverseValue(o.parameter) ? FitScale::kLogLinear : FitScale::kLogLog;
  fit.seed = StreamSeed(o.seed, "sweep-fit/simulator");
  r.simulator = FitSeries(simulator, fit);
  fit.seed = StreamSeed(o.seed, "sweep-fit/upper");
  r.upper_side = FitSeries(upper, fit);
  for (int used : r.simulator.used) r.points[index[used]].in_fit = true;
  if (r.points_outside_regime > 0) {
    const std::string note =
        std::to_string(r.points_outside_regime) + " point(s) outside the hardmax regime left out";
    r.simulator.reason = r.simulator.reason.empty() ? note : r.simulator.reason + "; " + note;
  }
  // The trend: for eps the needed length should grow as ε shrinks, so it is decided in 1/ε
  // (ln(1/ε) = −ln ε: the same fit with the slope and interval negated).
  if (o.parameter == StudyParameter::kEps) {
    std::vector<SeriesPoint> inverse = simulator;
    for (SeriesPoint& p : inverse) p.regressor = 1 / p.regressor;
    ExponentEstimate mirrored = r.simulator;
    mirrored.exponent = -mirrored.exponent;
    if (mirrored.ci) mirrored.ci = std::make_pair(-mirrored.ci->second, -mirrored.ci->first);
    r.trend = DecideTrend(inverse, mirrored);
    r.trend.reason += " (in 1/eps)";
  } else {
    r.trend = DecideTrend(simulator, r.simulator);
  }
}

}  // namespace

SweepResult RunSweep(const SweepOptions& options) {
  ValidateOptions(options);
  SweepResult r;
  r.options = options;
  r.paper_exponent = PaperExponent(options.parameter, options.precision_bits);
  // Every (point, pair) is independent: computed in parallel, stored by index (docs/design.md
  // §4). ε and margin sweeps start from the same pairs at every point (rescaled to the margin);
  // the others draw new pairs per point.
  const std::size_t m = options.values.size(), k = static_cast<std::size_t>(options.pairs);
  std::vector<SweepPair> pairs(m * k);
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  // The cells are the dealer's items (core/work.h): alone one chunk of all of them, over
  // ranks or shards chunks of a rank's thread count.
  ItemDealer& dealer = options.dealer ? *options.dealer : LocalDealer();
  const std::uint64_t chunk = dealer.Processes() > 1 ? static_cast<std::uint64_t>(threads) : m * k;
  std::atomic<std::uint64_t> finished{0};
  const bool with_witness = !options.out_dir.empty();
  dealer.Deal(
      0, m * k, std::max<std::uint64_t>(chunk, 1),
      [&](std::uint64_t begin, std::uint64_t end) {
        std::vector<std::string> items(end - begin);
        arena.execute([&] {
          oneapi::tbb::parallel_for(begin, end, [&](std::uint64_t i) {
            const std::size_t point = i / k, pair = i % k;
            const std::size_t stream = SharesPairs(options.parameter) ? 0 : point;
            items[i - begin] =
                PairBytes(RunPair(options, options.values[point], stream * k + pair), with_witness);
            if (options.progress) options.progress(++finished, m * k);
          });
        });
        return items;
      },
      [&](std::uint64_t i, std::string&& bytes) {
        pairs[i] = PairFromBytes(bytes, with_witness);
        return true;
      });
  if (!dealer.Reduces()) return r;  // an MPI worker or a shard: the reducer has the cells
  for (std::size_t i = 0; i < m; ++i)
    r.points.push_back(Summarise(options, options.values[i],
                                 {pairs.begin() + i * k, pairs.begin() + (i + 1) * k}));
  FitSweep(r);
  // The empirical constant over the uncensored samples only (as tightness's row constant): a
  // censored needed length is a bound, never a value (docs/statistics.md §5).
  r.empirical_constant = kNaN;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    if (!(p.bound > 0)) continue;
    for (const SweepPair& q : p.pairs) {
      if (q.censoring != Censoring::kNone) continue;
      const double ratio = static_cast<double>(q.needed) / p.bound;
      if (std::isnan(r.empirical_constant) || ratio > r.empirical_constant) {
        r.empirical_constant = ratio;
        r.constant_point = static_cast<int>(i);
        r.constant_pair = q.index;
      }
    }
  }
  if (with_witness) {
    std::error_code error;
    std::filesystem::create_directories(
        std::filesystem::path(options.out_dir) / ParameterName(options.parameter), error);
    if (error) throw OptionError("out_dir", error.message(), options.out_dir);
    arena.execute([&] {
      oneapi::tbb::parallel_for(std::size_t{0}, m * k, [&](std::size_t c) {
        SweepPoint& p = r.points[c / k];
        SweepPair& q = p.pairs[c % k];
        q.witness_file = WritePairWitness(options, p, static_cast<int>(c / k), q);
      });
    });
  }
  return r;
}

std::string HardmaxRegimeWarning(const SweepResult& r) {
  std::string list;
  double largest = 0;
  std::uint64_t shortest = 0;
  int outside = 0;
  for (const SweepPoint& p : r.points) {
    if (p.hardmax_regime) continue;
    ++outside;
    for (const SweepPair& q : p.pairs)
      if (!q.hardmax_regime && (shortest == 0 || q.x_length < shortest)) shortest = q.x_length;
    largest = std::max(largest, p.t_hard);
    list += fmt::format("{}{} = {:g} (T_hard = {:.6g})", list.empty() ? "" : ", ",
                        ParameterName(r.options.parameter), p.value, p.t_hard);
  }
  if (list.empty()) return "";
  return fmt::format(
      "{} of {} points have |x| = {} < {:g}·T_hard = {:g}·2^(p/gamma), outside the hardmax "
      "regime: {}; marked hardmax_regime: false and left out of the fit (|x| >= {:.0f} "
      "reaches it)",
      outside, r.points.size(), shortest, kHardmaxRegimeMargin, kHardmaxRegimeMargin, list,
      std::ceil(kHardmaxRegimeMargin * largest));
}

io::Json SweepOptionsToJson(const SweepOptions& o) {
  io::Json json{
      {"parameter", ParameterName(o.parameter)},
      {"values", o.values},
      {"eps", o.eps},
      {"pairs", o.pairs},
      {"x_length", o.x_length},
      {"fixed_n", o.fixed_n},
      {"input", InputKindName(o.input)},
      {"delta", o.delta},
      {"grid", o.base.grid},
      {"simulator", "frequency"},
      {"method", o.search ? "search" : "random"},
      {"iterations", o.iterations},
      {"precision_bits", o.precision_bits},
      {"bound", o.parameter == StudyParameter::kMargin ? "max(thm4.1-hardmax, thm4.1-length)"
                                                       : "thm4.1-length"}};
  if (o.pair) json["pair"] = {{"f_file", o.pair->f_file}, {"g_file", o.pair->g_file}};
  return json;
}

double CertifiedLength(const ConstantMap& c) {
  // A finite pair with near-ties (0 < gap ≤ θ) has no length that certifies every x: past
  // T_split = 2^(p/ϑ) its attention leaves the hardmax regime the certificate needs
  // (docs/theory.md §2.6).
  const auto tie = c.find("near_tie_spread");
  if (c.at("p") > 0 && tie != c.end() && !(tie->second == 0.0))
    return std::numeric_limits<double>::infinity();
  double n = FindBound("frequency-length").value(c);
  if (c.at("p") > 0) n = std::max(n, FindBound("thm4.1-hardmax").value(c));
  return n;
}

}  // namespace ltsim
