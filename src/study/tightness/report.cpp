// The reporters of `ltsim tightness`: the JSON document and the CSV (docs/tightness.md §4);
// the console tables are in table.cpp.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "ltsim/study/fit_report.h"
#include "ltsim/study/report_format.h"
#include "ltsim/study/tightness_report.h"

namespace ltsim {
namespace {

using io::Json;

Json Number(double value) { return FiniteNumber(value); }

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

Json SideJson(const ExponentEstimate& e, const std::vector<TightnessPoint>& points, bool lower,
              const std::string& label, const std::string& source, const std::string& quantity) {
  const bool error = quantity == "statistic error";
  Json j;
  j["label"] = label;
  j["source"] = source;
  j["quantity"] = quantity;
  AppendEstimate(
      j, e,
      {EstimateField::kExponent, EstimateField::kCi, EstimateField::kTInterval,
       EstimateField::kBootstrapInterval, EstimateField::kLevel, EstimateField::kPointsUsed,
       EstimateField::kPointsCensored, EstimateField::kReason});
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
              {"ci", k < j.fit.ci.size() ? IntervalJson(j.fit.ci[k]) : nullptr}};
    for (const TightnessRow& r : rows)  // the row fitting this parameter on its own
      if (r.regressor == j.parameters[k] && r.parameter != StudyParameter::kMargin) {
        e["row"] = r.name;
        e["row_exponent"] = Number(r.lower.exponent);
        e["row_ci"] = IntervalJson(r.lower.ci);
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
          {"level", kReportedLevel},
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
  Json j = {{"label", kSimulatorLabel}, {"source", r.simulator_source}};
  AppendEstimate(j, r.simulator,
                 {EstimateField::kExponent, EstimateField::kCi, EstimateField::kPointsUsed,
                  EstimateField::kPointsCensored, EstimateField::kReason});
  j["points"] = sim;
  return j;
}

Json RowJson(const TightnessRow& r) {
  Json j;
  j["theorem"] = kTheoremNames.Name(r.theorem);
  j["parameter"] = TightnessRowParameter(r);
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
    Json c = {
        {"label",
         "later expected gap: each member's largest exact E||f - g|| over lengths up to at least "
         "4 T* (measured on these pairs, a lower bound on their supremum over T), fitted log-log "
         "in eps"}};
    AppendEstimate(c, r.conclusion,
                   {EstimateField::kExponent, EstimateField::kCi, EstimateField::kPointsUsed,
                    EstimateField::kPointsCensored});
    c["paper"] = Number(r.conclusion_paper);
    c["paper_label"] = "the paper's conclusion E||f - g|| = O(eps^(1/2)) beyond N0: exponent 1/2";
    AppendEstimate(c, r.conclusion, {EstimateField::kReason});
    c["points"] = points;
    j["conclusion"] = c;
  }
  return j;
}

}  // namespace

std::string TightnessRowParameter(const TightnessRow& r) {
  return r.family_dir.empty() ? std::string(ParameterName(r.parameter)) : r.name;
}

io::Json TightnessJson(const TightnessResult& result, const io::Json& context) {
  const TightnessOptions& o = result.options;
  Json doc;
  doc["context"] = context;
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

std::string TightnessCsv(const TightnessResult& result) {
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
                           kTheoremNames.Name(r.theorem), TightnessRowParameter(r),
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
          TightnessRowParameter(r), "simulator", p.value, p.regressor, spread.median, spread.min,
          spread.median, spread.max, PointCensoring(s) != Censoring::kNone ? 1 : 0,
          p.simulator_samples.front().witness, e.exponent, e.ci ? e.ci->first : NAN,
          e.ci ? e.ci->second : NAN, r.paper, VerdictName(r.verdict.verdict), r.name, r.quantity);
    }
  }
  return csv;
}

}  // namespace ltsim
