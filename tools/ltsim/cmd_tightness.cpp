// `ltsim tightness`: lower side, upper side and paper exponent per parameter with a verdict;
// `--replay FILE` re-runs one point witness (docs/tightness.md).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/study/attack_witness.h"
#include "ltsim/study/point_witness.h"
#include "ltsim/study/tightness.h"
#include "output.h"
#include "progress.h"
#include "replay.h"

namespace ltsim::cli {
namespace {

constexpr const char* kLowerLabel =
    "lower side: certified first disagreement T* of a pair (exact threshold): a lower bound on "
    "the true training length N of its class";
constexpr const char* kUpperLabel =
    "upper side: the construction's certified length (every x of the class is simulated within "
    "eps by some z no longer than it)";
constexpr const char* kSimulatorLabel =
    "simulator on found x: the length the frequency simulator needed on particular inputs "
    "(neither bound)";
constexpr const char* kPaperLabel = "paper: the exponent of the registry's bound";

struct TightnessArgs {
  TightnessOptions options;
  std::string theorem = "4.1", parameters, replay, schemes, alphas0;
  CLI::Option *family_parameter = nullptr, *family_eps = nullptr;
  bool json = false, no_validate = false;
};

// The row's parameter: the built-in name, or a user family's meta key.
std::string RowParameter(const TightnessRow& r) {
  return r.family_dir.empty() ? std::string(ParameterName(r.parameter)) : r.name;
}

Json Interval(const std::optional<std::pair<double, double>>& ci) {
  if (!ci) return nullptr;
  return Json::array({Number(ci->first), Number(ci->second)});
}

Json SideJson(const ExponentEstimate& e, const std::vector<TightnessPoint>& points, bool lower,
              const std::string& label, const std::string& source, const std::string& quantity) {
  const bool error = quantity == "statistic error";
  Json j;
  j["label"] = label;
  j["source"] = source;
  j["quantity"] = quantity;
  j["exponent"] = Number(e.exponent);
  j["ci"] = Interval(e.ci);
  j["t_interval"] = Interval(e.t_interval);
  j["bootstrap_interval"] = Interval(e.bootstrap_interval);
  j["level"] = 0.95;
  j["points_used"] = e.points_used;
  j["points_censored"] = e.points_censored;
  j["reason"] = e.reason;
  j["points"] = Json::array();
  for (const TightnessPoint& p : points) {
    const std::vector<TightnessSample>& samples = lower ? p.lower : p.upper;
    if (samples.empty()) continue;  // 5.2: a side with no number (its reason says why)
    SeriesPoint s;
    Json members = Json::array();
    for (const TightnessSample& m : samples) {
      s.samples.push_back(m.sample);
      Json member = {{"length", Number(m.sample.value)},
                     {"censored", m.sample.censoring != Censoring::kNone},
                     {"censoring", CensoringName(m.sample.censoring)},
                     {"seed", m.seed}};
      if (!std::isnan(m.lipschitz)) member["L"] = Number(m.lipschitz);
      if (error) member["error"] = Number(m.sample.value);
      if (!m.input.empty()) member["input"] = m.input;
      if (lower && !error) member["checked_up_to"] = m.checked_up_to;
      if (!m.witness.empty()) member["witness"] = m.witness;
      if (!m.name.empty()) member["member"] = m.name;  // a user family's member directory
      if (lower && m.recorded && !(m.alpha0 > 0)) member["meta_first_disagreement"] = *m.recorded;
      if (lower && m.alpha0 > 0) {  // 4.2: the average case's numbers
        member["alpha0"] = Number(m.alpha0);
        member["later_gap"] = Number(m.later_gap);
        member["later_up_to"] = m.later_up_to;
        member["average_limit"] = Number(m.average_limit);
        member["direct_sum_first_disagreement"] = m.recorded ? Json(*m.recorded) : Json(nullptr);
      }
      members.push_back(member);
    }
    const Spread spread = SampleSpread(s);
    const Censoring c = PointCensoring(s);
    Json point = {{"value", p.value},
                  {"regressor", Number(p.regressor)},
                  {"length", Number(spread.median)},
                  {"min", Number(spread.min)},
                  {"median", Number(spread.median)},
                  {"max", Number(spread.max)},
                  {"censored", c != Censoring::kNone},
                  {"censoring", CensoringName(c)}};
    // 5.3: "length" keeps the rows' shape; the measured number is an error (also "error").
    if (error) point["error"] = Number(spread.median);
    if (!samples.empty() && !samples.front().witness.empty())
      point["witness"] = samples.front().witness;
    point["members"] = members;
    j["points"].push_back(point);
  }
  return j;
}

// Theorem 4.1: the frequency simulator on the worst x found per point (5.3: none).
Json SimulatorJson(const TightnessRow& r) {
  Json sim = Json::array();
  for (const TightnessPoint& p : r.points) {
    if (r.theorem == Theorem::k53 || r.theorem == Theorem::k42)
      break;  // no simulator length on found x (5.3: the rows measure errors; 4.2: no simulator)
    Json steps = Json::array();
    for (const SimulatorStep& s : p.simulator.steps)
      steps.push_back({{"x_length", s.x_length},
                       {"needed", s.needed},
                       {"reached", s.reached},
                       {"x", s.x_kind},
                       {"attained_x_length", s.attained_x_length}});
    sim.push_back({{"value", p.value},
                   {"needed", p.simulator.needed},
                   {"x_length", p.simulator.x_length},
                   {"reached", p.simulator.reached},
                   {"censored", !p.simulator.reached},
                   {"certified", Number(p.simulator.certified)},
                   {"within_certificate", p.simulator.within_certificate},
                   {"hardmax_regime", p.simulator.hardmax_regime},
                   {"x", p.simulator.x_kind},
                   {"steps", steps},
                   {"stop", p.simulator.stop},
                   {"worst_step", p.simulator.worst_step}});
  }
  return {{"label", kSimulatorLabel},
          {"adaptive_x",
           "|x| grows 4x a step from min(--max-x-length, max(10^4, 4 T_hard)) until the needed n "
           "stops growing (within one grid step 2^(1/4)), reaches the upper side, or |x| reaches "
           "--max-x-length (each point's steps and stop)"},
          {"points", sim}};
}

// 4.1 --joint: the joint log-log fit over the rows but margin.
Json JointJson(const TightnessJoint& j, const std::vector<TightnessRow>& rows) {
  Json exponents = Json::array();
  for (std::size_t k = 0; k < j.parameters.size(); ++k) {
    Json e = {{"parameter", j.parameters[k]},
              {"exponent", k < j.fit.coefficients.size() ? Number(j.fit.coefficients[k]) : nullptr},
              {"ci", k < j.fit.ci.size() ? Interval(j.fit.ci[k]) : nullptr}};
    for (const TightnessRow& r : rows)  // the row fitting this parameter on its own
      if (r.regressor == j.parameters[k] && r.parameter != StudyParameter::kMargin) {
        e["row"] = r.name;
        e["row_exponent"] = Number(r.lower.exponent);
        e["row_ci"] = Interval(r.lower.ci);
      }
    exponents.push_back(e);
  }
  Json intercepts = Json::object();
  for (std::size_t f = 0; f < j.families.size() && f < j.family_intercepts.size(); ++f)
    intercepts[j.families[f]] = Number(j.family_intercepts[f]);
  Json points = Json::array();
  for (const TightnessJoint::Observation& ob : j.observations) {
    Json values;
    for (std::size_t k = 0; k < j.parameters.size(); ++k)
      values[j.parameters[k]] = Number(ob.values[k]);
    points.push_back({{"row", ob.row},
                      {"point", ob.point},
                      {"member", ob.member},
                      {"length", Number(ob.sample.value)},
                      {"censored", ob.sample.censoring != Censoring::kNone},
                      {"censoring", CensoringName(ob.sample.censoring)},
                      {"regressors", values}});
  }
  return {{"label",
           "lower side, joint log-log fit: ln T* = a + sum_j b_j ln x_j over the "
           "uncensored samples of the rows, each with its own pair's values"},
          {"fit", "joint least squares (QR), Student t intervals from sigma^2 (X^T X)^-1"},
          {"parameters", j.parameters},
          {"rows", j.rows},
          {"left_out", j.left_out},
          {"exponents", exponents},
          {"intercept", Number(j.fit.intercept)},
          {"families", j.families},
          {"family_intercepts", intercepts},
          {"level", 0.95},
          {"points_used", j.fit.observations_used},
          {"points_censored", j.fit.observations_censored},
          {"points_dropped", j.dropped},
          {"dropped", j.dropped_note},
          {"reason", j.reason},
          {"points", points}};
}

// Theorem 5.2: the simulator's samples per point (one per x) and their fit.
Json Simulator52Json(const TightnessRow& r) {
  Json sim = Json::array();
  for (const TightnessPoint& p : r.points) {
    if (p.simulator_samples.empty()) continue;
    SeriesPoint s;
    Json members = Json::array();
    for (const TightnessSample& m : p.simulator_samples) {
      s.samples.push_back(m.sample);
      Json member = {{"needed", Number(m.sample.value)},
                     {"censored", m.sample.censoring != Censoring::kNone},
                     {"censoring", CensoringName(m.sample.censoring)},
                     {"x_length", m.checked_up_to},
                     {"x", m.input},
                     {"x_seed", m.seed}};
      if (!m.witness.empty()) member["witness"] = m.witness;
      members.push_back(member);
    }
    const Spread spread = SampleSpread(s);
    const Censoring c = PointCensoring(s);
    sim.push_back({{"value", p.value},
                   {"regressor", Number(p.regressor)},
                   {"needed", Number(spread.median)},
                   {"length", Number(spread.median)},
                   {"min", Number(spread.min)},
                   {"median", Number(spread.median)},
                   {"max", Number(spread.max)},
                   {"censored", c != Censoring::kNone},
                   {"censoring", CensoringName(c)},
                   {"members", members}});
  }
  const ExponentEstimate& e = r.simulator;
  return {{"label", kSimulatorLabel},
          {"source", r.simulator_source},
          {"exponent", Number(e.exponent)},
          {"ci", Interval(e.ci)},
          {"points_used", e.points_used},
          {"points_censored", e.points_censored},
          {"reason", e.reason},
          {"points", sim}};
}

Json RowJson(const TightnessRow& r) {
  Json j;
  j["theorem"] = kTheoremNames.Name(r.theorem);
  j["parameter"] = RowParameter(r);
  j["name"] = r.name;
  if (!r.scheme.empty()) j["scheme"] = r.scheme;
  if (!r.family_dir.empty()) j["family_dir"] = r.family_dir;
  j["quantity"] = r.quantity;
  j["regressor"] = r.regressor;
  j["fit"] = r.fit;
  j["class"] = r.class_text;
  j["family"] = r.family;
  j["semantics"] = r.semantics;
  j["lower"] = SideJson(
      r.lower, r.points, true, r.lower_label.empty() ? kLowerLabel : r.lower_label,
      r.lower_source.empty() ? "exact threshold (ltsim threshold) of the " + r.family + " family"
                             : r.lower_source,
      r.quantity);
  j["upper"] =
      SideJson(r.upper, r.points, false, r.upper_label.empty() ? kUpperLabel : r.upper_label,
               r.upper_source, r.quantity);
  if (r.theorem == Theorem::k52) {
    j["simulator"] = Simulator52Json(r);
  } else {
    j["simulator"] = SimulatorJson(r);
  }
  j["paper"] = Number(r.paper);
  j["paper_label"] = kPaperLabel;
  j["paper_source"] = r.paper_source;
  j["verdict"] = VerdictName(r.verdict.verdict);
  j["reason"] = r.verdict.reason;
  j["gap"] = Number(r.verdict.gap);
  j["least_gap"] = Number(r.verdict.least_gap);
  j["empirical_constant"] = {{"name", r.constant.name},
                             {"value", r.constant.point >= 0 ? Number(r.constant.value) : nullptr},
                             {"point", r.constant.point},
                             {"member", r.constant.sample},
                             {"witness", r.constant.witness}};
  j["warnings"] = r.warnings;
  if (r.theorem == Theorem::k42) {
    j["alpha0"] = r.alpha0 > 0 ? Number(r.alpha0) : Json(nullptr);
    // The conclusion's form: the later expected gap against eps beside the paper's 1/2.
    Json points = Json::array();
    for (const TightnessPoint& p : r.points) {
      Json members = Json::array();
      for (const TightnessSample& m : p.lower)
        members.push_back({{"later_gap", Number(m.later_gap)},
                           {"later_up_to", m.later_up_to},
                           {"ratio_to_eps", Number(m.later_gap / m.eps)},
                           {"ratio_to_sqrt_eps", Number(m.later_gap / std::sqrt(m.eps))},
                           {"average_limit", Number(m.average_limit)},
                           {"censored", m.sample.censoring != Censoring::kNone}});
      points.push_back({{"value", p.value}, {"members", members}});
    }
    j["conclusion"] = {
        {"label",
         "later expected gap: each member's largest exact E||f - g|| over lengths up to at least "
         "4 T* (measured on these pairs, a lower bound on their supremum over T), fitted log-log "
         "in eps"},
        {"exponent", Number(r.conclusion.exponent)},
        {"ci", Interval(r.conclusion.ci)},
        {"points_used", r.conclusion.points_used},
        {"points_censored", r.conclusion.points_censored},
        {"paper", Number(r.conclusion_paper)},
        {"paper_label", "the paper's conclusion E||f - g|| = O(eps^(1/2)) beyond N0: exponent 1/2"},
        {"reason", r.conclusion.reason},
        {"points", points}};
  }
  return j;
}

Json TightnessJson(const TightnessResult& result) {
  const TightnessOptions& o = result.options;
  Json doc;
  doc["context"] = ReproducibleContext("tightness", o.seed);
  doc["options"] = TightnessOptionsToJson(o);
  doc["labels"] = {{"lower", kLowerLabel},
                   {"upper", kUpperLabel},
                   {"simulator", kSimulatorLabel},
                   {"paper", kPaperLabel}};
  doc["rows"] = Json::array();
  for (const TightnessRow& r : result.rows) doc["rows"].push_back(RowJson(r));
  if (result.joint) doc["joint"] = JointJson(*result.joint, result.rows);
  return doc;
}

std::string Csv(const TightnessResult& result) {
  std::string csv =
      "theorem,parameter,side,value,regressor,length,min,median,max,censored,witness,exponent,"
      "ci_low,ci_high,paper,verdict,name,quantity\n";
  for (const TightnessRow& r : result.rows) {
    for (int side = 0; side < 2; ++side) {
      const ExponentEstimate& e = side == 0 ? r.lower : r.upper;
      for (const TightnessPoint& p : r.points) {
        const std::vector<TightnessSample>& samples = side == 0 ? p.lower : p.upper;
        if (samples.empty()) continue;  // 5.2: a side with no number
        SeriesPoint s;
        for (const TightnessSample& m : samples) s.samples.push_back(m.sample);
        const Spread spread = SampleSpread(s);
        csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                           kTheoremNames.Name(r.theorem), RowParameter(r),
                           side == 0 ? "lower" : "upper", p.value, p.regressor, spread.median,
                           spread.min, spread.median, spread.max,
                           PointCensoring(s) != Censoring::kNone ? 1 : 0, samples.front().witness,
                           e.exponent, e.ci ? e.ci->first : NAN, e.ci ? e.ci->second : NAN, r.paper,
                           VerdictName(r.verdict.verdict), r.name, r.quantity);
      }
    }
    // 5.2: the simulator on found x (neither bound), side "simulator".
    for (const TightnessPoint& p : r.points) {
      if (p.simulator_samples.empty()) continue;
      SeriesPoint s;
      for (const TightnessSample& m : p.simulator_samples) s.samples.push_back(m.sample);
      const Spread spread = SampleSpread(s);
      const ExponentEstimate& e = r.simulator;
      csv += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", kTheoremNames.Name(r.theorem),
          RowParameter(r), "simulator", p.value, p.regressor, spread.median, spread.min,
          spread.median, spread.max, PointCensoring(s) != Censoring::kNone ? 1 : 0,
          p.simulator_samples.front().witness, e.exponent, e.ci ? e.ci->first : NAN,
          e.ci ? e.ci->second : NAN, r.paper, VerdictName(r.verdict.verdict), r.name, r.quantity);
    }
  }
  return csv;
}

