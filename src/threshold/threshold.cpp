// The first length where two models disagree by more than ε: checks the limits, then runs the
// search the pair allows (exact for one-layer pairs; docs/theory.md §7.2).
#include "ltsim/threshold/threshold.h"

#include <algorithm>

#include "threshold/limits.h"
#include "threshold/path_threshold.h"
#include "threshold/searches.h"

namespace ltsim {

const char* ThresholdMethodName(ThresholdMethod method) {
  switch (method) {
    case ThresholdMethod::kStatistics:
      return "statistics";
    case ThresholdMethod::kExhaustiveRandom:
      return "exhaustive+random";
    case ThresholdMethod::kPaths:
      return "paths";
  }
  return "?";
}

const char* ThresholdStopName(ThresholdStop stop) {
  switch (stop) {
    case ThresholdStop::kNone:
      return "none";
    case ThresholdStop::kEvaluations:
      return "evaluation budget";
    case ThresholdStop::kTimeBudget:
      return "time budget";
    case ThresholdStop::kSignal:
      return "signal";
  }
  return "none";
}

ThresholdResult FindThreshold(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options) {
  threshold::CheckCommon(f, g, options);
  if (threshold::TwoLayerPair(f, g)) {
    // The path search (docs/theory.md §11.5) while length 1 is within its limits.
    if (options.two_layer_paths &&
        threshold::PathSearchLength(f, g, 1, std::max(options.threads, 1)) >= 1)
      return threshold::FindByPaths(f, g, options);
    threshold::CheckStringLimits(f, g, options);
    return threshold::FindByStrings(f, g, options);
  }
  if (options.prune) {
    threshold::CheckCellLimits(f, g, options);
    // MPI ranks share the pruned search's windows; shards record theirs up to their own first
    // disagreement and the merge replays them (FindByCells, docs/distributed.md §4.2).
    return threshold::FindByCells(f, g, options);
  }
  threshold::CheckStatisticsLimits(f, g, options.min_length, options.max_length);
  return threshold::FindByStatistics(f, g, options);
}

}  // namespace ltsim
