// `ltsim tightness` for Theorem 4.1: lower side from exact thresholds of closed-form families,
// upper side from the frequency construction's certificate, verdicts (docs/tightness.md); the
// Lemma 5.3 rows are in tightness_lemma53.cpp, the Theorem 5.2 rows in tightness_52.cpp.
#include "ltsim/study/tightness.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>

#include "ltsim/bounds/registry.h"
#include "ltsim/check/needed_length.h"
#include "ltsim/construct/families.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/strings/sources.h"
#include "ltsim/study/point_witness.h"
#include "ltsim/study/sweep.h"
#include "ltsim/study/user_family.h"
#include "ltsim/threshold/threshold.h"
#include "tightness_42.h"
#include "tightness_52.h"
#include "tightness_lemma53.h"

namespace ltsim {
namespace {

constexpr std::uint64_t kMaxExactLength = 1'000'000;
constexpr double kResolution = 0.01;         // relative resolution of exponent comparisons
constexpr double kFirstInverseMargin = 1.5;  // 1/γ of the margin row's first point

// The grid and fixed settings of one Theorem 4.1 row (docs/tightness.md §3).
struct RowPlan {
  StudyParameter parameter = StudyParameter::kEps;
  std::vector<double> values;
  double eps = 0.1, slope = 4;
  int alphabet = 2, period = 1, locality = 0;
  int nested_heads = 0;  ///< > 0: the nested family with this many heads (eps, scale rows)
};

RowPlan PlanRow(StudyParameter parameter, int points, bool large, int heads) {
  RowPlan p;
  p.parameter = parameter;
  if ((parameter == StudyParameter::kEps || parameter == StudyParameter::kScale) && heads >= 2) {
    // The nested family (docs/families.md): T* ≈ (S·a/((κ − 1)ε))^S. The grids keep T* below
    // the closed form's range and the exact threshold fast: S = 2 halves ε (doubles a) a
    // point, T* from ~100 to ~2.7·10^4; S = 3 steps by 2^(1/4) in ε (2^(2/5) in a), T* from
    // ~120–400 to ~3.5·10^3.
    // The scale row at S = 2 starts at a = 3 with ε = 0.4, where L is within ~20% of
    // proportional to a (the unit's fixed −2κε term weighs less as a grows).
    p.nested_heads = heads;
    p.eps = parameter == StudyParameter::kScale && heads == 2 ? 0.4 : 0.2;
    p.slope = 1.03;  // the eps row's slope; the scale row's grid starts at `first`
    const double first = heads == 2 ? 3.0 : 0.7;
    for (int i = 0; i < points; ++i) {
      if (parameter == StudyParameter::kEps)
        p.values.push_back(p.eps / std::exp2(i * (heads == 2 ? 1.0 : 0.25)));
      if (parameter == StudyParameter::kScale)
        p.values.push_back(first * std::exp2(i * (heads == 2 ? 1.0 : 0.4)));
    }
    return p;
  }
  for (int i = 0; i < points; ++i) {
    if (parameter == StudyParameter::kEps) p.values.push_back(0.1 / std::exp2(i));
    if (parameter == StudyParameter::kScale) p.values.push_back(2 * std::exp2(i));
    if (parameter == StudyParameter::kPeriod) p.values.push_back(1 + i);
    if (parameter == StudyParameter::kAlphabet) p.values.push_back(2 + i);
    if (parameter == StudyParameter::kLocality)
      p.values.push_back(1 + i);  // τ = 0 has no logarithm
    if (parameter == StudyParameter::kMargin)
      p.values.push_back(1 / (kFirstInverseMargin + 0.25 * i));  // γ
  }
  if (parameter == StudyParameter::kScale) p.eps = 0.02;
  // ε below the gap 1/2 of docs/tightness.md §2 and large enough that the construction's own
  // length Δ·D(D+τ)(L/ε)² stays below T_hard = 2^(p/γ) on the grid.
  if (parameter == StudyParameter::kMargin) p.eps = 0.45;
  // Δ = 5 (D* = 10) already costs ~10 µs a statistic: larger grids are an option (--points).
  if (parameter == StudyParameter::kPeriod && points > 4 && !large) p.values.resize(4);
  return p;
}

double Uniform(std::uint64_t seed) {
  boost::random::mt19937_64 engine(seed);
  return boost::random::uniform_real_distribution<double>(0, 1)(engine);
}

// A nested-family member (docs/families.md) as a tightness pair: height κ ∈ [2.5, 3.5) from
// the member's uniform u. A slope that puts a statistic on the boundary Σu = (κ − 1)ε/a (the
// builder refuses it: the gap would equal ε) is nudged up by 10^-4 relative, at most 8 times.
FamilyMember NestedMember(int heads, double slope, double eps, double u) {
  const FamilyValues values = {{"alphabet", heads}, {"eps", eps}, {"height", 2.5 + u}};
  for (int attempt = 0;; ++attempt) {
    FamilyValues v = values;
    v["slope"] = slope * (1 + 1e-4 * attempt);
    try {
      FamilyMember p = BuildFamilyMember("nested", v);
      p.semantics =
          "hardmax attention with tie tolerance 1e-9, positions 1-based, the query among the "
          "keys; " +
          std::to_string(heads) +
          " heads on nested supports and one MLP unit "
          "(docs/families.md); an ℓ∞ gap > ε on the readout";
      return p;
    } catch (const InputError&) {
      if (attempt == 8) throw;
    }
  }
}

// The member k of point i: its pair and ε.
FamilyMember Member(const RowPlan& plan, int i, std::uint64_t member_seed, int bits, double* eps) {
  const double v = plan.values[i], u = Uniform(member_seed);
  *eps = plan.eps;
  if (plan.parameter == StudyParameter::kMargin) {
    // η = κγ: ln T* = p ln 2·(1/γ − κ + O(κ²γ)), so the slope in 1/γ stays p ln 2 and only
    // the intercept moves; κ ≥ 2/(T_hard·p·ln 2) at the smallest T_hard keeps ≥ 2 integers in
    // [T_hard(g), T_hard(f)) (docs/tightness.md §2).
    const double t_min = std::exp2(bits * kFirstInverseMargin);
    const double kappa = (1 + 0.5 * u) * 2 / (t_min * bits * std::log(2.0));
    return BuildFamilyMember("margin",
                             {{"margin", v}, {"bits", bits}, {"eta", std::min(0.1, kappa * v)}});
  }
  if (plan.parameter == StudyParameter::kEps) *eps = v;
  const double slope = plan.parameter == StudyParameter::kScale ? v : plan.slope;
  if (plan.nested_heads > 0) return NestedMember(plan.nested_heads, slope, *eps, u);
  const int S = plan.parameter == StudyParameter::kAlphabet ? static_cast<int>(v) : plan.alphabet;
  const int D = plan.parameter == StudyParameter::kPeriod ? static_cast<int>(v) : plan.period;
  const int tau = plan.parameter == StudyParameter::kLocality ? static_cast<int>(v) : plan.locality;
  return BuildFamilyMember("offset-bump", {{"alphabet", S},
                                           {"period", D},
                                           {"locality", tau},
                                           {"slope", slope},
                                           {"eps", *eps},
                                           {"offset", u}});
}

double Regressor(StudyParameter parameter, double value, double lipschitz) {
  if (parameter == StudyParameter::kEps) return 1 / value;
  if (parameter == StudyParameter::kScale) return lipschitz;
  if (parameter == StudyParameter::kMargin) return 1 / value;
  return value;
}

std::string Stem(const TightnessOptions& o, StudyParameter parameter, int i, int k) {
  return (std::filesystem::path(o.out) / ParameterName(parameter) / fmt::format("p{}_m{}", i, k))
      .string();
}

struct Cell {
  TightnessSample lower, upper;
  std::vector<Run> witness;
  FamilyMember pair;
  double eps = 0;
};

// A member's certified T*: the pruned exact search (docs/theory.md §11) up to 10^6, stopped
// after the window in which its evaluated statistics pass `budget`; then T* > checked_up_to is
// a censored point.
ThresholdResult MemberThreshold(const Transformer& f, const Transformer& g, double eps,
                                std::uint64_t budget) {
  ThresholdOptions t;
  t.epsilon = eps;
  t.max_length = kMaxExactLength;
  t.max_evaluations = budget;
  ThresholdResult r = FindThreshold(f, g, t);
  LTSIM_CHECK(r.exhaustive);
  return r;
}

Cell RunCell(const TightnessOptions& o, const RowPlan& plan, int i, int k) {
  Cell cell;
  // Margin and nested members keep their κ over the grid (one intercept shift a member,
  // docs/tightness.md §2), the bump members draw a new offset per point.
  const std::uint64_t index = plan.parameter == StudyParameter::kMargin || plan.nested_heads > 0
                                  ? k
                                  : static_cast<std::uint64_t>(i) * 1000 + k;
  const std::uint64_t seed =
      StreamSeed(o.seed, std::string("tightness/") + ParameterName(plan.parameter), index);
  cell.pair = Member(plan, i, seed, o.precision_bits, &cell.eps);
  const FamilyMember& p = cell.pair;
  ConstantMap c = PairConstants(p.f, p.g);
  c["eps"] = cell.eps;
  const ThresholdResult r = MemberThreshold(p.f, p.g, cell.eps, o.statistics_budget);
  cell.lower.seed = cell.upper.seed = seed;
  cell.lower.lipschitz = cell.upper.lipschitz = c["L"];
  cell.lower.checked_up_to = r.checked_up_to;
  for (TightnessSample* side : {&cell.lower, &cell.upper}) {
    side->eps = cell.eps;
    side->period = c["Delta"];
    side->alphabet = c["S"];
    side->locality = c["tau"];
  }
  if (r.first_disagreement) {
    cell.lower.sample = {static_cast<double>(*r.first_disagreement), Censoring::kNone};
    cell.lower.string = r.witness;
  } else {
    cell.lower.sample = {static_cast<double>(r.checked_up_to), Censoring::kAbove};
  }
  cell.upper.sample = {CertifiedLength(c), Censoring::kNone};
  if (!o.out.empty()) {
    PointWitness w;
    w.kind = "first-disagreement";
    w.study = "tightness";
    w.label = "lower side: certified first disagreement T* (exact threshold)";
    w.context = {{"theorem", kTheoremNames.Name(o.theorem)},
                 {"parameter", ParameterName(plan.parameter)},
                 {"value", plan.values[i]},
                 {"point", i},
                 {"member", k},
                 {"seed", seed},
                 {"family", p.family},
                 {"upper_side_certified", cell.upper.sample.value}};
    w.f = p.f;
    w.g = p.g;
    w.eps = cell.eps;
    w.max_length = r.checked_up_to;
    w.x = r.witness;
    w.value = static_cast<std::uint64_t>(cell.lower.sample.value);
    w.censored = !r.first_disagreement;
    RecheckPoint(w);
    cell.lower.witness = cell.upper.witness =
        OutRelative(o, WritePointWitness(w, Stem(o, plan.parameter, i, k)));
  }
  return cell;
}

// The frequency simulator on the worst of two x for the point's first member (neither bound),
// |x| grown adaptively (GrowSimulatorLength): the string at T* with its runs scaled up to about
// |x|, and an i.i.d. uniform x of length |x|.
SimulatorCheck CheckSimulator(const TightnessOptions& o, const Cell& cell, const RowPlan& plan,
                              int i) {
  const FamilyMember& p = cell.pair;
  const ConstantMap c = PairConstants(p.f, p.g);
  const double t_hard = c.at("p") > 0 ? std::exp2(c.at("p") / c.at("gamma")) : 1;
  const std::uint64_t start = std::min<std::uint64_t>(
      o.max_x_length,
      std::max<std::uint64_t>(10000, static_cast<std::uint64_t>(kHardmaxRegimeMargin * t_hard)));
  std::uint64_t total = 0;
  for (const Run& r : cell.lower.string) total += r.count;
  const std::uint64_t iid_seed =
      StreamSeed(o.seed, std::string("tightness-x/") + ParameterName(plan.parameter), i);
  // The witness's factor: ⌊|x|/|T* string|⌋ at the first |x| (as before adaptive |x|), the
  // nearest factor after (so that a witness longer than the first |x| grows too), never above
  // the cap unless 1.
  std::uint64_t step = 0, last_factor = 0, last_witness_needed = 0;
  bool last_witness_reached = false;
  const auto measure = [&](std::uint64_t length) {
    std::uint64_t factor = 0;
    if (total > 0) {
      factor = step == 0 ? length / total : (length + total / 2) / total;
      if (factor * total > o.max_x_length) factor = o.max_x_length / total;
      factor = std::max<std::uint64_t>(1, factor);
    }
    ++step;
    SimulatorStep s;
    s.x_length = length;
    const auto consider = [&](const std::string& kind, std::uint64_t x_length, std::uint64_t needed,
                              bool reached) {
      if (needed >= s.needed) {
        s.needed = needed;
        s.reached = reached;
        s.attained_x_length = x_length;
        s.x_kind = kind;
      }
    };
    if (total > 0) {
      const std::string kind = "witness at T* scaled x" + std::to_string(factor);
      if (factor != last_factor) {  // the same x as the last step: not measured again
        std::vector<Run> runs;
        for (const Run& r : cell.lower.string) AppendRun(runs, r.token, r.count * factor);
        const auto x = MakeRunSource(runs, "scaled witness");
        last_witness_needed = NeededLength(p.f, p.g, *x, cell.eps, &last_witness_reached);
        last_factor = factor;
      }
      consider(kind, factor * total, last_witness_needed, last_witness_reached);
    }
    const auto x = MakeIidSource(length, p.f.alphabet, iid_seed, {});
    bool reached = false;
    const std::uint64_t needed = NeededLength(p.f, p.g, *x, cell.eps, &reached);
    consider("iid uniform", x->length(), needed, reached);
    return s;
  };
  SimulatorCheck s = GrowSimulatorLength(start, o.max_x_length, cell.upper.sample.value, measure);
  s.hardmax_regime = static_cast<double>(s.steps.back().x_length) >= kHardmaxRegimeMargin * t_hard;
  return s;
}

// A lower side steeper than the certified upper side contradicts the certificate only where
// its lengths exceed the certified ones. When every uncensored lower length stays below the
// upper side's smallest length at the same point, the two slopes only say that the sides would
// meet beyond the grid (for margin, a flat frequency-length above every 2^(p/γ) of the grid):
// no contradiction on the data, so the verdict is inconclusive and the reason says why.
VerdictResult CheckCrossing(const TightnessRow& row) {
  double worst = 0;  // largest lower/upper ratio over the points
  double at = 0;
  for (const TightnessPoint& point : row.points) {
    double upper = std::numeric_limits<double>::infinity();
    for (const TightnessSample& u : point.upper) upper = std::min(upper, u.sample.value);
    for (const TightnessSample& l : point.lower) {
      if (l.sample.censoring != Censoring::kNone || !(upper > 0)) continue;
      if (l.sample.value / upper > worst) {
        worst = l.sample.value / upper;
        at = point.value;
      }
    }
  }
  if (worst > 1) return row.verdict;
  VerdictResult v;
  v.verdict = Verdict::kInconclusive;
  v.gap = v.least_gap = std::numeric_limits<double>::quiet_NaN();
  v.reason = fmt::format(
      "lower side {:.3g} [{:.3g}, {:.3g}] is steeper than the upper side {:.3g} [{:.3g}, {:.3g}] "
      "on this grid, but every lower length is below the certified one (largest ratio {:.3g} at "
      "{} = {:.4g}): the sides would meet beyond the grid, no contradiction on the data",
      row.lower.exponent, row.lower.ci->first, row.lower.ci->second, row.upper.exponent,
      row.upper.ci->first, row.upper.ci->second, worst, row.name, at);
  if (std::isfinite(row.paper)) v.reason += fmt::format("; paper's exponent {:.4g}", row.paper);
  return v;
}

// A row's verdict from its fitted sides and the paper's exponent (docs/statistics.md §4).
// Exponents closer than 1% of the paper's are not told apart; only a contradiction of the upper
// side is checked for a crossing (one of the paper's exponent, DecideVerdict's first test,
// stands).
void JudgeRow(TightnessRow& row) {
  const double tolerance =
      kResolution * std::max(1.0, std::isfinite(row.paper) ? std::abs(row.paper) : 1.0);
  row.verdict = DecideVerdict(row.lower, row.upper, row.paper, tolerance);
  const bool above_paper =
      std::isfinite(row.paper) && row.lower.ci && row.lower.ci->first > row.paper + tolerance;
  if (row.verdict.verdict == Verdict::kContradicts && !above_paper && row.upper.ci &&
      row.lower.ci->first > row.upper.ci->second)
    row.verdict = CheckCrossing(row);
  if (row.verdict.verdict == Verdict::kContradicts)
    row.verdict.reason += "; witness family " + row.family + ", relying on: " + row.semantics;
}

TightnessRow Summarise(const TightnessOptions& o, const RowPlan& plan, std::vector<Cell> cells,
                       std::vector<SimulatorCheck> checks) {
  TightnessRow row;
  row.theorem = o.theorem;
  row.parameter = plan.parameter;
  row.name = ParameterName(plan.parameter);
  row.quantity = "length";
  const bool margin = plan.parameter == StudyParameter::kMargin;
  row.regressor = plan.parameter == StudyParameter::kEps        ? "1/eps"
                  : plan.parameter == StudyParameter::kScale    ? "L"
                  : margin                                      ? "1/gamma"
                  : plan.parameter == StudyParameter::kPeriod   ? "Delta"
                  : plan.parameter == StudyParameter::kAlphabet ? "S"
                                                                : "tau";
  row.fit = margin ? "log-linear (ln N = a + b/gamma)" : "log-log (ln N = a + b ln x)";
  const FamilyMember& first = cells.front().pair;
  row.family = first.family;
  row.semantics = first.semantics;
  row.class_text =
      plan.nested_heads > 0
          ? fmt::format(
                "one layer, hardmax, {0} heads (nested supports), MLP width 1 (f) / "
                "zero readout (g), S = {0}, Delta = 1, tau = 0, {1}",
                plan.nested_heads,
                plan.parameter == StudyParameter::kEps
                    ? "eps varied"
                    : fmt::format("eps = {}, MLP slope varied", plan.eps))
      : margin
          ? fmt::format(
                "one layer, S = 2, 1 head, finite p = {} bits, no MLP, Delta = 1, "
                "tau = 0, eps = {}",
                o.precision_bits, plan.eps)
          : fmt::format(
                "one layer, hardmax, 1 head, MLP width 3 (g) / none (f), S = {}, "
                "Delta = {}, tau = {}, eps = {}{}",
                plan.parameter == StudyParameter::kAlphabet ? "varied"
                                                            : std::to_string(plan.alphabet),
                plan.parameter == StudyParameter::kPeriod ? "varied" : std::to_string(plan.period),
                plan.parameter == StudyParameter::kLocality ? "varied"
                                                            : std::to_string(plan.locality),
                plan.parameter == StudyParameter::kEps ? "varied" : fmt::format("{}", plan.eps),
                plan.parameter == StudyParameter::kScale ? ", MLP slope varied" : "");
  row.upper_source = margin ? "max(frequency-length, 2^(p/gamma)) [ours: the construction's "
                              "certificate holds from T_hard on]"
                            : "frequency-length [ours]: the construction's certified |z|";
  row.paper = PaperExponent(plan.parameter, o.precision_bits);
  if (plan.parameter == StudyParameter::kEps) row.paper = -row.paper;  // in 1/ε
  row.paper_source = margin ? "thm4.1-hardmax 2^(p/gamma): b = p ln 2"
                            : "thm4.1-length L^2 Delta^7 S^6 tau^2 / eps^2";
  const int k = o.seeds;
  std::vector<SeriesPoint> lower, upper;
  row.constant.name = margin ? "T*/2^(p/gamma)" : "T*·eps/(Delta·L)";
  row.constant.value = -1;
  for (std::size_t i = 0; i < plan.values.size(); ++i) {
    TightnessPoint point;
    point.value = plan.values[i];
    SeriesPoint l, u;
    for (int m = 0; m < k; ++m) {
      const Cell& cell = cells[i * k + m];
      point.lower.push_back(cell.lower);
      point.upper.push_back(cell.upper);
      l.samples.push_back(cell.lower.sample);
      u.samples.push_back(cell.upper.sample);
      if (cell.lower.sample.censoring == Censoring::kNone) {
        const ConstantMap c = PairConstants(cell.pair.f, cell.pair.g);
        const double value = margin
                                 ? cell.lower.sample.value / std::exp2(c.at("p") / c.at("gamma"))
                                 : cell.lower.sample.value * cell.eps / (c.at("Delta") * c.at("L"));
        if (value > row.constant.value) {
          row.constant.value = value;
          row.constant.point = static_cast<int>(i);
          row.constant.sample = m;
          row.constant.witness = cell.lower.witness;
        }
      }
    }
    // The regressor: the value, or the largest L of the point's members for scale.
    double largest_l = 0;
    for (const auto& s : point.lower) largest_l = std::max(largest_l, s.lipschitz);
    point.regressor = Regressor(plan.parameter, point.value, largest_l);
    l.value = u.value = point.value;
    l.regressor = u.regressor = point.regressor;
    if (!checks.empty()) {
      point.simulator = checks[i];
      if (!checks[i].within_certificate)
        row.warnings.push_back(
            fmt::format("{} = {}: the simulator needed {} > the certified {} on {}",
                        ParameterName(plan.parameter), point.value, checks[i].needed,
                        checks[i].certified, checks[i].x_kind));
      if (!checks[i].hardmax_regime)
        row.warnings.push_back(fmt::format(
            "{} = {}: |x| = {} is below 4·T_hard: the simulator check is outside the hardmax "
            "regime",
            ParameterName(plan.parameter), point.value, checks[i].x_length));
    }
    lower.push_back(l);
    upper.push_back(u);
    row.points.push_back(std::move(point));
  }
  // The scale row fits in L, which the grid varies through a slope: when L is far from
  // proportional to that slope on the grid, the fitted exponent is a local slope, not the
  // asymptotic one (say so).
  if (plan.parameter == StudyParameter::kScale && row.points.size() >= 2) {
    const auto ratio = [](const TightnessPoint& q) { return q.regressor / q.value; };
    const double drift = ratio(row.points.back()) / ratio(row.points.front());
    if (std::abs(drift - 1) > 0.1)
      row.warnings.push_back(fmt::format(
          "L/slope changes by a factor {:.3g} over the grid: L is not proportional to the "
          "slope here, so the exponent in L is a local slope",
          drift));
  }
  FitOptions fit;
  fit.scale = margin ? FitScale::kLogLinear : FitScale::kLogLog;
  fit.seed = StreamSeed(o.seed, std::string("tightness-fit/") + ParameterName(plan.parameter));
  row.lower = FitSeries(lower, fit);
  row.upper = FitSeries(upper, fit);
  JudgeRow(row);
  return row;
}

// The joint log-log fit of `--joint` (docs/tightness.md §3) over the rows but margin.
TightnessJoint FitJointRows(const std::vector<TightnessRow>& rows) {
  TightnessJoint joint;
  const auto name_of = [](StudyParameter p) -> std::string {
    switch (p) {
      case StudyParameter::kEps:
        return "1/eps";
      case StudyParameter::kScale:
        return "L";
      case StudyParameter::kPeriod:
        return "Delta";
      case StudyParameter::kAlphabet:
        return "S";
      case StudyParameter::kLocality:
        return "tau";
      default:
        return "";
    }
  };
  const auto value_of = [](const std::string& name, const TightnessSample& s) {
    if (name == "1/eps") return s.eps > 0 ? 1 / s.eps : 0.0;
    if (name == "L") return s.lipschitz;
    if (name == "Delta") return s.period;
    if (name == "S") return s.alphabet;
    return s.locality;
  };
  // A parameter with no logarithm in another row's pairs (τ = 0 outside the locality row) would
  // drop those rows' samples: the rows varying it are left out instead, and fitted on their own.
  std::vector<const TightnessRow*> in;
  for (const TightnessRow& row : rows) {
    if (name_of(row.parameter).empty()) {
      joint.left_out.push_back(row.name + ": log-linear in " + row.regressor +
                               " (ln N = a + b/gamma), not log-log: fitted on its own");
      continue;
    }
    in.push_back(&row);
  }
  std::vector<const TightnessRow*> kept;
  for (const TightnessRow* row : in) {
    const std::string name = name_of(row->parameter);
    std::string other;
    for (const TightnessRow* r : in)
      if (name_of(r->parameter) != name)
        for (const TightnessPoint& point : r->points)
          for (const TightnessSample& s : point.lower)
            if (other.empty() && !(value_of(name, s) > 0))
              other =
                  fmt::format("{} = {:g} in the {} row's pairs", name, value_of(name, s), r->name);
    if (!other.empty()) {
      joint.left_out.push_back(row->name + ": " + other + " has no logarithm: fitted on its own");
      continue;
    }
    kept.push_back(row);
  }
  for (const TightnessRow* row : kept) {
    const std::string name = name_of(row->parameter);
    joint.rows.push_back(row->name);
    if (std::find(joint.parameters.begin(), joint.parameters.end(), name) == joint.parameters.end())
      joint.parameters.push_back(name);
    if (std::find(joint.families.begin(), joint.families.end(), row->family) ==
        joint.families.end())
      joint.families.push_back(row->family);
  }
  // Rows of different families share the exponents but not the constant: one intercept a
  // family (an indicator column for every family after the first).
  const std::size_t k = joint.parameters.size();
  std::vector<std::string> names = joint.parameters;
  for (std::size_t f = 1; f < joint.families.size(); ++f)
    names.push_back("family=" + joint.families[f]);
  std::map<std::string, int> no_logarithm;
  std::vector<JointObservation> observations;
  for (const TightnessRow* kept_row : kept) {
    const TightnessRow& row = *kept_row;
    for (std::size_t i = 0; i < row.points.size(); ++i)
      for (std::size_t m = 0; m < row.points[i].lower.size(); ++m) {
        const TightnessSample& s = row.points[i].lower[m];
        TightnessJoint::Observation ob;
        ob.row = row.name;
        ob.point = static_cast<int>(i);
        ob.member = static_cast<int>(m);
        ob.sample = s.sample;
        JointObservation j;
        j.value = s.sample.value;
        j.censoring = s.sample.censoring;
        bool positive = true;
        for (const std::string& p : joint.parameters) {
          const double v = value_of(p, s);
          ob.values.push_back(v);
          const bool ok = v > 0 && std::isfinite(v);
          if (!ok && positive) ++no_logarithm[fmt::format("{} = {:g}", p, v)];
          positive = positive && ok;
          j.regressors.push_back(ok ? std::log(v) : 0.0);
        }
        for (std::size_t f = 1; f < joint.families.size(); ++f)
          j.regressors.push_back(row.family == joint.families[f] ? 1.0 : 0.0);
        joint.observations.push_back(ob);
        if (!positive) {
          ++joint.dropped;
          continue;
        }
        observations.push_back(j);
      }
  }
  for (const auto& [what, count] : no_logarithm)
    joint.dropped_note += fmt::format("{}{} in {} sample{}", joint.dropped_note.empty() ? "" : ", ",
                                      what, count, count == 1 ? "" : "s");
  if (joint.parameters.empty()) {
    joint.reason = "no row with a log-log regressor (margin is log-linear in 1/gamma)";
    return joint;
  }
  // A parameter constant over the uncensored samples cannot be told from the intercept.
  for (std::size_t c = 0; c < k; ++c) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const JointObservation& j : observations)
      if (j.censoring == Censoring::kNone) {
        lo = std::min(lo, j.regressors[c]);
        hi = std::max(hi, j.regressors[c]);
      }
    if (!(hi - lo > 1e-12)) {
      joint.reason = "parameter " + joint.parameters[c] +
                     " does not vary across the uncensored samples" +
                     (joint.dropped > 0 ? " with a logarithm (" + joint.dropped_note + " left out)"
                                        : std::string()) +
                     ": no joint fit";
      joint.fit.names = joint.parameters;
      joint.fit.coefficients.assign(joint.parameters.size(),
                                    std::numeric_limits<double>::quiet_NaN());
      joint.fit.ci.assign(joint.parameters.size(), std::nullopt);
      joint.fit.intercept = std::numeric_limits<double>::quiet_NaN();
      for (const JointObservation& j : observations)
        (j.censoring == Censoring::kNone ? joint.fit.observations_used
                                         : joint.fit.observations_censored)++;
      return joint;
    }
  }
  const JointFit fit = FitJoint(names, observations);
  joint.fit = fit;
  joint.fit.names.resize(k);
  joint.fit.coefficients.resize(k);
  joint.fit.ci.resize(k);
  joint.family_intercepts.push_back(fit.intercept);
  for (std::size_t f = 1; f < joint.families.size(); ++f)
    joint.family_intercepts.push_back(fit.intercept + fit.coefficients[k + f - 1]);
  joint.reason = fit.reason;
  return joint;
}

