#include "ltsim/study/report_format.h"

#include <fmt/format.h>

#include <cmath>

namespace ltsim {

io::Json FiniteNumber(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

io::Json IntervalJson(const std::optional<std::pair<double, double>>& interval) {
  if (!interval) return nullptr;
  return io::Json::array({FiniteNumber(interval->first), FiniteNumber(interval->second)});
}

std::string ShowNumber(double value) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "∞" : "-∞";
  return fmt::format("{:.6g}", value);
}

}  // namespace ltsim
