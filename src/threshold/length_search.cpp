// Lengths 1 … N dealt to processes (core/work.h) and reduced in order until the first
// disagreement: the full enumeration's and the string search's shared loop.
#include "threshold/length_search.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "ltsim/core/work.h"
#include "threshold/item_codec.h"
#include "threshold/statistics.h"
#include "threshold/witness_recheck.h"

namespace ltsim::threshold {

void Note(double gap, bool disagrees, LengthOutcome& outcome) {
  outcome.max_gap = std::max(outcome.max_gap, gap);
  outcome.disagrees = outcome.disagrees || disagrees;
}

bool Record(const Transformer& f, const Transformer& g, std::uint64_t length,
            const LengthOutcome& outcome, double epsilon, ThresholdResult& result) {
  result.max_gap_per_length.push_back(outcome.max_gap);
  result.statistics_precise += outcome.precise;
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
  const auto start = std::chrono::steady_clock::now();
  DealWeighted(
      dealer, 1, options.max_length + 1, weight,
      [&](std::uint64_t t) {
        std::uint64_t evaluations = 0;
        const LengthOutcome outcome = search(t, evaluations);
        return OutcomeBytes(outcome, evaluations);
      },
      [&](std::uint64_t t, std::string&& bytes) {
        const LengthOutcome outcome = OutcomeFromBytes(bytes, result.evaluations);
        if (Record(f, g, t, outcome, options.epsilon, result)) return false;
        if (options.progress)
          options.progress(
              t, options.max_length, result.evaluations,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        return true;
      });
}

}  // namespace ltsim::threshold