// The regressor of a user's parameter: 1/ε for eps (as the built-in eps row), else the value.
double UserRegressor(const std::string& parameter, double value) {
  return parameter == "eps" ? 1 / value : value;
}

// One row over a user's family directory (docs/tightness.md §7): each member's T* by the same
// exact threshold as RunCell (meta's T* checked, never used), the upper side the construction's
// certified length at the member's constants, the paper's exponent the least-squares slope of
// the registry's thm4.1-length at the members' constants, the verdict as Summarise's.
TightnessRow RunUserFamilyRow(const TightnessOptions& o) {
  UserFamilyOptions read;
  read.dir = o.family_dir;
  read.parameter = o.family_parameter;
  read.eps = o.family_eps;
  UserFamily family = ReadUserFamily(read);
  const std::string& parameter = family.parameter;
  if (parameter == "eps" && o.family_eps > 0)
    throw OptionError("eps", "the family's parameter is eps: each member's ε is its meta.eps");
  for (const UserFamilyMember& m : family.members) {
    if (m.f.layers.size() != 1 || m.g.layers.size() != 1)
      throw InputError(m.f_file + ", " + m.g_file +
                       ": tightness of a family needs one-layer pairs (Theorem 4.1)");
    if (!(UserRegressor(parameter, m.value) > 0))
      throw InputError(fmt::format("{}: {} = {}: the log-log fit needs a positive {}", m.f_file,
                                   parameter, m.value, parameter == "eps" ? "eps" : "value"));
  }
  // Points: the distinct values in increasing regressor (for eps: decreasing ε, as the built-in
  // eps row), members by directory name within one.
  std::stable_sort(family.members.begin(), family.members.end(),
                   [&parameter](const UserFamilyMember& a, const UserFamilyMember& b) {
                     return UserRegressor(parameter, a.value) < UserRegressor(parameter, b.value);
                   });
  std::vector<double> values;
  for (const UserFamilyMember& m : family.members)
    if (values.empty() || m.value != values.back()) values.push_back(m.value);
  if (values.size() < 3)
    throw InputError(fmt::format("{}: {} distinct value{} of {}: a fit needs at least 3",
                                 family.dir, values.size(), values.size() == 1 ? "" : "s",
                                 parameter));
  if (!o.out.empty()) {
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(o.out) / "family", error);
    if (error) throw OptionError("out", error.message(), o.out);
  }
  const std::size_t n = family.members.size();
  std::vector<TightnessSample> lower(n), upper(n);
  const int threads = o.threads > 0 ? o.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  std::atomic<std::uint64_t> finished{0};
  arena.execute([&] {
    oneapi::tbb::parallel_for(std::size_t{0}, n, [&](std::size_t k) {
      const UserFamilyMember& m = family.members[k];
      ConstantMap c = PairConstants(m.f, m.g);
      c["eps"] = m.eps;
      const ThresholdResult r = MemberThreshold(m.f, m.g, m.eps, o.statistics_budget);
      TightnessSample& l = lower[k];
      l.name = upper[k].name = m.name;
      l.recorded = m.recorded_first_disagreement;
      l.lipschitz = upper[k].lipschitz = c["L"];
      l.checked_up_to = r.checked_up_to;
      for (TightnessSample* side : {&l, &upper[k]}) {
        side->eps = m.eps;
        side->period = c["Delta"];
        side->alphabet = c["S"];
        side->locality = c["tau"];
      }
      l.sample = r.first_disagreement
                     ? Sample{static_cast<double>(*r.first_disagreement), Censoring::kNone}
                     : Sample{static_cast<double>(r.checked_up_to), Censoring::kAbove};
      l.string = r.witness;
      upper[k].sample = {CertifiedLength(c), Censoring::kNone};
      if (!o.out.empty()) {
        PointWitness w;
        w.kind = "first-disagreement";
        w.study = "tightness";
        w.label = "lower side: certified first disagreement T* (exact threshold)";
        w.context = {{"theorem", kTheoremNames.Name(o.theorem)},
                     {"family_dir", family.dir},
                     {"member", m.name},
                     {"parameter", parameter},
                     {"value", m.value},
                     {"upper_side_certified", upper[k].sample.value}};
        w.f = m.f;
        w.g = m.g;
        w.eps = m.eps;
        w.max_length = r.checked_up_to;
        w.x = r.witness;
        w.value = static_cast<std::uint64_t>(l.sample.value);
        w.censored = !r.first_disagreement;
        RecheckPoint(w);
        const std::string stem = (std::filesystem::path(o.out) / "family" / m.name).string();
        l.witness = upper[k].witness = OutRelative(o, WritePointWitness(w, stem));
      }
      if (o.progress) o.progress(++finished, n);
    });
  });
  TightnessRow row;
  row.theorem = o.theorem;
  row.family_dir = family.dir;
  row.name = parameter;
  row.quantity = "length";
  row.regressor = parameter == "eps" ? "1/eps" : parameter;
  row.fit = "log-log (ln N = a + b ln x)";
  row.class_text = fmt::format("the {} members of {} (one-layer pairs as given), {} varied",
                               family.members.size(), family.dir, parameter);
  row.family = "user family " + family.dir;
  row.semantics = "the pairs as given (their model files' attention, positions and tie tolerance)";
  row.lower_source = "exact threshold (ltsim threshold) of each member of " + family.dir;
  row.upper_source = "frequency-length [ours]: the construction's certified |z|";
  row.paper_source =
      "thm4.1-length L^2 Delta^7 S^6 tau^2 / eps^2 at the members' constants: its least-squares "
      "slope in " +
      row.regressor;
  row.constant.name = "T*·eps/(Delta·L)";
  row.constant.value = -1;
  std::vector<SeriesPoint> lower_series, upper_series;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int bounds = 0;
  for (std::size_t k = 0; k < n;) {
    TightnessPoint point;
    point.value = family.members[k].value;
    point.regressor = UserRegressor(parameter, point.value);
    SeriesPoint l, u;
    l.value = u.value = point.value;
    l.regressor = u.regressor = point.regressor;
    for (; k < n && family.members[k].value == point.value; ++k) {
      const UserFamilyMember& m = family.members[k];
      const TightnessSample& s = lower[k];
      const int member = static_cast<int>(point.lower.size());
      point.lower.push_back(s);
      point.upper.push_back(upper[k]);
      l.samples.push_back(s.sample);
      u.samples.push_back(upper[k].sample);
      ConstantMap c = PairConstants(m.f, m.g);
      c["eps"] = m.eps;
      if (s.sample.censoring == Censoring::kNone) {
        const double value = s.sample.value * m.eps / (c.at("Delta") * c.at("L"));
        if (value > row.constant.value) {
          row.constant.value = value;
          row.constant.point = static_cast<int>(row.points.size());
          row.constant.sample = member;
          row.constant.witness = s.witness;
        }
      }
      const double bound = FindBound("thm4.1-length").value(c);
      if (std::isfinite(bound) && bound > 0) {
        const double x = std::log(point.regressor), y = std::log(bound);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        ++bounds;
      }
      // meta's T* is checked, never used: a difference is a warning.
      const std::string found = s.sample.censoring == Censoring::kNone
                                    ? fmt::format("{}", s.sample.value)
                                    : fmt::format("none up to {}", s.checked_up_to);
      if (s.recorded && (s.sample.censoring != Censoring::kNone ||
                         static_cast<double>(*s.recorded) != s.sample.value))
        row.warnings.push_back(
            fmt::format("member {}: meta.first_disagreement = {}, the exact threshold gives {}",
                        m.name, *s.recorded, found));
    }
    lower_series.push_back(l);
    upper_series.push_back(u);
    row.points.push_back(std::move(point));
  }
  const double spread = sxx - sx * sx / bounds;
  row.paper = bounds >= 2 && spread > 0 ? (sxy - sx * sy / bounds) / spread
                                        : std::numeric_limits<double>::quiet_NaN();
  FitOptions fit;
  fit.scale = FitScale::kLogLog;
  // The built-in rows' bootstrap stream for the same name: a family of the eps row's members
  // fits to the same numbers.
  fit.seed = StreamSeed(o.seed, std::string("tightness-fit/") + parameter);
  row.lower = FitSeries(lower_series, fit);
  row.upper = FitSeries(upper_series, fit);
  JudgeRow(row);
  return row;
}

