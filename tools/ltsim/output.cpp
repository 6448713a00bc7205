// Formatting helpers of the command line.
#include "output.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

namespace ltsim::cli {

Json Number(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

Json Array(const Vector& v) {
  Json array = Json::array();
  for (Eigen::Index k = 0; k < v.size(); ++k) array.push_back(Number(v[k]));
  return array;
}

Json Context(const std::string& command, std::uint64_t seed) {
  nlohmann::ordered_json context;
  return {{"version", LTSIM_VERSION}, {"command", command}, {"seed", seed}, {"threads", 1}};
}

void PrintJson(const Json& document) { std::cout << document.dump(2) << "\n"; }

std::string Show(double value) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "∞" : "-∞";
  return fmt::format("{:.6g}", value);
}

std::string Show(const Vector& v) {
  if (v.size() == 1) return Show(v[0]);
  std::string out = "[";
  for (Eigen::Index k = 0; k < v.size(); ++k) out += (k ? ", " : "") + Show(v[k]);
  return out + "]";
}

}  // namespace ltsim::cli
