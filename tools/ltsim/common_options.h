// The options every command spells the same way (docs/commands.md "One name per concept"): seed,
// threads, lengths of x and z, output file and directory, with their old spellings.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/io/names.h"
#include "ltsim/model/transformer.h"

namespace ltsim::cli {

/// The master seed's default in every command.
constexpr std::uint64_t kDefaultSeed = 1;

/// `--seed S` (default kDefaultSeed).
template <typename T>
CLI::Option* AddSeed(CLI::App* cmd, T& seed, const std::string& what = "every random choice") {
  seed = kDefaultSeed;
  return cmd->add_option("--seed", seed, "master seed of " + what + " (printed)")
      ->default_str(std::to_string(kDefaultSeed));
}

/// `--threads K` (0 = every core; the results never depend on it).
template <typename T>
CLI::Option* AddThreads(CLI::App* cmd, T& threads) {
  return cmd
      ->add_option("--threads", threads,
                   "oneTBB threads, 0 = every core (never changes the result)")
      ->default_str("0");
}

/// `--out-dir DIR`, and its old spelling `--out` (a directory in this command).
inline CLI::Option* AddOutDir(CLI::App* cmd, std::string& dir, const std::string& what) {
  AddDeprecated(cmd, "--out", dir, "--out-dir", "a directory in this command");
  return cmd->add_option("--out-dir", dir, what);
}

/// The value `name` names in `table` (io/names.h), read once where the flag is read; otherwise
/// InputError "FLAG: unknown KIND 'name' (known: a, b, c)".
template <typename E, std::size_t N>
E ParseFlag(const std::string& flag, const io::NameTable<E, N>& table, const std::string& name) {
  try {
    return table.Parse(name);
  } catch (const InputError& error) {
    throw InputError(flag + ": " + error.what());
  }
}

/// "hardmax,softmax" → the attention modes, each once, in the order given; an unknown or empty
/// list is an InputError naming `flag` (`--modes`, `--second-modes` of refute and search).
inline std::vector<Attention> ParseModeList(const std::string& text, const char* flag = "--modes") {
  std::vector<Attention> modes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const Attention mode = ParseFlag(flag, kAttentionNames, item);
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  }
  if (modes.empty()) throw InputError(std::string(flag) + ": at least one mode");
  return modes;
}

/// A whole number ≥ 1. CLI11 prefixes the message with the option's name, except for a
/// hidden option (an old spelling), whose `name` the message then carries itself.
inline CLI::Validator AtLeastOne(const std::string& name = "") {
  return CLI::Validator(
      [name](std::string& value) {
        return value.find_first_not_of("0123456789") == std::string::npos &&
                       value.find_first_not_of('0') != std::string::npos
                   ? std::string()
                   : (name.empty() ? "" : name + ": ") +
                         "must be a whole number of at least 1, not '" + value + "'";
      },
      "");
}

/// Throws "NAME: required …" unless one of the spellings was given.
inline void RequireOne(const CLI::Option* option, const CLI::Option* old_spelling,
                       const std::string& what) {
  if (option->count() == 0 && (old_spelling == nullptr || old_spelling->count() == 0))
    throw InputError(option->get_name() + ": required (" + what + ")");
}

}  // namespace ltsim::cli