std::string Fixed(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "n/a"; }

std::string ShowInterval(const std::optional<std::pair<double, double>>& ci) {
  return ci ? fmt::format("[{:.3g}, {:.3g}]", ci->first, ci->second) : "no CI";
}

// Theorem 5.3: one row per scheme, errors against n.
void PrintRateTable(const TightnessResult& result) {
  const TightnessOptions& o = result.options;
  std::cout << fmt::format(
      "tightness, Lemma 5.3 (--theorem 5.3) — seed {}, {} z seeds a point, |x| = {}\n", o.seed,
      o.seeds, o.statistic_x_length);
  std::cout << "  lower = adversarial statistic error found (lower bound on the supremum the "
               "lemma bounds); upper = transport bound over the whole class on the same x and z; "
               "paper = the lemma's exponent in n\n";
  std::cout << fmt::format("{:<9} {:<9} {:>23} {:>23} {:>7}  {:<13} {}\n", "parameter", "scheme",
                           "lower exponent [95% CI]", "upper exponent [95% CI]", "paper", "verdict",
                           "empirical constant");
  for (const TightnessRow& r : result.rows)
    std::cout << fmt::format(
        "{:<9} {:<9} {:>6} {:>16} {:>6} {:>16} {:>7}  {:<13} {} = {}\n", RowParameter(r), r.scheme,
        Fixed(r.lower.exponent), ShowInterval(r.lower.ci), Fixed(r.upper.exponent),
        ShowInterval(r.upper.ci), Fixed(r.paper), VerdictName(r.verdict.verdict), r.constant.name,
        r.constant.point >= 0 ? Show(r.constant.value) : "n/a");
  for (const TightnessRow& r : result.rows) {
    std::cout << fmt::format("\n{} ({}): {}\n  class: {}\n", r.scheme, r.fit, r.verdict.reason,
                             r.class_text);
    std::cout << fmt::format("  {:>8} {:>34} {:>34}\n",
                             RowParameter(r) == std::string("locality") ? "tau" : "n",
                             "lower error (min/med/max)", "upper bound (min/med/max)");
    for (const TightnessPoint& p : r.points) {
      const auto cell = [](const std::vector<TightnessSample>& samples) {
        SeriesPoint s;
        for (const TightnessSample& m : samples) s.samples.push_back(m.sample);
        const Spread spread = SampleSpread(s);
        return fmt::format("{}/{}/{}{}", Show(spread.min), Show(spread.median), Show(spread.max),
                           PointCensoring(s) != Censoring::kNone ? " (floor)" : "");
      };
      std::cout << fmt::format("  {:>8} {:>34} {:>34}\n", Show(p.value), cell(p.lower),
                               cell(p.upper));
    }
  }
  std::cout << "\n(floor: some z seed reproduced x's statistic to 1e-12, so that error is only "
               "<= 1e-12: the point is a bound and is not fitted)\n";
}

