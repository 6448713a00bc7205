// The pieces every study reporter writes the same way (docs/formats.md §3): numbers and
// intervals in JSON (null when not finite or absent) and numbers for humans in tables.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "ltsim/io/json.h"

namespace ltsim {

/// A number for JSON: non-finite values (∞ margins, NaN "not applicable") become null.
io::Json FiniteNumber(double value);

/// [low, high] for JSON, null without an interval.
io::Json IntervalJson(const std::optional<std::pair<double, double>>& interval);

/// A number for humans ("∞", "n/a" for NaN, else 6 significant digits).
std::string ShowNumber(double value);

}  // namespace ltsim
