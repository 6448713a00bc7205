// The full enumeration of one-layer statistics: every sufficient statistic of every length,
// each evaluated (docs/theory.md §7.2; prune = false).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/rounding.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/joint_view.h"
#include "threshold/searches.h"
#include "threshold/statistics.h"

namespace ltsim::threshold {
namespace {

// Every statistic (far counts per type, suffix) of one length in a view, in a fixed order:
// the suffix fastest, then the composition of each residue class, the last class first.
class StatisticsOdometer {
 public:
  StatisticsOdometer(const JointView& view, std::uint64_t length) {
    counts_.alphabet = view.alphabet;
    counts_.period = view.period;
    counts_.locality = view.locality;
    counts_.length = length;
    const std::uint64_t m = std::min<std::uint64_t>(length, view.locality + 1);
    counts_.suffix.assign(m, 0);
    counts_.far.assign(static_cast<std::size_t>(view.alphabet) * view.period, 0);
    for (int r = 0; r < view.period; ++r)
      counts_.far[counts_.TypeIndex(0, r)] = ClassSize(length - m, view.period, r);
  }

  const TypeCounts& counts() const { return counts_; }

  bool Next() {
    for (std::size_t k = counts_.suffix.size(); k-- > 0;) {
      if (++counts_.suffix[k] < counts_.alphabet) return true;
      counts_.suffix[k] = 0;
    }
    for (int r = counts_.period - 1; r >= 0; --r)
      if (NextComposition(&counts_.far[counts_.TypeIndex(0, r)], counts_.alphabet)) return true;
    return false;
  }

 private:
  TypeCounts counts_;
};

// The rounding bounds of both one-layer models up to one length, in double and in 50 digits
// (docs/theory.md §8.7).
struct PairRounding {
  OneLayerRounding f, g, precise_f, precise_g;
  PairRounding(const Transformer& mf, const Transformer& mg, std::uint64_t length)
      : f(MakeOneLayerRounding(mf, length, RoundingTerms(mf))),
        g(MakeOneLayerRounding(mg, length, RoundingTerms(mg))),
        precise_f(MakeOneLayerRounding(mf, length, RoundingTerms(mf), kPreciseUnit)),
        precise_g(MakeOneLayerRounding(mg, length, RoundingTerms(mg), kPreciseUnit)) {}
};

// The verdict in 50 digits, for a statistic whose double gap lies within the rounding bound of
// ε + tolerance (or with a decision rounding could flip): InputError when 50 digits cannot
// decide it either.
double PreciseStatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& cf,
                           const TypeCounts& cg, const PairRounding& rounding, double epsilon,
                           bool& disagrees) {
  const PreciseVector a = EvaluatePreciseOneLayer(f, cf), b = EvaluatePreciseOneLayer(g, cg);
  // Its attention decisions are those of the exact logits (EvaluatePreciseOneLayer): only the
  // values round.
  const double error =
      OutputBound(rounding.precise_f, cf.length) + OutputBound(rounding.precise_g, cg.length);
  const PreciseReal gap = PreciseSupDistance(a, b);
  PreciseReal scale = 1;
  for (const PreciseVector* v : {&a, &b})
    for (const PreciseReal& y : *v) scale = std::max(scale, PreciseReal(abs(y)));
  const PreciseReal boundary = PreciseReal(epsilon) + PreciseReal(kThresholdGapTolerance) * scale;
  if (!(abs(gap - boundary) > PreciseReal(error) * 2))
    throw InputError(fmt::format(
        "threshold: the models cannot be evaluated reliably at length {}: their gap {} lies "
        "within the 50-digit rounding bound {:.3g} of eps + tolerance (docs/theory.md §8.7)",
        cf.length, PreciseText(gap, 17), error));
  disagrees = gap > boundary;
  return static_cast<double>(gap);
}

// The gap of one statistic, and whether it disagrees (ThresholdDisagrees), decided in 50 digits
// where the double gap is within the rounding bound of the boundary (docs/theory.md §8.7).
double StatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& joint,
                    double epsilon, const PairRounding& rounding, bool& disagrees,
                    std::uint64_t& precise) {
  const TypeCounts cf = Coarsen(joint, f.period, f.locality);
  const TypeCounts cg = Coarsen(joint, g.period, g.locality);
  const Vector a = EvaluateOneLayer(f, cf);
  const Vector b = EvaluateOneLayer(g, cg);
  const double gap = Gap(a, b);
  disagrees = ThresholdDisagrees(gap, epsilon, a, b);
  const double error = StatisticErrorBound(rounding.f, cf) + StatisticErrorBound(rounding.g, cg);
  const double scale = std::max({1.0, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  if (std::abs(gap - (epsilon + kThresholdGapTolerance * scale)) > 2 * error) return gap;
  ++precise;
  return PreciseStatisticGap(f, g, cf, cg, rounding, epsilon, disagrees);
}

}  // namespace

LengthOutcome SearchStatistics(const Transformer& f, const Transformer& g, const JointView& view,
                               std::uint64_t length, double epsilon, std::uint64_t& evaluations) {
  StatisticsOdometer odometer(view, length);
  LengthOutcome outcome;
  const PairRounding rounding(f, g, length);
  do {
    bool disagrees = false;
    const double gap =
        StatisticGap(f, g, odometer.counts(), epsilon, rounding, disagrees, outcome.precise);
    ++evaluations;
    Note(gap, disagrees, outcome);
    if (disagrees && gap > outcome.witness_gap) {
      outcome.witness_gap = gap;
      outcome.argmax_counts = odometer.counts();
    }
  } while (odometer.Next());
  return outcome;
}

ThresholdResult FindByStatistics(const Transformer& f, const Transformer& g,
                                 const ThresholdOptions& options) {
  ThresholdResult result;
  result.method = ThresholdMethod::kStatistics;
  result.view = JointViewOf({&f, &g});
  const JointView view = result.view;
  SearchLengths(
      f, g, options,
      [&](std::uint64_t t) {
        return static_cast<double>(CountStatistics(view.alphabet, view.period, view.locality, t));
      },
      [&](std::uint64_t t, std::uint64_t& evaluations) {
        return SearchStatistics(f, g, view, t, options.epsilon, evaluations);
      },
      result);
  result.exhaustive_up_to = result.checked_up_to;
  result.exhaustive = true;
  result.statistics_evaluated = result.evaluations;
  for (std::uint64_t t = options.min_length; t <= result.checked_up_to; ++t)
    result.statistics_total = SaturatingAdd(
        result.statistics_total,
        CountStatistics(result.view.alphabet, result.view.period, result.view.locality, t));
  return result;
}

}  // namespace ltsim::threshold