std::string SpreadText(const std::vector<TightnessSample>& samples, const char* mark) {
  if (samples.empty()) return "n/a";
  SeriesPoint s;
  for (const TightnessSample& m : samples) s.samples.push_back(m.sample);
  const Spread spread = SampleSpread(s);
  const Censoring c = PointCensoring(s);
  const std::string prefix = c == Censoring::kAbove ? ">" : c == Censoring::kBelow ? "<=" : "";
  if (spread.min == spread.max)
    return prefix + Show(spread.min) + (c != Censoring::kNone ? mark : "");
  return fmt::format("{}/{}/{}{}", Show(spread.min), Show(spread.median), Show(spread.max),
                     c != Censoring::kNone ? mark : "");
}

std::string ShowSide(const ExponentEstimate& e) {
  return fmt::format("{:>6} {:>16}", Fixed(e.exponent), ShowInterval(e.ci));
}

// Theorem 5.2: the rows with the simulator's exponent beside both sides.
void Print52Table(const TightnessResult& result) {
  const TightnessOptions& o = result.options;
  std::cout << fmt::format(
      "tightness, Theorem 5.2 (--theorem 5.2) — seed {}, {} members (eps, k: x inputs) a "
      "point\n",
      o.seed, o.seeds);
  std::cout << "  lower = certified T* of a pair (lower bound on N); upper = balanced-blocks' "
               "certified length (two-layer-length, docs/theory.md §4.8); simulator = "
               "balanced-blocks' needed length on found x (neither bound); paper = thm5.2's "
               "exponent in the regressor\n";
  std::cout << fmt::format("{:<17} {:>11} {:>23} {:>23} {:>23} {:>7}  {}\n", "parameter", "in",
                           "lower exponent [95% CI]", "upper exponent [95% CI]",
                           "simulator [95% CI]", "paper", "verdict");
  for (const TightnessRow& r : result.rows)
    std::cout << fmt::format("{:<17} {:>11} {} {} {} {:>7.3g}  {}\n", RowParameter(r), r.regressor,
                             ShowSide(r.lower), ShowSide(r.upper), ShowSide(r.simulator), r.paper,
                             VerdictName(r.verdict.verdict));
  for (const TightnessRow& r : result.rows) {
    std::cout << fmt::format("\n{} ({}): {}\n  class: {}\n", RowParameter(r), r.fit,
                             r.verdict.reason, r.class_text);
    if (r.constant.point >= 0)
      std::cout << fmt::format("  empirical constant {} = {} ({})\n", r.constant.name,
                               Show(r.constant.value), r.constant.witness);
    std::cout << fmt::format("  {:>10} {:>11} {:>26} {:>8} {:>30}\n", RowParameter(r), r.regressor,
                             "lower T* (min/med/max)", "upper", "simulator needed (min/med/max)");
    for (const TightnessPoint& p : r.points)
      std::cout << fmt::format(
          "  {:>10} {:>11} {:>26} {:>8} {:>30}\n", Show(p.value), Show(p.regressor),
          SpreadText(p.lower, " (capped)"), SpreadText(p.upper, ""),
          p.simulator_samples.empty() ? std::string("not run")
                                      : SpreadText(p.simulator_samples, " (censored)"));
    for (const std::string& w : r.warnings) std::cout << "  warning: " << w << "\n";
  }
  std::cout << "\n(capped: the exact search stopped before a disagreement, so T* is only > the "
               "length shown; censored: no n < |x| met eps (>) or the first grid n did (<=); "
               "censored points are bounds and are never fitted)\n";
}

