// The outcomes the searches deal to other processes (core/work.h) as exact bytes, so that the
// reducer records what a single process would.
#pragma once

#include <cstdint>
#include <string>

#include "ltsim/model/joint_view.h"
#include "threshold/cells.h"
#include "threshold/length_search.h"

namespace ltsim::threshold {

/// One length's outcome and its evaluations.
std::string OutcomeBytes(const LengthOutcome& o, std::uint64_t evaluations);
/// The inverse of OutcomeBytes for the outcome of `length` in `view` (a statistic's shape, or
/// a string of `length` tokens below the alphabet); adds the evaluations to `evaluations`.
/// The bytes may come from a shard file: any other shape, a truncated or overlong item is an
/// InputError naming the length ("threshold item (length T): …"), never a failed check.
LengthOutcome OutcomeFromBytes(const std::string& bytes, std::uint64_t length,
                               const JointView& view, std::uint64_t& evaluations);

/// One task of the pruned search.
std::string TaskBytes(const TaskOutcome& o);
/// The inverse of TaskBytes for the outcome of `spec` in the searched `view`, its shapes
/// checked as OutcomeFromBytes does ("threshold task (lengths from T): …").
TaskOutcome TaskFromBytes(const std::string& bytes, const TaskSpec& spec, const JointView& view);

}  // namespace ltsim::threshold
