// Work distribution beyond one process: MPI ranks (a dynamic dealer) and shards
// (docs/distributed.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/core/work.h"

namespace ltsim::dist {

/// Whether this binary was built with MPI (CMake found it; no flag needed).
bool MpiBuiltIn();

/// "Open MPI v4.1.4 …" (the library's own first line), or "not built in".
std::string MpiDescription();

/// Whether an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx) started this process. Only
/// then is MPI initialised, so the plain binary pays nothing for it.
bool LaunchedByMpi();

/// MPI for the lifetime of the object: MPI_Init_thread (funneled: only the main thread calls
/// MPI) when MpiBuiltIn() and LaunchedByMpi(), MPI_Finalize at the end. Without it, or alone,
/// Rank() = 0 and Size() = 1.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

/// Whether a Deal of this process ended early by a stop or a failure (a signal, a dead rank).
/// MPI_Finalize would then wait for a rank that may be gone: the driver ends the job with
/// AbortAll instead, once its files are written.
bool Interrupted();

/// This process's rank (0 alone) and the number of ranks (1 alone).
int Rank();
int Size();

/// Rank 0's `bytes` on every rank (unchanged alone).
void Broadcast(std::string& bytes);

/// Ends every rank of the job with `code` (MPI_Abort; std::exit alone): for a failure on one
/// rank that the others cannot see.
[[noreturn]] void AbortAll(int code);

/// The MPI dealer (Size() > 1): rank 0 deals chunks of item indices one at a time to the ranks
/// that ask (every rank, rank 0 included, computes; a worker holds at most two chunks), keeps
/// the returned bytes until the prefix is complete and consumes them in index order; the other
/// ranks compute and send. Rank 0 polls with MPI_Iprobe and short sleeps, so the signal
/// flag is seen within milliseconds; after a stop it waits at most kStopGraceSeconds for the
/// chunks still out (a dead rank never answers), then stops the workers.
ItemDealer& MpiDealer();
inline constexpr double kStopGraceSeconds = 1.0;

/// `--shard I/K`: shard I (0-based) of K.
struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

/// Parses "I/K" (0 ≤ I < K, K ≥ 1); InputError naming `--shard` otherwise.
Shard ParseShard(const std::string& text);

/// A shard run's dealer: every Deal's range is cut into 8K blocks of ⌈(end − begin)/8K⌉
/// items (a function of the range and K only, so every shard cuts the same blocks whatever its
/// threads), block c belongs to shard c mod K (block-cyclic: costs that grow with the index
/// are spread); it computes its blocks, records their bytes and consumes nothing (Reduces()
/// is false). Write() stores them with the command line in a shard file for ShardReplay.
class ShardWriter final : public ItemDealer {
 public:
  ShardWriter(Shard shard, std::vector<std::string> command);
  bool Reduces() const override { return false; }
  std::uint64_t Processes() const override { return shard_.count; }
  DealReport Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                  const ChunkCompute& compute, const ItemConsume& consume,
                  const StopFn& stop = {}) override;
  /// Whether a Deal was stopped (then Write refuses: an incomplete shard cannot be merged).
  bool stopped() const { return stopped_; }
  /// Writes the shard file (atomically: a temporary file renamed); InputError on failure.
  void Write(const std::string& path) const;

 private:
  struct Record {
    std::uint32_t deal;
    std::uint64_t index;
    std::string bytes;
  };
  struct DealRange {
    std::uint64_t begin, end;
  };
  Shard shard_;
  std::vector<std::string> command_;
  std::vector<DealRange> deals_;
  std::vector<Record> records_;
  bool stopped_ = false;
};

/// The shards of one run read back: the command line they ran and every item of every Deal.
class ShardReplay final : public ItemDealer {
 public:
  /// Reads shard files and checks that they are shards 0 … K−1 of one command line (each once)
  /// whose Deal ranges agree (one shard's may stop before another's: a pruned threshold shard
  /// stops at its own first disagreement), and that every item's digest and the file's digest match
  /// its bytes; InputError naming the file (and the item) otherwise.
  explicit ShardReplay(const std::vector<std::string>& paths);
  /// The command line (without --shard and --shard-out) the shards ran.
  const std::vector<std::string>& command() const { return command_; }
  bool Reduces() const override { return true; }
  std::uint64_t Processes() const override { return 1; }
  bool Replays() const override { return true; }
  /// Consumes the recorded bytes in index order, each under a ScopedByteOrigin naming its file
  /// and item (so malformed bytes are InputErrors); InputError when the replayed command asks
  /// for a range the shards did not record. `compute` is called only for the item at which
  /// `consume` stops (the item a decision rests on), whose recomputed bytes must equal the
  /// recorded ones.
  DealReport Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                  const ChunkCompute& compute, const ItemConsume& consume,
                  const StopFn& stop = {}) override;

 private:
  struct Item {
    std::string bytes;
    std::size_t file;  ///< index into paths_
  };
  struct DealItems {
    std::uint64_t begin = 0, end = 0;
    std::map<std::uint64_t, Item> items;  ///< by item index
  };
  std::vector<std::string> paths_;
  std::vector<std::string> command_;
  std::vector<DealItems> deals_;
  std::size_t next_deal_ = 0;
};

}  // namespace ltsim::dist