// The last step's n of |x| (as before adaptive |x|), and the worst step when it is another.
std::string SimulatorText(const SimulatorCheck& s) {
  std::string text = fmt::format("{}{} of |x| {}", s.needed, s.reached ? "" : "+", s.x_length);
  if (s.stop == "cap" || s.stop == "upper side") text += " [" + s.stop + "]";
  if (s.worst_step + 1 < s.steps.size()) {
    const SimulatorStep& w = s.steps[s.worst_step];
    text += fmt::format(" (worst {}{} of {})", w.needed, w.reached ? "" : "+",
                        w.attained_x_length > 0 ? w.attained_x_length : w.x_length);
  }
  return text;
}

// Theorem 4.2: the average case's lower side against the paper, and the conclusion's form.
void Print42Table(const TightnessResult& result) {
  const TightnessOptions& o = result.options;
  std::cout << fmt::format(
      "tightness, Theorem 4.2 (--theorem 4.2) — seed {}, {} members a point, exact average sums "
      "up to T = {}\n",
      o.seed, o.seeds, o.average_max_length);
  std::cout << "  lower = exact average first disagreement T* (least T with E||f - g|| > eps, "
               "pi ~ Dir(alpha0), tokens iid from pi; a lower bound on N0); no certified upper "
               "side; paper = thm4.2's exponent; later gap = the largest E||f - g|| after T* "
               "(measured), against the paper's O(eps^(1/2))\n";
  std::cout << fmt::format("{:<17} {:>8} {:>23} {:>7}  {:<13} {:>24} {:>5}\n", "row", "in",
                           "lower exponent [95% CI]", "paper", "verdict", "later gap ~ eps^b [CI]",
                           "paper");
  for (const TightnessRow& r : result.rows)
    std::cout << fmt::format(
        "{:<17} {:>8} {} {:>7.3g}  {:<13} {:>24} {:>5}\n", r.name, r.regressor, ShowSide(r.lower),
        r.paper, VerdictName(r.verdict.verdict),
        std::isfinite(r.conclusion.exponent)
            ? fmt::format("{} {}", Fixed(r.conclusion.exponent), ShowInterval(r.conclusion.ci))
            : std::string("n/a"),
        std::isfinite(r.conclusion_paper) ? Fixed(r.conclusion_paper) : "");
  for (const TightnessRow& r : result.rows) {
    std::cout << fmt::format("\n{} ({}): {}\n  class: {}\n", r.name, r.fit, r.verdict.reason,
                             r.class_text);
    if (std::isfinite(r.conclusion.exponent))
      std::cout << fmt::format("  conclusion: {}\n", r.conclusion.reason);
    if (r.constant.point >= 0)
      std::cout << fmt::format("  empirical constant {} = {}\n", r.constant.name,
                               Show(r.constant.value));
    std::cout << fmt::format("  {:>10} {:>10} {:>24} {:>22} {:>10} {:>12}\n",
                             RowParameter(r) == std::string("alpha0") ? "alpha0" : "eps",
                             r.regressor, "lower T* (min/med/max)", "later gap (min/med/max)",
                             "gap/eps", "gap/sqrt(eps)");
    for (const TightnessPoint& p : r.points) {
      // A capped member's later gap is only a lower bound: ≥ the largest E_T computed, and > ε
      // (its T*, beyond the cap, has E_T* > ε). Shown as "≥x" or ">eps" after the uncensored
      // members' spread and kept out of the median.
      SeriesPoint later;
      std::string bounds;
      double eps = 0;
      for (const TightnessSample& m : p.lower) {
        if (m.sample.censoring == Censoring::kNone)
          later.samples.push_back({m.later_gap, Censoring::kNone});
        else
          bounds += m.later_gap > m.eps ? " ≥" + Show(m.later_gap) : " >" + Show(m.eps);
        eps = m.eps;
      }
      const Spread g = SampleSpread(later);
      const std::string spread =
          later.samples.empty() ? std::string("-")
                                : fmt::format("{}/{}/{}", Show(g.min), Show(g.median), Show(g.max));
      std::cout << fmt::format("  {:>10} {:>10} {:>24} {:>22} {:>10} {:>12}\n", Show(p.value),
                               Show(p.regressor), SpreadText(p.lower, " (capped)"), spread + bounds,
                               Show(g.median / eps), Show(g.median / std::sqrt(eps)));
    }
    for (const std::string& w : r.warnings) std::cout << "  warning: " << w << "\n";
  }
  std::cout << "\n(capped: no length up to the cap has an expected gap above eps, so T* is only > "
               "the cap: the point is a bound and is not fitted; a capped member's later gap is "
               "shown as ≥x or >eps, a lower bound kept out of the median and the ratios)\n";
}

