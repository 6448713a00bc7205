// Comma-separated numeric options of the command line (`sweep --values`, `experiment --omegas`).
#pragma once

#include <cstddef>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "strict_numbers.h"

namespace ltsim::cli {

/// "1,2,4" → {1, 2, 4}, "" → {}; every item must be a finite decimal number (docs/design.md §3:
/// no "0x10", "nan" or "inf", which std::stod reads), else an InputError naming `option`
/// and the item.
inline std::vector<double> ParseNumberList(const std::string& text, const std::string& option) {
  std::vector<double> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !detail::RealRule(item).empty())
      throw InputError(option + ": '" + item.substr(0, 40) + "' is not a finite decimal number");
    values.push_back(value);
  }
  return values;
}

}  // namespace ltsim::cli
