// Shard runs and their merge (docs/distributed.md).
#include "dist_options.h"

#include <fmt/format.h>

#include <iostream>
#include <map>

#include "help.h"
#include "ltsim/core/error.h"

namespace ltsim::cli {
namespace {

std::vector<std::string> g_command_line;

// The command line without --shard/--shard-out (and their values): what a merge re-runs.
std::vector<std::string> WithoutShardOptions(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--shard" || a == "--shard-out") {
      ++i;
      continue;
    }
    if (a.starts_with("--shard=") || a.starts_with("--shard-out=")) continue;
    out.push_back(a);
  }
  return out;
}

// One word of a stored command line, shown in a message: escaped and cut (a shard file may
// hold anything).
std::string ShownWord(const std::string& word) {
  std::string out;
  for (char c : word.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return word.size() > 40 ? out + "..." : out;
}

// Whether `word` is `option` or `option=VALUE`.
bool IsOption(const std::string& word, const std::string& option) {
  return word == option || word.starts_with(option + "=");
}

}  // namespace

void CheckMergedCommand(const std::vector<std::string>& command, const std::string& source) {
  // The commands that take --shard, and per command the options a shard run refuses (it
  // computes its whole share and writes no output of its own); every other option is parsed
  // by the command itself, which refuses what it does not know.
  static const std::map<std::string, std::vector<std::string>> kSharded = {
      {"fuzz", {"--resume", "--time-budget", "--case"}},
      {"search", {"--replay"}},
      {"sweep", {}},
      {"threshold", {}}};
  const std::string prefix = source + ": command: ";
  if (command.empty()) throw InputError(prefix + "empty (not a shard of a sharded command)");
  const auto it = kSharded.find(command.front());
  if (it == kSharded.end())
    throw InputError(prefix + "'" + ShownWord(command.front()) +
                     "' is not a command that runs in shards (fuzz, search, sweep, threshold); "
                     "merge refuses it");
  std::vector<std::string> refused = {"--shard", "--shard-out", "--help",
                                      "-h",      "--help-all",  "--version"};
  refused.insert(refused.end(), it->second.begin(), it->second.end());
  for (std::size_t k = 1; k < command.size(); ++k)
    for (const std::string& option : refused)
      if (IsOption(command[k], option))
        throw InputError(prefix + "'" + command.front() + "' with " + option +
                         " is not a shard run; merge refuses it");
}

void SetCommandLine(int argc, char** argv) { g_command_line.assign(argv + 1, argv + argc); }

void AddDistOptions(CLI::App* cmd, DistArgs& args) {
  cmd->add_option("--shard", args.shard,
                  "I/K: compute only shard I of K (0 ≤ I < K) into a shard file, without MPI "
                  "(a Slurm job array); `ltsim merge` then writes the outputs (see ltsim merge "
                  "--help)");
  cmd->add_option("--shard-out", args.shard_out,
                  "the shard file of --shard (default shard-I-of-K.ltsim-shard)");
}

CommandDealer::CommandDealer(const DistArgs& args) : args_(args) {
  if (args_.shard.empty()) {
    if (!args_.shard_out.empty()) throw InputError("--shard-out: only with --shard I/K");
    return;
  }
  const dist::Shard shard = dist::ParseShard(args_.shard);
  if (dist::Size() > 1)
    throw InputError("--shard: a shard runs as one process, not under mpirun with several ranks");
  if (args_.shard_out.empty())
    args_.shard_out = fmt::format("shard-{}-of-{}.ltsim-shard", shard.index, shard.count);
  shard_ = std::make_unique<dist::ShardWriter>(shard, WithoutShardOptions(g_command_line));
}

void CommandDealer::FinishShard() {
  if (!shard_) return;
  shard_->Write(args_.shard_out);
  std::cout << fmt::format("wrote shard {} to {} (merge all shards with ltsim merge)\n",
                           args_.shard, args_.shard_out);
}

void AddMergeCommand(CLI::App& app, int& exit_code,
                     std::function<int(const std::vector<std::string>&)> run) {
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Write the outputs of a --shard I/K run from its K shard files: the same files as the "
      "command run in one process.");
  cmd->add_option("SHARD", *paths, "the shard files (every shard 0 … K−1 once, any order)")
      ->required();
  SetExamples(cmd,
              {"ltsim threshold corpus/models/pair/f.json corpus/models/pair/g.json --eps 0.1 "
               "--max-length 12 --shard 0/2 && ltsim threshold corpus/models/pair/f.json "
               "corpus/models/pair/g.json --eps 0.1 --max-length 12 --shard 1/2 && ltsim merge "
               "shard-0-of-2.ltsim-shard shard-1-of-2.ltsim-shard",
               "ltsim fuzz --cases 64 --out-dir runs/shared --shard 0/2 --shard-out a.ltsim-shard "
               "&& ltsim fuzz --cases 64 --out-dir runs/shared --shard 1/2 --shard-out "
               "b.ltsim-shard && ltsim merge a.ltsim-shard b.ltsim-shard"},
              "Each shard runs anywhere (a Slurm job array, other machines) as one process; "
              "merge checks that the shards belong to one command line and that none is "
              "missing or repeated (docs/distributed.md).");
  cmd->callback([paths, &exit_code, run] {
    dist::ShardReplay replay(*paths);
    if (dist::Size() > 1) throw InputError("merge: runs as one process, not under mpirun");
    // The stored command line steers what merge runs: only a sharded command, with options a
    // shard run takes (never `generate --out FILE`, never `merge` itself).
    CheckMergedCommand(replay.command(), paths->front());
    SetCurrentDealer(&replay);
    try {
      exit_code = run(replay.command());
    } catch (...) {
      SetCurrentDealer(nullptr);
      throw;
    }
    SetCurrentDealer(nullptr);
  });
}

}  // namespace ltsim::cli