// 4.1 --joint, after the table.
void PrintJoint(const TightnessJoint& j, const std::vector<TightnessRow>& rows) {
  std::string names;
  for (const std::string& r : j.rows) names += (names.empty() ? "" : ", ") + r;
  std::cout << fmt::format(
      "\njoint fit (lower side, log-log: ln T* = a + sum_j b_j ln x_j) over the samples of {}: "
      "{} used, {} censored, {} without a logarithm{}\n",
      names.empty() ? std::string("no row") : names, j.fit.observations_used,
      j.fit.observations_censored, j.dropped,
      j.dropped_note.empty() ? "" : " (" + j.dropped_note + ")");
  if (j.families.size() > 1) {
    std::string families;
    for (const std::string& f : j.families) families += (families.empty() ? "" : ", ") + f;
    std::cout << fmt::format("  one intercept per family ({}), shared exponents\n", families);
  }
  for (const std::string& l : j.left_out) std::cout << "  left out: " << l << "\n";
  if (!j.reason.empty()) std::cout << "  " << j.reason << "\n";
  for (std::size_t k = 0; k < j.parameters.size(); ++k) {
    const double b = k < j.fit.coefficients.size() ? j.fit.coefficients[k] : NAN;
    std::string own;
    for (const TightnessRow& r : rows)
      if (r.regressor == j.parameters[k] && r.parameter != StudyParameter::kMargin)
        own = fmt::format("   (row {} alone: {} {})", r.name, Fixed(r.lower.exponent),
                          ShowInterval(r.lower.ci));
    std::cout << fmt::format("  {:>6} {:>7} {:>18}{}\n", j.parameters[k], Fixed(b),
                             ShowInterval(k < j.fit.ci.size() ? j.fit.ci[k] : std::nullopt), own);
  }
}

