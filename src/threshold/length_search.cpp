// Lengths 1 … N dealt to processes (core/work.h) and reduced in order until the first
// disagreement: the full enumeration's and the string search's shared loop.
#include "threshold/length_search.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include "ltsim/core/work.h"
#include "threshold/item_codec.h"
#include "threshold/statistics.h"
#include "threshold/witness_recheck.h"

namespace ltsim::threshold {

StopWatch::StopWatch(const ThresholdOptions& options)
    : start_(std::chrono::steady_clock::now()), budget_(options.time_budget), flag_(options.stop) {}

ThresholdStop StopWatch::Fired() const {
  if (flag_ != nullptr && flag_->load()) return ThresholdStop::kSignal;
  if (budget_ > 0.0 && Seconds() >= budget_) return ThresholdStop::kTimeBudget;
  return ThresholdStop::kNone;
}

double StopWatch::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Note(double gap, bool disagrees, LengthOutcome& outcome) {
  outcome.max_gap = std::max(outcome.max_gap, gap);
  outcome.disagrees = outcome.disagrees || disagrees;
}

bool Record(const Transformer& f, const Transformer& g, std::uint64_t length,
            const LengthOutcome& outcome, double epsilon, ThresholdResult& result) {
  result.max_gap_per_length.push_back(outcome.max_gap);
  result.statistics_precise += outcome.precise;
  result.gap_upper_per_length.push_back(outcome.max_gap);
  result.checked_up_to = length;
  if (!outcome.disagrees) return false;
  SetWitness(f, g, length,
             ToRuns(outcome.argmax_counts ? Realise(*outcome.argmax_counts) : outcome.argmax),
             outcome.witness_gap, epsilon, result);
  return true;
}

void SearchLengths(const Transformer& f, const Transformer& g, const ThresholdOptions& options,
                   const std::function<double(std::uint64_t)>& weight,
                   const std::function<LengthOutcome(std::uint64_t, std::uint64_t&)>& search,
                   ThresholdResult& result) {
  ItemDealer& dealer = options.dealer ? *options.dealer : LocalDealer();
  const StopWatch watch(options);
  const double not_searched = std::numeric_limits<double>::quiet_NaN();
  result.min_length = options.min_length;
  result.max_gap_per_length.assign(options.min_length - 1, not_searched);
  result.gap_upper_per_length.assign(options.min_length - 1, not_searched);
  result.checked_up_to = options.min_length - 1;
  ThresholdStop fired = ThresholdStop::kNone;
  const DealReport report = DealWeighted(
      dealer, options.min_length, options.max_length + 1, weight,
      [&](std::uint64_t t) {
        std::uint64_t evaluations = 0;
        const LengthOutcome outcome = search(t, evaluations);
        return OutcomeBytes(outcome, evaluations);
      },
      [&](std::uint64_t t, std::string&& bytes) {
        const LengthOutcome outcome = OutcomeFromBytes(bytes, t, result.view, result.evaluations);
        if (Record(f, g, t, outcome, options.epsilon, result)) return false;
        if (options.progress)
          options.progress(t, options.max_length, result.evaluations, watch.Seconds());
        return true;
      },
      [&] {
        fired = watch.Fired();
        return fired != ThresholdStop::kNone;
      });
  if (report.stopped && !result.first_disagreement && result.checked_up_to < options.max_length) {
    result.complete = false;
    result.stopped = fired;
  }
}

}  // namespace ltsim::threshold
