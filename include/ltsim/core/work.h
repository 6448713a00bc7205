// Indexed work items dealt to whoever computes them, reduced in index order (docs/distributed.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ltsim {

/// Computes the items [begin, end) of one chunk: one byte string per item, in order. A pure
/// function of the indices (docs/design.md §4), so it may run in any thread or process; it may
/// use oneTBB inside.
using ChunkCompute =
    std::function<std::vector<std::string>(std::uint64_t begin, std::uint64_t end)>;

/// Receives item i's bytes, for i = begin, begin + 1, … in increasing order, in the process
/// that reduces. Returns false when no further item is needed (later items are then dropped).
using ItemConsume = std::function<bool(std::uint64_t index, std::string&& bytes)>;

/// Polled between chunks (and, by the MPI dealer, every few milliseconds): true = start no
/// further chunk. Empty: never.
using StopFn = std::function<bool()>;

/// How one Deal went.
struct DealReport {
  std::uint64_t consumed = 0;  ///< items handed to ItemConsume (a prefix of [begin, end))
  bool stopped = false;        ///< ended early by `stop` (not by ItemConsume or the end)
};

/// Deals the items of a range to the processes and threads that compute them and hands their
/// results to one reducer in index order, so what the reducer writes does not depend on how
/// many processes or threads there were. Implementations: LocalDealer (this process),
/// and in ltsim/dist/dist.h the MPI dealer, the shard writer and the shard replay.
/// Every process of a run makes the same sequence of Deal calls.
class ItemDealer {
 public:
  virtual ~ItemDealer() = default;

  /// Whether this process receives the items (ItemConsume is called here) and so writes the
  /// outputs: true in a single process and on MPI rank 0; false on the other ranks and in a
  /// shard run, which must then not write any output of the command.
  virtual bool Reduces() const = 0;

  /// How many processes share the items (1 here; the ranks; the shards). A caller with few,
  /// long items uses chunks of its thread count when this is above 1, one chunk of everything
  /// otherwise (oneTBB then balances all of them at once).
  virtual std::uint64_t Processes() const = 0;

  /// Computes every item of [begin, end) in chunks of at most `chunk` items (chunk ≥ 1; a
  /// shard run cuts its own blocks, a function of the range and K alone) and
  /// calls `consume` on the reducing process for begin, begin + 1, … until it returns false
  /// or the range ends. Once `stop` returns true no further chunk is started, the results
  /// finished so far are consumed in order up to the first one missing, and the report says
  /// stopped.
  virtual DealReport Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                          const ChunkCompute& compute, const ItemConsume& consume,
                          const StopFn& stop = {}) = 0;
  /// Whether Broadcast reaches every process that computes, so a caller whose next Deal
  /// depends on the reducer's results can tell the others what it decided: true in one
  /// process (trivially) and under MPI; false for shards, which never meet.
  virtual bool Shares() const { return false; }
  /// Replaces `bytes` by the reducing process's `bytes` on every process (a collective call:
  /// every process makes it, in the same order as its Deals). Nothing to do in one process;
  /// only called when Shares().
  virtual void Broadcast(std::string& bytes) { (void)bytes; }
  /// Whether Deal hands over bytes that processes recorded without sharing decisions (the
  /// replay of `ltsim merge`): a caller whose Deals depend on earlier results can then
  /// consume what each shard recorded up to its own stop (docs/distributed.md §4.2).
  virtual bool Replays() const { return false; }
};

/// The dealer of one process: chunks one after another, in order (the default everywhere).
ItemDealer& LocalDealer();

/// The dealer commands use: LocalDealer unless the command line installed another one
/// (MPI, shard, merge; tools/ltsim).
ItemDealer& CurrentDealer();
/// Installs `dealer` as CurrentDealer (null: LocalDealer again). Not thread-safe: called once
/// by the driver before any command runs.
void SetCurrentDealer(ItemDealer* dealer);

/// Deals the items [begin, end) grouped into runs of consecutive items of about equal total
/// weight (weight(i) ≥ 0, e.g. the evaluations item i costs): a run closes once its weight
/// reaches 1/1024 of the range's, so many cheap items travel as one chunk and an expensive
/// one alone. The runs depend on the weights only (never on ranks or threads), so a shard
/// run and its merge cut the same runs. `item(i)` computes one item (sequentially within a
/// run); `consume` is called for begin, begin + 1, … as in ItemDealer::Deal.
DealReport DealWeighted(ItemDealer& dealer, std::uint64_t begin, std::uint64_t end,
                        const std::function<double(std::uint64_t)>& weight,
                        const std::function<std::string(std::uint64_t)>& item,
                        const ItemConsume& consume, const StopFn& stop = {});

}  // namespace ltsim