void PrintTable(const TightnessResult& result) {
  if (result.options.theorem == Theorem::k53) return PrintRateTable(result);
  if (result.options.theorem == Theorem::k52) return Print52Table(result);
  if (result.options.theorem == Theorem::k42) return Print42Table(result);
  const TightnessOptions& o = result.options;
  if (!o.family_dir.empty())
    std::cout << fmt::format(
        "tightness, Theorem {} — the user family {}, exact thresholds within {} statistics\n",
        kTheoremNames.Name(o.theorem), o.family_dir, o.statistics_budget);
  else
    std::cout << fmt::format(
        "tightness, Theorem {} — seed {}, {} members a point, exact thresholds within {} "
        "statistics\n",
        kTheoremNames.Name(o.theorem), o.seed, o.seeds, o.statistics_budget);
  std::cout << "  lower = certified T* of a family (lower bound on N); upper = the construction's "
               "certified length; paper = registry bound's exponent\n";
  std::cout << fmt::format("{:<9} {:>8} {:>23} {:>23} {:>7}  {:<13} {}\n", "parameter", "in",
                           "lower exponent [95% CI]", "upper exponent [95% CI]", "paper", "verdict",
                           "empirical constant");
  for (const TightnessRow& r : result.rows) {
    std::cout << fmt::format(
        "{:<9} {:>8} {:>6} {:>16} {:>6} {:>16} {:>7.3g}  {:<13} {} = {}\n", RowParameter(r),
        r.regressor, Fixed(r.lower.exponent), ShowInterval(r.lower.ci), Fixed(r.upper.exponent),
        ShowInterval(r.upper.ci), r.paper, VerdictName(r.verdict.verdict), r.constant.name,
        r.constant.point >= 0 ? Show(r.constant.value) : "n/a");
  }
  for (const TightnessRow& r : result.rows) {
    std::cout << fmt::format("\n{} ({}): {}\n  class: {}\n", RowParameter(r), r.fit,
                             r.verdict.reason, r.class_text);
    std::cout << fmt::format("  {:>10} {:>10} {:>24} {:>12} {:>22}\n", RowParameter(r), r.regressor,
                             "lower T* (min/med/max)", "upper", "simulator on found x");
    for (const TightnessPoint& p : r.points) {
      SeriesPoint s;
      for (const TightnessSample& m : p.lower) s.samples.push_back(m.sample);
      const Spread spread = SampleSpread(s);
      const bool censored = PointCensoring(s) != Censoring::kNone;
      std::cout << fmt::format("  {:>10} {:>10} {:>24} {:>12} {:>22}\n", Show(p.value),
                               Show(p.regressor),
                               fmt::format("{}/{}/{}{}", Show(spread.min), Show(spread.median),
                                           Show(spread.max), censored ? " (capped)" : ""),
                               Show(p.upper.front().sample.value),
                               r.family_dir.empty() ? SimulatorText(p.simulator) : "not run");
    }
    for (const std::string& w : r.warnings) std::cout << "  warning: " << w << "\n";
  }
  std::cout << "\n(capped: some member agreed up to the searched N, so its T* is only > N: the "
               "point is a bound and is not fitted)\n";
  if (o.validate)
    std::cout << "(simulator on found x: |x| grown 4x a step until n stopped growing, [upper "
                 "side] reached the certified length or [cap] reached --max-x-length; n+ = no "
                 "n < |x| met eps)\n";
  if (result.joint) PrintJoint(*result.joint, result.rows);
}

std::vector<std::string> SplitList(const std::string& text, const std::string& flag) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (item.empty()) throw InputError(flag + ": empty item in '" + text + "'");
      out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  return out;
}

}  // namespace

int RunPointReplay(const std::string& path, bool json) {
  const PointWitness w = ReadPointWitness(path);
  const PointReplay r = ReplayPoint(w);
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["kind"] = w.kind;
    doc["label"] = w.label;
    doc["recorded"] = {{"value", w.value}, {"censored", w.censored}};
    doc["replayed"] = {{"value", r.value}, {"censored", r.censored}};
    doc["format"] = "ltsim-point";
    doc["reproduced"] = r.reproduced;
    doc["differences"] = r.differences;
    doc["detail"] = r.detail;
    PrintJson(doc);
  } else {
    std::cout << fmt::format("{}: {} ({})\n  recorded {}{}, replayed {}{}: {}\n", path, w.kind,
                             w.label, w.value, w.censored ? " (censored)" : "", r.value,
                             r.censored ? " (censored)" : "",
                             r.reproduced ? "reproduced" : "DIFFERS");
    if (!r.detail.empty()) std::cout << "  " << r.detail << "\n";
    if (!r.differences.empty())
      std::cout << "  recorded results that differ: " << DifferenceSummary(r.differences) << "\n";
  }
  return r.reproduced ? kReproduced : kNotReproduced;
}

int RunAttackReplay(const std::string& path, bool json) {
  const AttackWitness w = ReadAttackWitness(path);
  const AttackReplay r = ReplayAttack(w);
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["format"] = "ltsim-attack-point";
    doc["kind"] = "statistic-error";
    doc["label"] = w.label;
    doc["recorded"] = {{"error", w.error}, {"certified", w.certified}, {"censored", w.censored}};
    doc["replayed"] = {{"error", r.error}, {"certified", r.certified}, {"censored", r.censored}};
    doc["reproduced"] = r.reproduced;
    PrintJson(doc);
  } else {
    std::cout << fmt::format(
        "{}: statistic-error ({} at n = {}, input {})\n  recorded error {} (bound {}), replayed "
        "{} (bound {}): {}\n",
        path, w.options.method, w.options.length, InputKindName(w.input.kind), Show(w.error),
        Show(w.certified), Show(r.error), Show(r.certified),
        r.reproduced ? "reproduced" : "DIFFERS");
  }
  return r.reproduced ? kReproduced : kNotReproduced;
}

void AddTightnessCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TightnessArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tightness",
      "Per parameter of Theorem 4.1: the lower side (certified first disagreement T* of built-in "
      "families, exact thresholds), the upper side (the frequency construction's certified "
      "length), the paper's exponent, and a verdict tight / gap / contradicts / inconclusive "
      "(docs/tightness.md). --theorem 5.3: Lemma 5.3's rate, one row per subsequence scheme: "
      "the adversarial statistic error (lower side) and a transport bound on the same inputs "
      "(upper side) against n, with the lemma's -1/3 for markov. --theorem 5.2: rows eps, "
      "attention-norm (the first layer's ||M||), positional-margin (gamma_pos) and k (k-gram "
      "order) of two-layer pairs: certified T* (two-layer pairs: exhaustive only up to T = 15, "
      "so the rows say where the lower side is not yet certified), the upper side two-layer-length "
      "(balanced-blocks' proven length, docs/theory.md §4.8), the balanced-blocks simulator's "
      "needed length on found x (eps and k rows), and the registry's thm5.2 exponent "
      "(docs/tightness.md §5). --theorem 4.2: the average case's lower side, the exact average "
      "first disagreement (least T with E||f - g|| > eps under pi ~ Dir(alpha0)) of the "
      "average-bump family, per eps (one row per --alpha0) and per alpha0, against thm4.2's "
      "exponent 2 + 2/alpha0, with the later expected gap against the paper's O(eps^(1/2)) "
      "(docs/tightness.md §8).");
  SetExamples(cmd,
              {"ltsim tightness --parameters eps --points 3 --seeds 1 --no-validate",
               "ltsim tightness --parameters eps,scale --points 3 --seeds 1 --heads 1 "
               "--no-validate --threads 2",
               "ltsim tightness --parameters eps,margin --points 3 --seeds 2 --out-dir runs/t "
               "--json",
               "ltsim tightness --parameters eps,scale --points 3 --seeds 2 --no-validate --joint",
               "ltsim tightness --theorem 5.3 --methods markov,blocks --points 3 --seeds 2 "
               "--x-length 20000",
               "ltsim tightness --theorem 5.2 --parameters positional-margin --points 3 --seeds 2",
               "ltsim tightness --theorem 4.2 --parameters eps --alpha0 1 --points 3 --seeds 2",
               "ltsim construct family bump --slope 2 --out-dir fam/s2; ltsim construct family "
               "bump --slope 4 --out-dir fam/s4; ltsim construct family bump --slope 8 "
               "--out-dir fam/s8; ltsim tightness --family-dir fam --parameter slope"},
              "Every point's members are written as point witnesses with --out-dir; `ltsim "
              "replay FILE` re-runs one (exit 0 = reproduced, 1 = not).");
  cmd->add_option("--theorem", args->theorem,
                  "4.1 (default), 4.2 (eps rows per alpha0 and the alpha0 row, average case), 5.2 "
                  "(eps, attention-norm, positional-margin and k rows) or 5.3 (Lemma 5.3's rate "
                  "in n per subsequence scheme) (docs/tightness.md)");
  cmd->add_option("--parameters", args->parameters,
                  "comma list of eps, scale, period, alphabet, locality, margin (4.1; default "
                  "all), eps, alpha0 (4.2; default both), eps, attention-norm, positional-margin, "
                  "k (5.2; default all) or n (5.3)");
  cmd->add_option("--methods", args->schemes,
                  "5.3: comma list of markov, blocks, uniform, truncate (default all, one row "
                  "each)");
  auto* x_length =
      cmd->add_option("--x-length", args->options.statistic_x_length,
                      "5.3: |x| of the input families (default 320000; up to 10^9, the run "
                      "families streamed)");
  auto* max_n = cmd->add_option("--max-z-length", args->options.statistic_max_n,
                                "5.3: the largest n of the n rows (from 16, evenly in log; "
                                "default 16000)");
  AddSeed(cmd, args->options.seed);
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--seeds", args->options.seeds,
                  "family members per point (5.3: z seeds per point; 5.2: members of the "
                  "attention-norm and positional-margin rows and x inputs of the eps and k rows; "
                  "default 3)");
  auto* points = cmd->add_option("--points", args->options.points,
                                 "grid points per parameter (default 5; period 4 unless given; "
                                 "5.3: n from 16 to 16000 evenly in log; 5.2: eps = 0.2/2^i, "
                                 "||M_1|| = 0, 1, ..., 1/gamma_pos = 3, 4, ...; k = 1..4 unless "
                                 "given, at most 6)");
  cmd->add_option("--budget", args->options.statistics_budget,
                  "evaluated statistics per exact threshold (pruned search up to T = 10^6; "
                  "default 1e6); a member still agreeing when it is spent is a censored point");
  cmd->add_option("--heads", args->options.heads,
                  "heads of the class of the eps and scale rows: 1 = the bump family, 2 or 3 = "
                  "the nested family (T* ~ (L/eps)^heads; default 2)");
  cmd->add_option("--precision", args->options.precision_bits,
                  "p bits of the margin row (default 4)");
  cmd->add_option("--max-x-length", args->options.max_x_length,
                  "cap on |x| of the simulator check, which grows |x| 4x a step from "
                  "max(10^4, 4 T_hard) until the needed n stops growing or reaches the upper "
                  "side (default 200000; 5.2's eps and k rows use min(20000, this))");
  cmd->add_flag("--no-validate", args->no_validate, "skip the simulator check on found x");
  cmd->add_option("--alpha0", args->alphas0,
                  "4.2: comma list of the Dirichlet alpha0 of the eps rows, one row each "
                  "(default 0.5,1,2; each in [0.05, 20])");
  auto* average_max =
      cmd->add_option("--average-max-length", args->options.average_max_length,
                      "4.2: the longest length of the exact average computation (grown 4x from "
                      "64; default 4096, at most 100000); a member whose expected gap stays <= "
                      "eps up to it is censored");
  cmd->add_flag("--joint", args->options.joint,
                "4.1: also fit ln T* = a + sum_j b_j ln x_j jointly over the lower-side samples "
                "of every requested row, each sample with its own pair's 1/eps, L, Delta, S, tau "
                "(those the rows vary); margin is log-linear in 1/gamma and left out; printed "
                "after the table, `joint` in the JSON");
  cmd->add_option("--family-dir", args->options.family_dir,
                  "4.1: one row over a user's family instead of the built-in rows: DIR holds a "
                  "subdirectory a member with f.json and g.json (as `ltsim construct family ... "
                  "--out-dir DIR/NAME` writes them), each member's T* computed by the exact "
                  "threshold (a T* in meta is checked, never used) and fitted log-log in the "
                  "parameter its meta records (docs/tightness.md §7)");
  args->family_parameter = cmd->add_option(
      "--parameter", args->options.family_parameter,
      "with --family-dir: the meta key of the members' parameter (meta.NAME, else "
      "meta.params.NAME; default: the one meta.params key whose value differs between members; "
      "eps is fitted in 1/eps, anything else in its value)");
  args->family_eps =
      cmd->add_option("--eps", args->options.family_eps,
                      "with --family-dir: every member's eps (default: each member's meta.eps)");
  AddOutDir(cmd, args->options.out,
            "write tightness.json, tightness.csv, one figure per parameter "
            "(tightness_<parameter>.png/.svg) and a point witness per member in this directory");
  AddDeprecated(cmd, "--replay", args->replay, "ltsim replay FILE");
  cmd->add_flag("--json", args->json, "print the JSON document instead of the table");
  cmd->callback([args, points, x_length, max_n, average_max, &exit_code] {
    if (!args->replay.empty()) {
      exit_code = RunPointReplay(args->replay, args->json);
      return;
    }
    SetCommandFlags({{"statistics_budget", "--budget"},
                     {"precision_bits", "--precision"},
                     {"schemes", "--methods"},
                     {"alphas0", "--alpha0"},
                     {"average_max_length", "--average-max-length"}});
    TightnessOptions o = args->options;
    const auto shown = [](const std::string& name) {
      return name.size() > 60 ? name.substr(0, 60) + "..." : name;  // one short line
    };
    const auto theorem = kTheoremNames.Find(args->theorem);
    if (!theorem)
      throw InputError("--theorem: unknown theorem '" + shown(args->theorem) +
                       "' (known: 4.1, 4.2, 5.2, 5.3)");
    o.theorem = *theorem;
    std::string known;
    for (StudyParameter p : TightnessParameters(o.theorem))
      known += (known.empty() ? "" : ", ") + std::string(ParameterName(p));
    if (!args->parameters.empty())
      for (const std::string& name : SplitList(args->parameters, "--parameters")) {
        const auto parameter = kStudyParameterNames.Find(name);
        if (!parameter)
          throw InputError("--parameters: unknown parameter '" + shown(name) + "' (known for " +
                           "Theorem " + args->theorem + ": " + known + ")");
        o.parameters.push_back(*parameter);
      }
    if (!args->schemes.empty()) o.schemes = SplitList(args->schemes, "--methods");
    if (!args->alphas0.empty()) {
      if (o.theorem != Theorem::k42) throw InputError("--alpha0: only for --theorem 4.2");
      for (const std::string& a : SplitList(args->alphas0, "--alpha0")) {
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(a, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != a.size() || !(value >= 0.05 && value <= 20))
          throw InputError("--alpha0: '" + shown(a) + "' is not a number in [0.05, 20]");
        // Rows are named eps_alpha<a> by the shortest form of a: equal names would write the
        // same files.
        for (double b : o.alphas0)
          if (fmt::format("{}", b) == fmt::format("{}", value))
            throw InputError("--alpha0: '" + shown(a) + "' repeats alpha0 = " +
                             fmt::format("{}", b) + " (each value names one row)");
        o.alphas0.push_back(value);
      }
    }
    if (o.theorem != Theorem::k42 && average_max->count() > 0)
      throw InputError("--average-max-length: only for --theorem 4.2");
    if (o.joint && o.theorem != Theorem::k41)
      throw InputError("--joint: only for --theorem 4.1 (its log-log rows)");
    if (o.theorem != Theorem::k53 &&
        (!args->schemes.empty() || x_length->count() > 0 || max_n->count() > 0))
      throw InputError(std::string(!args->schemes.empty()  ? "--methods"
                                   : x_length->count() > 0 ? "--x-length"
                                                           : "--max-z-length") +
                       ": only for --theorem 5.3 (Lemma 5.3's rows)");
    if (o.family_dir.empty() &&
        (args->family_parameter->count() > 0 || args->family_eps->count() > 0))
      throw InputError(std::string(args->family_parameter->count() > 0 ? "--parameter" : "--eps") +
                       ": only with --family-dir (the built-in rows are chosen with "
                       "--parameters)");
    if (!o.family_dir.empty()) {
      if (o.theorem != Theorem::k41 || o.joint || !o.parameters.empty() || points->count() > 0)
        throw InputError(
            "--family-dir: one row of Theorem 4.1 over the family's members, so --theorem, "
            "--joint, --parameters and --points do not apply");
      if (args->family_eps->count() > 0 && !(o.family_eps > 0 && std::isfinite(o.family_eps)))
        throw InputError("--eps: must be a positive number");
      args->no_validate = true;  // the simulator check is the built-in rows' (docs/tightness.md §7)
    }
    o.points_given = points->count() > 0;
    o.validate = !args->no_validate;
    // 5.3 counts attacks (scheme × n × input family × z seed), 4.1 members and checks, 5.2
    // thresholds and simulator runs.
    Progress progress("tightness", o.theorem == Theorem::k53   ? "attacks"
                                   : o.theorem == Theorem::k52 ? "thresholds and simulator runs"
                                   : o.theorem == Theorem::k42 ? "average computations"
                                                               : "members and checks");
    o.progress = progress.Callback();
    // --out-dir locked and checked before any work, written as one set (io/output_dir.h).
    std::unique_ptr<io::OutputSet> set;
    if (!o.out.empty()) set = std::make_unique<io::OutputSet>(o.out, "tightness");
    if (set) o.out = set->staging();
    TightnessResult r = RunTightness(o);
    progress.Finish();
    if (set) r.options.out = set->dir();  // what the table names
    Report(
        TightnessJson(r), Csv(r), args->json, [&] { PrintTable(r); }, set.get(), "tightness",
        LTSIM_PLOT_TIGHTNESS_SCRIPT);
  });
}

}  // namespace ltsim::cli
