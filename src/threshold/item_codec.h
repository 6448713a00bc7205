// The outcomes the searches deal to other processes (core/work.h) as exact bytes, so that the
// reducer records what a single process would.
#pragma once

#include <cstdint>
#include <string>

#include "threshold/cells.h"
#include "threshold/length_search.h"

namespace ltsim::threshold {

/// One length's outcome and its evaluations.
std::string OutcomeBytes(const LengthOutcome& o, std::uint64_t evaluations);
/// The inverse of OutcomeBytes; adds the evaluations to `evaluations`.
LengthOutcome OutcomeFromBytes(const std::string& bytes, std::uint64_t& evaluations);

/// One task of the pruned search.
std::string TaskBytes(const TaskOutcome& o);
TaskOutcome TaskFromBytes(const std::string& bytes);

}  // namespace ltsim::threshold
