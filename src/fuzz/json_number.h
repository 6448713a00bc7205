// Numbers for the campaign's JSON files: non-finite values have no JSON spelling.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>

namespace ltsim {

/// A finite number, or null (NaN: not applicable).
inline nlohmann::ordered_json JsonNumber(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

/// A ratio observed/bound: +∞ (a positive observation against a zero bound) is "inf".
inline nlohmann::ordered_json JsonRatio(double v) {
  return std::isinf(v) && v > 0 ? nlohmann::ordered_json("inf") : JsonNumber(v);
}

}  // namespace ltsim