void Validate(const TightnessOptions& o) {
  const std::vector<StudyParameter> known = TightnessParameters(o.theorem);
  std::string names;
  for (StudyParameter k : known)
    names += (names.empty() ? "" : ", ") + std::string(ParameterName(k));
  for (StudyParameter p : o.parameters)
    if (std::find(known.begin(), known.end(), p) == known.end())
      throw OptionError("parameters",
                        std::string("'") + ParameterName(p) + "' is not a parameter of Theorem " +
                            kTheoremNames.Name(o.theorem) + " (known: " + names + ")");
  if (o.seeds < 1) throw OptionError("seeds", "must be at least 1");
  if (o.points < 3 || o.points > 12) throw OptionError("points", "must be in [3, 12]");
  if (o.statistics_budget < 1) throw OptionError("statistics_budget", "must be at least 1");
  if (o.heads < 1 || o.heads > 3) throw OptionError("heads", "must be 1, 2 or 3");
  if (o.threads < 0) throw OptionError("threads", "must be at least 0");
  if (o.precision_bits < 1 || o.precision_bits > 12)
    throw OptionError("precision_bits",
                      "must be in [1, 12] (T_hard = 2^(p/gamma) is searched exactly)");
  if (o.max_x_length < 100) throw OptionError("max_x_length", "must be at least 100");
  if (o.theorem == Theorem::k53) ValidateLemma53(o);
  if (o.average_max_length < 64 || o.average_max_length > 100'000)
    throw OptionError("average_max_length", "must be in [64, 100000]");
  for (double a : o.alphas0)
    if (!(a >= 0.05 && a <= 20)) throw OptionError("alphas0", "each alpha0 must be in [0.05, 20]");
  for (std::size_t i = 0; i < o.alphas0.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (fmt::format("{}", o.alphas0[i]) == fmt::format("{}", o.alphas0[j]))
        throw OptionError("alphas0", fmt::format("alpha0 = {} appears twice (each value names "
                                                 "one row and its files)",
                                                 o.alphas0[i]));
  if (!o.alphas0.empty() && o.theorem != Theorem::k42)
    throw OptionError("alphas0", "only for Theorem 4.2");
  if (o.joint && o.theorem != Theorem::k41)
    throw OptionError("joint", "only for Theorem 4.1 (its log-log rows)");
}

}  // namespace

SimulatorCheck GrowSimulatorLength(std::uint64_t start, std::uint64_t cap, double certified,
                                   const std::function<SimulatorStep(std::uint64_t)>& measure) {
  SimulatorCheck s;
  s.certified = certified;
  std::uint64_t length = std::min(start, cap);
  for (;;) {
    SimulatorStep step = measure(length);
    step.x_length = length;
    s.steps.push_back(step);
    if (static_cast<double>(step.needed) > certified) s.within_certificate = false;
    if (step.needed >= s.steps[s.worst_step].needed) s.worst_step = s.steps.size() - 1;
    const std::size_t k = s.steps.size();
    if (static_cast<double>(step.needed) >= certified) {
      s.stop = "upper side";
    } else if (k >= 2 && step.reached && s.steps[k - 2].reached &&
               static_cast<double>(step.needed) <=
                   std::ceil(std::exp2(0.25) * static_cast<double>(s.steps[k - 2].needed))) {
      s.stop = "stopped growing";
    } else if (length >= cap) {
      s.stop = "cap";
    }
    if (!s.stop.empty()) break;
    length = cap / 4 < length ? cap : 4 * length;
  }
  const SimulatorStep& last = s.steps.back();
  s.needed = last.needed;
  s.reached = last.reached;
  s.x_length = last.attained_x_length > 0 ? last.attained_x_length : last.x_length;
  s.x_kind = last.x_kind;
  return s;
}

std::vector<StudyParameter> TightnessParameters(Theorem theorem) {
  switch (theorem) {
    case Theorem::k41:
      return {StudyParameter::kEps,      StudyParameter::kScale,    StudyParameter::kPeriod,
              StudyParameter::kAlphabet, StudyParameter::kLocality, StudyParameter::kMargin};
    case Theorem::k53:
      return {StudyParameter::kN, StudyParameter::kLocality};
    case Theorem::k42:
      return {StudyParameter::kEps, StudyParameter::kAlpha0};
    case Theorem::k52:
      return {StudyParameter::kEps, StudyParameter::kAttentionNorm,
              StudyParameter::kPositionalMargin, StudyParameter::kK};
  }
  return {};
}

TightnessResult RunTightness(const TightnessOptions& options) {
  Validate(options);
  TightnessResult result;
  result.options = options;
  if (result.options.parameters.empty())
    result.options.parameters = TightnessParameters(options.theorem);
  const TightnessOptions& o = result.options;
  if (!o.family_dir.empty()) {
    if (o.theorem != Theorem::k41 || o.joint)
      throw OptionError("family_dir", "only for Theorem 4.1, without --joint (one row)");
    result.options.parameters.clear();
    result.rows.push_back(RunUserFamilyRow(o));
    return result;
  }
  if (o.theorem == Theorem::k53) {
    result.rows = RunLemma53Rows(o);
    return result;
  }
  if (o.theorem == Theorem::k52) {
    result.rows = RunTheorem52Rows(o);
    return result;
  }
  if (o.theorem == Theorem::k42) {
    result.rows = RunTheorem42Rows(o);
    return result;
  }
  std::vector<RowPlan> plans;
  for (StudyParameter p : o.parameters)
    plans.push_back(PlanRow(p, o.points, o.points_given, o.heads));
  if (!o.out.empty()) {
    std::error_code error;
    for (const RowPlan& p : plans)
      std::filesystem::create_directories(std::filesystem::path(o.out) / ParameterName(p.parameter),
                                          error);
    if (error) throw OptionError("out", error.message(), o.out);
  }
  // Every (row, point, member) and every (row, point) check is independent: computed in
  // parallel, stored by index, reduced in order (identical for any thread count).
  struct Task {
    std::size_t row;
    int point, member;
  };
  std::vector<Task> tasks;
  for (std::size_t r = 0; r < plans.size(); ++r)
    for (int i = 0; i < static_cast<int>(plans[r].values.size()); ++i)
      for (int m = 0; m < o.seeds; ++m) tasks.push_back({r, i, m});
  std::vector<Cell> cells(tasks.size());
  const int threads = o.threads > 0 ? o.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  // Progress counts the members, then the simulator checks (one per point).
  std::size_t points = 0;
  for (const RowPlan& p : plans) points += p.values.size();
  const std::uint64_t units = tasks.size() + (o.validate ? points : 0);
  std::atomic<std::uint64_t> finished{0};
  arena.execute([&] {
    oneapi::tbb::parallel_for(std::size_t{0}, tasks.size(), [&](std::size_t t) {
      cells[t] = RunCell(o, plans[tasks[t].row], tasks[t].point, tasks[t].member);
      if (o.progress) o.progress(++finished, units);
    });
  });
  std::vector<SimulatorCheck> checks;
  std::vector<std::size_t> check_cells;
  if (o.validate) {
    for (std::size_t t = 0; t < tasks.size(); ++t)
      if (tasks[t].member == 0) check_cells.push_back(t);
    checks.resize(check_cells.size());
    arena.execute([&] {
      oneapi::tbb::parallel_for(std::size_t{0}, check_cells.size(), [&](std::size_t c) {
        const Task& t = tasks[check_cells[c]];
        checks[c] = CheckSimulator(o, cells[check_cells[c]], plans[t.row], t.point);
        if (o.progress) o.progress(++finished, units);
      });
    });
  }
  std::size_t next = 0, next_check = 0;
  for (const RowPlan& plan : plans) {
    const std::size_t n = plan.values.size() * static_cast<std::size_t>(o.seeds);
    std::vector<Cell> row_cells(cells.begin() + next, cells.begin() + next + n);
    std::vector<SimulatorCheck> row_checks;
    if (o.validate)
      row_checks.assign(checks.begin() + next_check,
                        checks.begin() + next_check + plan.values.size());
    next += n;
    next_check += plan.values.size();
    result.rows.push_back(Summarise(o, plan, std::move(row_cells), std::move(row_checks)));
  }
  if (o.joint) result.joint = FitJointRows(result.rows);
  return result;
}

io::Json TightnessOptionsToJson(const TightnessOptions& o) {
  std::vector<std::string> parameters;
  for (StudyParameter p : o.parameters) parameters.emplace_back(ParameterName(p));
  io::Json j{{"theorem", kTheoremNames.Name(o.theorem)},
             {"parameters", parameters},
             {"seeds", o.seeds},
             {"points", o.points},
             {"budget", o.statistics_budget},
             {"precision_bits", o.precision_bits},
             {"validate", o.validate},
             {"max_x_length", o.max_x_length},
             {"methods", o.schemes},
             {"x_length", o.statistic_x_length},
             {"joint", o.joint}};
  if (o.theorem == Theorem::k42) {
    j["alphas0"] = o.alphas0.empty() ? std::vector<double>{0.5, 1.0, 2.0} : o.alphas0;
    j["average_max_length"] = o.average_max_length;
  }
  if (!o.family_dir.empty()) {
    j["family_dir"] = o.family_dir;
    j["family_parameter"] = o.family_parameter;
    j["family_eps"] = o.family_eps > 0 ? io::Json(o.family_eps) : io::Json(nullptr);
  }
  return j;
}

}  // namespace ltsim
