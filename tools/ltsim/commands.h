// The explicit registry of ltsim's subcommands (house style §20).
#pragma once

#include <CLI/CLI.hpp>

namespace ltsim::cli {

void AddEvalCommand(CLI::App& app);
void AddInfoCommand(CLI::App& app);
void AddSimulateCommand(CLI::App& app);
void AddSandwichCommand(CLI::App& app);
void AddGenerateCommand(CLI::App& app);
void AddConstructCommand(CLI::App& app);
void AddStatisticCommand(CLI::App& app);
void AddThresholdCommand(CLI::App& app);
/// `fuzz` and `replay` set `exit_code` (refutations found / still refuted: 1).
void AddFuzzCommand(CLI::App& app, int& exit_code);

}  // namespace ltsim::cli
