// The options shared by `simulate`, `sandwich` and `statistic`: method, target length, seed, ℓ.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "ltsim/check/sandwich.h"
#include "ltsim/sim/simulator.h"

namespace ltsim::cli {

/// Adds --method, --length, --seed and --block-length to `cmd`, writing into `options`.
inline void AddMethodOptions(CLI::App* cmd, SandwichOptions& options) {
  std::string names;
  for (const std::string& name : SimulatorNames()) names += (names.empty() ? "" : ", ") + name;
  cmd->add_option("--method", options.method, "how to build z: " + names)->default_val("frequency");
  cmd->add_option("--length", options.length,
                  "target length n of z (|z| ≤ n; `markov`: mean ≈ n), at least 1")
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
  cmd->add_option("--block-length", options.block_length,
                  "mean kept-block length ℓ of `markov` and `blocks` (0 = ⌈n^(1/3)⌉)")
      ->default_val(0);
}

}  // namespace ltsim::cli
