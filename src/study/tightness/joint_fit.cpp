// `ltsim tightness --joint`: one log-log fit of T* over the lower-side samples of every
// requested Theorem 4.1 row but margin (docs/tightness.md §3).
#include "joint_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace ltsim {

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

}  // namespace ltsim
