// Lengths dealt one by one (core/work.h) and reduced in order until the first disagreement:
// the shape shared by the full enumeration and the string search.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim::threshold {

/// The largest gap of one length and where it was first reached in search order: a string,
/// or statistics that Realise turns into one when they are reported.
struct LengthOutcome {
  double max_gap = -1.0;
  /// The disagreeing statistic (or string) with the largest gap, first in search order.
  bool disagrees = false;
  double witness_gap = -1.0;
  std::vector<Token> argmax;
  std::optional<TypeCounts> argmax_counts;
  std::uint64_t precise = 0;  ///< statistics decided in 50 digits (docs/theory.md §8.7)
};

/// The options' time budget and stop flag, watched from the search's start.
class StopWatch {
 public:
  explicit StopWatch(const ThresholdOptions& options);
  /// Which of the two has fired (kNone: neither).
  ThresholdStop Fired() const;
  double Seconds() const;

 private:
  std::chrono::steady_clock::time_point start_;
  double budget_;
  const std::atomic<bool>* flag_;
};

/// Adds one evaluated gap to the length's outcome.
void Note(double gap, bool disagrees, LengthOutcome& outcome);

/// Records one length's outcome (its largest gap as both bounds of the length: every string or
/// statistic of it was evaluated); true when it is the first disagreement (the search stops).
bool Record(const Transformer& f, const Transformer& g, std::uint64_t length,
            const LengthOutcome& outcome, double epsilon, ThresholdResult& result);

/// Lengths n … N are the dealer's items (weighted by `weight`, so short lengths travel
/// together), reduced in order until the first disagreement, the time budget or the stop flag;
/// `search` runs one length. Lengths below n are recorded as NaN (not searched).
void SearchLengths(const Transformer& f, const Transformer& g, const ThresholdOptions& options,
                   const std::function<double(std::uint64_t)>& weight,
                   const std::function<LengthOutcome(std::uint64_t, std::uint64_t&)>& search,
                   ThresholdResult& result);

}  // namespace ltsim::threshold
