// The options shared by `simulate` and `sandwich`: method, target length, seed.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "ltsim/check/sandwich.h"
#include "ltsim/sim/simulator.h"

namespace ltsim::cli {

/// Adds --method, --length and --seed to `cmd`, writing into `options`.
inline void AddMethodOptions(CLI::App* cmd, SandwichOptions& options) {
  std::string names;
  for (const std::string& name : SimulatorNames()) names += (names.empty() ? "" : ", ") + name;
  cmd->add_option("--method", options.method, "how to build z: " + names)->default_val("frequency");
  cmd->add_option("--length", options.length, "target length n of z (|z| ≤ n), at least 1")
      ->required()
      ->check(CLI::Validator(
          [](std::string& value) {
            return value.find_first_not_of("0123456789") == std::string::npos &&
                           value.find_first_not_of('0') != std::string::npos
                       ? std::string()
                       : "must be a whole number of at least 1, not '" + value + "'";
          },
          "N ≥ 1"));
  cmd->add_option("--seed", options.seed, "master seed of every random choice (printed)")
      ->default_val(1);
}

}  // namespace ltsim::cli
