// `ltsim tightness --family-dir`: one Theorem 4.1 row over a user's family directory
// (docs/tightness.md §7).
#include "user_family_row.h"

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
#include "theorem_41.h"
#include "witness_path.h"

namespace ltsim {
namespace {

// The regressor of a user's parameter: 1/ε for eps (as the built-in eps row), else the value.
double UserRegressor(const std::string& parameter, double value) {
  return parameter == "eps" ? 1 / value : value;
}

}  // namespace

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
  std::vector<double> bound_x, bound_y;  // ln regressor, ln thm4.1-length (finite, positive)
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
        bound_x.push_back(std::log(point.regressor));
        bound_y.push_back(std::log(bound));
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
  row.paper = FitLine(bound_x, bound_y).slope;
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

}  // namespace ltsim
