// The explicit registry of ltsim's subcommands (docs/design.md §6).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "help.h"
#include "ltsim/core/error.h"

namespace ltsim::cli {

void AddEvalCommand(CLI::App& app);
void AddInfoCommand(CLI::App& app);
/// `import`: a .safetensors model (docs/python.md) rewritten as ltsim-model JSON.
void AddImportCommand(CLI::App& app);
void AddSimulateCommand(CLI::App& app);
void AddSandwichCommand(CLI::App& app);
void AddGenerateCommand(CLI::App& app);
void AddConstructCommand(CLI::App& app);
void AddStatisticCommand(CLI::App& app);
/// `threshold` sets `exit_code` to 130 when a signal stopped it (its partial answer printed).
void AddThresholdCommand(CLI::App& app, int& exit_code);
/// `certify`: agreement at every length or the exact T* (ltsim/threshold/certify.h); exit_code
/// 1 disagrees, 3 undecided.
void AddCertifyCommand(CLI::App& app, int& exit_code);
/// `profile`: certified largest gaps per length, ε_train(n), the supremum and their ratio
/// (ltsim/threshold/profile.h).
void AddProfileCommand(CLI::App& app);
/// `average`: the expected gap under Theorem 4.2's Dirichlet prior (ltsim/threshold/average.h).
void AddAverageCommand(CLI::App& app);
/// `constants`: the bound registry and user bound expressions.
void AddConstantsCommand(CLI::App& app);
/// `sweep`: needed length against one parameter, fitted exponent, PNG (ltsim/study/sweep.h).
void AddSweepCommand(CLI::App& app);
/// `experiment paper`: needed length vs ω, p, S and k on the constructed models
/// (ltsim/study/experiment.h).
void AddExperimentCommand(CLI::App& app);
/// `search`: hill climbing for counterexamples, shrinking (ltsim/search/search.h); `--replay`
/// (deprecated for `ltsim replay`) sets `exit_code` to 1 when the witness does not reproduce.
void AddSearchCommand(CLI::App& app, int& exit_code);
/// `tightness`: lower side, upper side and paper exponent per parameter with verdicts
/// (ltsim/study/tightness.h); `--replay` (deprecated for `ltsim replay`) of a point witness
/// that differs sets `exit_code` to 1.
void AddTightnessCommand(CLI::App& app, int& exit_code);
/// `refute --bound EXPR`: a class searched for a pair whose certified T* exceeds EXPR
/// (ltsim/search/refute.h); exit_code 1 when refuted.
void AddRefuteCommand(CLI::App& app, int& exit_code);
/// `fuzz` sets `exit_code` (1: a property was refuted; 130: stopped by a signal).
void AddFuzzCommand(CLI::App& app, int& exit_code);
/// `replay FILE`: a fuzz, search or point (tightness) witness; `exit_code` 0 = the recorded
/// result reproduced, 1 = it did not.
void AddReplayCommand(CLI::App& app, int& exit_code);

/// Every command but `merge` and `help` (main.cpp adds those), in the order `ltsim --help`
/// lists them.
inline void AddCommands(CLI::App& app, int& exit_code) {
  AddEvalCommand(app);
  AddInfoCommand(app);
  AddImportCommand(app);
  AddSimulateCommand(app);
  AddSandwichCommand(app);
  AddGenerateCommand(app);
  AddConstructCommand(app);
  AddStatisticCommand(app);
  AddThresholdCommand(app, exit_code);
  AddCertifyCommand(app, exit_code);
  AddProfileCommand(app);
  AddAverageCommand(app);
  AddConstantsCommand(app);
  AddSweepCommand(app);
  AddExperimentCommand(app);
  AddFuzzCommand(app, exit_code);
  AddReplayCommand(app, exit_code);
  AddSearchCommand(app, exit_code);
  AddTightnessCommand(app, exit_code);
  AddRefuteCommand(app, exit_code);
}

/// The running command's flags for the option keys it spells differently from the common names
/// below (in `search`, `n` is --z-length; in `threshold`, `max_length` is --max-length). One
/// command runs per process; it sets them before calling the library (SetCommandFlags).
inline std::vector<std::pair<std::string, std::string>>& CommandFlags() {
  static std::vector<std::pair<std::string, std::string>> flags;
  return flags;
}

/// Sets CommandFlags: {option key, flag} pairs.
inline void SetCommandFlags(std::vector<std::pair<std::string, std::string>> flags) {
  CommandFlags() = std::move(flags);
}

/// The flag that sets a library option (OptionError::option()): the running command's own
/// (CommandFlags), else the fields whose concept has one name across commands (docs/commands.md
/// "One name per concept": `length` is the z length, `min_length` the shortest x of a campaign,
/// `epsilon` is `--eps`), else `--` and the field name with `_` as `-` (max_width → --max-width).
inline std::string FlagForOption(const std::string& option) {
  for (const auto& [key, flag] : CommandFlags())
    if (option == key) return flag;
  static const std::pair<const char*, const char*> kRenamed[] = {{"length", "--z-length"},
                                                                 {"epsilon", "--eps"},
                                                                 {"min_length", "--min-x-length"},
                                                                 {"max_length", "--max-x-length"},
                                                                 {"min_target", "--min-z-length"},
                                                                 {"max_target", "--max-z-length"},
                                                                 {"out", "--out-dir"}};
  for (const auto& [field, renamed] : kRenamed)
    if (option == field) return renamed;
  std::string flag = "--" + option;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

/// An OptionError as the command line prints it: "FLAG[ VALUE]: rule", the flag as typed.
inline std::string FlagMessage(const OptionError& error) {
  return AsTyped(FlagForOption(error.option())) +
         (error.value().empty() ? "" : " " + error.value()) + ": " + error.rule();
}

}  // namespace ltsim::cli
