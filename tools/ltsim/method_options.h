// The options shared by `simulate`, `sandwich` and `statistic`: method, length of z, seed, ℓ.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "common_options.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/sim/simulator.h"

namespace ltsim::cli {

/// The two spellings of the length of z (`--z-length`, old `--length`), to check that one
/// was given (RequireZLength) once parsing is done.
struct ZLengthOptions {
  CLI::Option* option = nullptr;
  CLI::Option* old_spelling = nullptr;
};

/// Adds --method, --z-length (old spelling --length), --seed and --block-length to `cmd`,
/// writing into `options`.
inline ZLengthOptions AddMethodOptions(CLI::App* cmd, SandwichOptions& options) {
  std::string names;
  for (const std::string& name : SimulatorNames()) names += (names.empty() ? "" : ", ") + name;
  cmd->add_option("--method", options.method, "the simulator that builds z: " + names)
      ->default_val("frequency");
  ZLengthOptions z;
  z.option = cmd->add_option("--z-length", options.length,
                             "target length n of z (|z| ≤ n; `markov`: mean ≈ n), at least 1 "
                             "(required)")
                 ->check(AtLeastOne());
  z.old_spelling = AddDeprecated(cmd, "--length", options.length, "--z-length");
  z.old_spelling->check(AtLeastOne("--length"));
  AddSeed(cmd, options.seed);
  std::vector<std::string> block_methods = SimulatorNamesWith(&SimulatorTraits::block_rate);
  for (std::string& name : block_methods) name = "`" + name + "`";
  cmd->add_option(
         "--block-length", options.block_length,
         "mean kept-block length ℓ of " + JoinNames(block_methods, "and") + " (0 = ⌈n^(1/3)⌉)")
      ->default_val(0);
  return z;
}

/// "--z-length: required (…)" unless one spelling was given.
inline void RequireZLength(const ZLengthOptions& z) {
  RequireOne(z.option, z.old_spelling, "the target length n of z");
}

}  // namespace ltsim::cli
