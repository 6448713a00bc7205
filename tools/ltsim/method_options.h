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
  cmd->add_option("--length", options.length, "target length n of z (|z| ≤ n)")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", options.seed, "master seed of every random choice (printed)")
      ->default_val(1);
}

}  // namespace ltsim::cli
