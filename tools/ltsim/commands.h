// The explicit registry of ltsim's subcommands (docs/design.md §6).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

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
void AddThresholdCommand(CLI::App& app);
/// `constants`: the bound registry and user bound expressions (ltsim/bounds/registry.h).
void AddConstantsCommand(CLI::App& app);
/// `sweep`: needed length against one parameter, fitted exponent, PNG (ltsim/study/sweep.h).
void AddSweepCommand(CLI::App& app);
/// `experiment paper`: needed length vs ω, p, S and k on the constructed models
/// (ltsim/study/experiment.h).
void AddExperimentCommand(CLI::App& app);
/// `search`: hill climbing for counterexamples, shrinking, `--replay` (ltsim/search/search.h);
/// a replay that does not reproduce sets `exit_code` to 1.
void AddSearchCommand(CLI::App& app, int& exit_code);
/// `tightness`: lower side, upper side and paper exponent per parameter with verdicts, and
/// `--replay` of a point witness (ltsim/study/tightness.h); a replay that differs sets 1.
void AddTightnessCommand(CLI::App& app, int& exit_code);
/// `refute --bound EXPR`: a class searched for a pair whose certified T* exceeds EXPR
/// (ltsim/search/refute.h); exit_code 1 when refuted.
void AddRefuteCommand(CLI::App& app, int& exit_code);
/// `fuzz` and `replay` set `exit_code` (refutations found / still refuted: 1).
void AddFuzzCommand(CLI::App& app, int& exit_code);

/// The flag that sets a library option (OptionError::option()): `--` and the field name with
/// `_` as `-` (min_length → --min-length), which is how every command names its flags.
inline std::string FlagForOption(const std::string& option) {
  std::string flag = "--" + option;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

}  // namespace ltsim::cli
