// `--shard I/K`, `--shard-out FILE` and `ltsim merge`: how a command's items are distributed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/core/work.h"
#include "ltsim/dist/dist.h"

namespace ltsim::cli {

/// The command line as main received it (argv[1..]), for the header of a shard file.
void SetCommandLine(int argc, char** argv);

/// A distributable command's options.
struct DistArgs {
  std::string shard;      ///< "I/K", empty: not a shard run
  std::string shard_out;  ///< the shard file (default shard-I-of-K.ltsim-shard)
};

/// Adds --shard and --shard-out to `cmd`.
void AddDistOptions(CLI::App* cmd, DistArgs& args);

/// The dealer of one command run: a ShardWriter for --shard I/K, else CurrentDealer() (MPI
/// ranks under mpirun, the replay of `ltsim merge`, or this process alone).
class CommandDealer {
 public:
  explicit CommandDealer(const DistArgs& args);
  ItemDealer& get() { return shard_ ? *shard_ : CurrentDealer(); }
  /// Whether this process writes the command's outputs (rank 0, alone, or a merge).
  bool Reduces() { return get().Reduces(); }
  bool sharded() const { return shard_ != nullptr; }
  /// On a shard run: writes the shard file and says so on stdout. Call after the command's
  /// work when Reduces() is false.
  void FinishShard();

 private:
  DistArgs args_;
  std::unique_ptr<dist::ShardWriter> shard_;
};

/// Refuses a shard's stored command line (InputError naming `source`) unless it is one of the
/// commands that run in shards (fuzz, search, sweep, threshold) without an option a shard run
/// refuses (--shard, --shard-out, --resume, --time-budget, --case, --replay, --help,
/// --version): a shard file must not make `merge` run anything else.
void CheckMergedCommand(const std::vector<std::string>& command, const std::string& source);

/// `ltsim merge SHARD…`: reads the shard files of one `--shard I/K` run and runs their command
/// line with their items instead of computing them (`run` parses and runs a command line), so
/// it writes the same files as the command run once; its exit code is the command's.
void AddMergeCommand(CLI::App& app, int& exit_code,
                     std::function<int(const std::vector<std::string>&)> run);

}  // namespace ltsim::cli
