// The full enumeration of one-layer statistics: every sufficient statistic of every length,
// each evaluated (docs/theory.md §7.2; prune = false).
#include <algorithm>
#include <cstdint>

#include "ltsim/eval/one_layer.h"
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

// The gap of one statistic, and whether it disagrees (ThresholdDisagrees).
double StatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& joint,
                    double epsilon, bool& disagrees) {
  const Vector a = EvaluateOneLayer(f, Coarsen(joint, f.period, f.locality));
  const Vector b = EvaluateOneLayer(g, Coarsen(joint, g.period, g.locality));
  const double gap = Gap(a, b);
  disagrees = ThresholdDisagrees(gap, epsilon, a, b);
  return gap;
}

}  // namespace

LengthOutcome SearchStatistics(const Transformer& f, const Transformer& g, const JointView& view,
                               std::uint64_t length, double epsilon, std::uint64_t& evaluations) {
  StatisticsOdometer odometer(view, length);
  LengthOutcome outcome;
  do {
    bool disagrees = false;
    const double gap = StatisticGap(f, g, odometer.counts(), epsilon, disagrees);
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
