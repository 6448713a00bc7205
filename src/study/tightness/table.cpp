// The console tables of `ltsim tightness` (docs/tightness.md): one layout per theorem, and the
// joint fit after the Theorem 4.1 table.
#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "ltsim/study/report_format.h"
#include "ltsim/study/tightness_report.h"

namespace ltsim {
namespace {

std::string Show(double value) { return ShowNumber(value); }

std::string Fixed(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "n/a"; }

std::string ShowInterval(const std::optional<std::pair<double, double>>& ci) {
  return ci ? fmt::format("[{:.3g}, {:.3g}]", ci->first, ci->second) : "no CI";
}

// Theorem 5.3: one row per scheme, errors against n.
void PrintRateTable(const TightnessResult& result, std::ostream& out) {
  const TightnessOptions& o = result.options;
  out << fmt::format(
      "tightness, Lemma 5.3 (--theorem 5.3) — seed {}, {} z seeds a point, |x| = {}\n", o.seed,
      o.seeds, o.statistic_x_length);
  out << "  lower = adversarial statistic error found (lower bound on the supremum the "
         "lemma bounds); upper = transport bound over the whole class on the same x and z; "
         "paper = the lemma's exponent in n\n";
  out << fmt::format("{:<9} {:<9} {:>23} {:>23} {:>7}  {:<13} {}\n", "parameter", "scheme",
                     "lower exponent [95% CI]", "upper exponent [95% CI]", "paper", "verdict",
                     "empirical constant");
  for (const TightnessRow& r : result.rows)
    out << fmt::format("{:<9} {:<9} {:>6} {:>16} {:>6} {:>16} {:>7}  {:<13} {} = {}\n",
                       TightnessRowParameter(r), r.scheme, Fixed(r.lower.exponent),
                       ShowInterval(r.lower.ci), Fixed(r.upper.exponent), ShowInterval(r.upper.ci),
                       Fixed(r.paper), VerdictName(r.verdict.verdict), r.constant.name,
                       r.constant.point >= 0 ? Show(r.constant.value) : "n/a");
  for (const TightnessRow& r : result.rows) {
    out << fmt::format("\n{} ({}): {}\n  class: {}\n", r.scheme, r.fit, r.verdict.reason,
                       r.class_text);
    out << fmt::format("  {:>8} {:>34} {:>34}\n",
                       TightnessRowParameter(r) == std::string("locality") ? "tau" : "n",
                       "lower error (min/med/max)", "upper bound (min/med/max)");
    for (const TightnessPoint& p : r.points) {
      const auto cell = [](const std::vector<TightnessSample>& samples) {
        SeriesPoint s;
        for (const TightnessSample& m : samples) s.samples.push_back(m.sample);
        const Spread spread = SampleSpread(s);
        return fmt::format("{}/{}/{}{}", Show(spread.min), Show(spread.median), Show(spread.max),
                           PointCensoring(s) != Censoring::kNone ? " (floor)" : "");
      };
      out << fmt::format("  {:>8} {:>34} {:>34}\n", Show(p.value), cell(p.lower), cell(p.upper));
    }
  }
  out << "\n(floor: some z seed reproduced x's statistic to 1e-12, so that error is only "
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
void Print52Table(const TightnessResult& result, std::ostream& out) {
  const TightnessOptions& o = result.options;
  out << fmt::format(
      "tightness, Theorem 5.2 (--theorem 5.2) — seed {}, {} members (eps, k: x inputs) a "
      "point\n",
      o.seed, o.seeds);
  out << "  lower = certified T* of a pair (lower bound on N); upper = balanced-blocks' "
         "certified length (two-layer-length, docs/theory.md §4.8); simulator = "
         "balanced-blocks' needed length on found x (neither bound); paper = thm5.2's "
         "exponent in the regressor\n";
  out << fmt::format("{:<17} {:>11} {:>23} {:>23} {:>23} {:>7}  {}\n", "parameter", "in",
                     "lower exponent [95% CI]", "upper exponent [95% CI]", "simulator [95% CI]",
                     "paper", "verdict");
  for (const TightnessRow& r : result.rows)
    out << fmt::format("{:<17} {:>11} {} {} {} {:>7.3g}  {}\n", TightnessRowParameter(r),
                       r.regressor, ShowSide(r.lower), ShowSide(r.upper), ShowSide(r.simulator),
                       r.paper, VerdictName(r.verdict.verdict));
  for (const TightnessRow& r : result.rows) {
    out << fmt::format("\n{} ({}): {}\n  class: {}\n", TightnessRowParameter(r), r.fit,
                       r.verdict.reason, r.class_text);
    if (r.constant.point >= 0)
      out << fmt::format("  empirical constant {} = {} ({})\n", r.constant.name,
                         Show(r.constant.value), r.constant.witness);
    out << fmt::format("  {:>10} {:>11} {:>26} {:>8} {:>30}\n", TightnessRowParameter(r),
                       r.regressor, "lower T* (min/med/max)", "upper",
                       "simulator needed (min/med/max)");
    for (const TightnessPoint& p : r.points)
      out << fmt::format("  {:>10} {:>11} {:>26} {:>8} {:>30}\n", Show(p.value), Show(p.regressor),
                         SpreadText(p.lower, " (capped)"), SpreadText(p.upper, ""),
                         p.simulator_samples.empty()
                             ? std::string("not run")
                             : SpreadText(p.simulator_samples, " (censored)"));
    for (const std::string& w : r.warnings) out << "  warning: " << w << "\n";
  }
  out << "\n(capped: the exact search stopped before a disagreement, so T* is only > the "
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
void Print42Table(const TightnessResult& result, std::ostream& out) {
  const TightnessOptions& o = result.options;
  out << fmt::format(
      "tightness, Theorem 4.2 (--theorem 4.2) — seed {}, {} members a point, exact average sums "
      "up to T = {}\n",
      o.seed, o.seeds, o.average_max_length);
  out << "  lower = exact average first disagreement T* (least T with E||f - g|| > eps, "
         "pi ~ Dir(alpha0), tokens iid from pi; a lower bound on N0); no certified upper "
         "side; paper = thm4.2's exponent; later gap = the largest E||f - g|| after T* "
         "(measured), against the paper's O(eps^(1/2))\n";
  out << fmt::format("{:<17} {:>8} {:>23} {:>7}  {:<13} {:>24} {:>5}\n", "row", "in",
                     "lower exponent [95% CI]", "paper", "verdict", "later gap ~ eps^b [CI]",
                     "paper");
  for (const TightnessRow& r : result.rows)
    out << fmt::format(
        "{:<17} {:>8} {} {:>7.3g}  {:<13} {:>24} {:>5}\n", r.name, r.regressor, ShowSide(r.lower),
        r.paper, VerdictName(r.verdict.verdict),
        std::isfinite(r.conclusion.exponent)
            ? fmt::format("{} {}", Fixed(r.conclusion.exponent), ShowInterval(r.conclusion.ci))
            : std::string("n/a"),
        std::isfinite(r.conclusion_paper) ? Fixed(r.conclusion_paper) : "");
  for (const TightnessRow& r : result.rows) {
    out << fmt::format("\n{} ({}): {}\n  class: {}\n", r.name, r.fit, r.verdict.reason,
                       r.class_text);
    if (std::isfinite(r.conclusion.exponent))
      out << fmt::format("  conclusion: {}\n", r.conclusion.reason);
    if (r.constant.point >= 0)
      out << fmt::format("  empirical constant {} = {}\n", r.constant.name, Show(r.constant.value));
    out << fmt::format("  {:>10} {:>10} {:>24} {:>22} {:>10} {:>12}\n",
                       TightnessRowParameter(r) == std::string("alpha0") ? "alpha0" : "eps",
                       r.regressor, "lower T* (min/med/max)", "later gap (min/med/max)", "gap/eps",
                       "gap/sqrt(eps)");
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
      out << fmt::format("  {:>10} {:>10} {:>24} {:>22} {:>10} {:>12}\n", Show(p.value),
                         Show(p.regressor), SpreadText(p.lower, " (capped)"), spread + bounds,
                         Show(g.median / eps), Show(g.median / std::sqrt(eps)));
    }
    for (const std::string& w : r.warnings) out << "  warning: " << w << "\n";
  }
  out << "\n(capped: no length up to the cap has an expected gap above eps, so T* is only > "
         "the cap: the point is a bound and is not fitted; a capped member's later gap is "
         "shown as ≥x or >eps, a lower bound kept out of the median and the ratios)\n";
}

// 4.1 --joint, after the table.
void PrintJoint(const TightnessJoint& j, const std::vector<TightnessRow>& rows, std::ostream& out) {
  std::string names;
  for (const std::string& r : j.rows) names += (names.empty() ? "" : ", ") + r;
  out << fmt::format(
      "\njoint fit (lower side, log-log: ln T* = a + sum_j b_j ln x_j) over the samples of {}: "
      "{} used, {} censored, {} without a logarithm{}\n",
      names.empty() ? std::string("no row") : names, j.fit.observations_used,
      j.fit.observations_censored, j.dropped,
      j.dropped_note.empty() ? "" : " (" + j.dropped_note + ")");
  if (j.families.size() > 1) {
    std::string families;
    for (const std::string& f : j.families) families += (families.empty() ? "" : ", ") + f;
    out << fmt::format("  one intercept per family ({}), shared exponents\n", families);
  }
  for (const std::string& l : j.left_out) out << "  left out: " << l << "\n";
  if (!j.reason.empty()) out << "  " << j.reason << "\n";
  for (std::size_t k = 0; k < j.parameters.size(); ++k) {
    const double b = k < j.fit.coefficients.size() ? j.fit.coefficients[k] : NAN;
    std::string own;
    for (const TightnessRow& r : rows)
      if (r.regressor == j.parameters[k] && r.parameter != StudyParameter::kMargin)
        own = fmt::format("   (row {} alone: {} {})", r.name, Fixed(r.lower.exponent),
                          ShowInterval(r.lower.ci));
    out << fmt::format("  {:>6} {:>7} {:>18}{}\n", j.parameters[k], Fixed(b),
                       ShowInterval(k < j.fit.ci.size() ? j.fit.ci[k] : std::nullopt), own);
  }
}

}  // namespace

void PrintTightnessTable(const TightnessResult& result, std::ostream& out) {
  if (result.options.theorem == Theorem::k53) return PrintRateTable(result, out);
  if (result.options.theorem == Theorem::k52) return Print52Table(result, out);
  if (result.options.theorem == Theorem::k42) return Print42Table(result, out);
  const TightnessOptions& o = result.options;
  if (!o.family_dir.empty())
    out << fmt::format(
        "tightness, Theorem {} — the user family {}, exact thresholds within {} statistics\n",
        kTheoremNames.Name(o.theorem), o.family_dir, o.statistics_budget);
  else
    out << fmt::format(
        "tightness, Theorem {} — seed {}, {} members a point, exact thresholds within {} "
        "statistics\n",
        kTheoremNames.Name(o.theorem), o.seed, o.seeds, o.statistics_budget);
  out << "  lower = certified T* of a family (lower bound on N); upper = the construction's "
         "certified length; paper = registry bound's exponent\n";
  out << fmt::format("{:<9} {:>8} {:>23} {:>23} {:>7}  {:<13} {}\n", "parameter", "in",
                     "lower exponent [95% CI]", "upper exponent [95% CI]", "paper", "verdict",
                     "empirical constant");
  for (const TightnessRow& r : result.rows) {
    out << fmt::format("{:<9} {:>8} {:>6} {:>16} {:>6} {:>16} {:>7.3g}  {:<13} {} = {}\n",
                       TightnessRowParameter(r), r.regressor, Fixed(r.lower.exponent),
                       ShowInterval(r.lower.ci), Fixed(r.upper.exponent), ShowInterval(r.upper.ci),
                       r.paper, VerdictName(r.verdict.verdict), r.constant.name,
                       r.constant.point >= 0 ? Show(r.constant.value) : "n/a");
  }
  for (const TightnessRow& r : result.rows) {
    out << fmt::format("\n{} ({}): {}\n  class: {}\n", TightnessRowParameter(r), r.fit,
                       r.verdict.reason, r.class_text);
    out << fmt::format("  {:>10} {:>10} {:>24} {:>12} {:>22}\n", TightnessRowParameter(r),
                       r.regressor, "lower T* (min/med/max)", "upper", "simulator on found x");
    for (const TightnessPoint& p : r.points) {
      SeriesPoint s;
      for (const TightnessSample& m : p.lower) s.samples.push_back(m.sample);
      const Spread spread = SampleSpread(s);
      const bool censored = PointCensoring(s) != Censoring::kNone;
      out << fmt::format("  {:>10} {:>10} {:>24} {:>12} {:>22}\n", Show(p.value), Show(p.regressor),
                         fmt::format("{}/{}/{}{}", Show(spread.min), Show(spread.median),
                                     Show(spread.max), censored ? " (capped)" : ""),
                         Show(p.upper.front().sample.value),
                         r.family_dir.empty() ? SimulatorText(p.simulator) : "not run");
    }
    for (const std::string& w : r.warnings) out << "  warning: " << w << "\n";
  }
  out << "\n(capped: some member agreed up to the searched N, so its T* is only > N: the "
         "point is a bound and is not fitted)\n";
  if (o.validate)
    out << "(simulator on found x: |x| grown 4x a step until n stopped growing, [upper "
           "side] reached the certified length or [cap] reached --max-x-length; n+ = no "
           "n < |x| met eps)\n";
  if (result.joint) PrintJoint(*result.joint, result.rows, out);
}

}  // namespace ltsim
