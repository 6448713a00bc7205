// Run under mpirun -n K (CTest): the MPI dealer consumes every item once, in index order, on rank
// 0, stops when the consumer is done, survives the stale chunks of a stopped deal, and balances
// dynamically (a slow rank gets fewer items than a static split would give it).
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "ltsim/core/bytes.h"
#include "ltsim/dist/dist.h"

namespace {

using ltsim::ByteReader;
using ltsim::ByteWriter;
namespace dist = ltsim::dist;

int g_failures = 0;

void Expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED (rank %d): %s\n", dist::Rank(), what);
    ++g_failures;
  }
}

// Item i: i, i·3 and the rank that computed it; rank 1 is slow (sleeps 20 ms an item).
std::vector<std::string> Compute(std::uint64_t b, std::uint64_t e, bool slow_rank) {
  std::vector<std::string> out;
  for (std::uint64_t i = b; i < e; ++i) {
    const int micros = slow_rank && dist::Rank() == 1 ? 20000 : 1000;
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
    ByteWriter w;
    w.Put(i);
    w.Put(i * 3);
    w.Put(dist::Rank());
    out.push_back(w.Take());
  }
  return out;
}

struct Tally {
  std::uint64_t next = 0, count = 0;
  std::map<int, std::uint64_t> by_rank;
  bool in_order = true;
};

ltsim::ItemConsume Consumer(Tally& t, std::uint64_t begin, std::uint64_t stop_after) {
  t.next = begin;
  return [&t, stop_after](std::uint64_t i, std::string&& bytes) {
    ByteReader r(bytes);
    t.in_order =
        t.in_order && i == t.next && r.Get<std::uint64_t>() == i && r.Get<std::uint64_t>() == 3 * i;
    ++t.by_rank[r.Get<int>()];
    ++t.next;
    ++t.count;
    return t.count < stop_after;
  };
}

}  // namespace

int main(int argc, char** argv) {
  dist::Session session(&argc, &argv);
  ltsim::ItemDealer& dealer = dist::MpiDealer();
  const bool root = dist::Rank() == 0;
  Expect(dealer.Reduces() == root, "only rank 0 reduces");

  std::string message = root ? "from rank 0" : "";
  dist::Broadcast(message);
  Expect(message == "from rank 0", "broadcast");

  // 1. Every item once, in order, with a slow rank 1: dynamic dealing gives it fewer items.
  Tally all;
  const auto compute_slow = [](std::uint64_t b, std::uint64_t e) { return Compute(b, e, true); };
  dealer.Deal(0, 300, 2, compute_slow, Consumer(all, 0, ~0ull));
  if (root) {
    Expect(all.in_order && all.count == 300, "deal 1: every item once, in order");
    if (dist::Size() > 2) {
      const double share = static_cast<double>(all.by_rank[1]) / 300;
      std::printf("slow rank 1 computed %.1f%% of the items (static blocks: %.1f%%)\n", 100 * share,
                  100.0 / dist::Size());
      Expect(share < 0.5 / dist::Size(), "deal 1: the slow rank gets under half a static share");
    }
  }
  // 2. The consumer stops at 57 items; 3. the next deal is not confused by stale chunks.
  const auto compute = [](std::uint64_t b, std::uint64_t e) { return Compute(b, e, false); };
  Tally some, next, empty;
  dealer.Deal(10, 500, 3, compute, Consumer(some, 10, 57));
  dealer.Deal(1000, 1100, 1, compute, Consumer(next, 1000, ~0ull));
  dealer.Deal(5, 5, 4, compute, Consumer(empty, 5, ~0ull));
  if (root) {
    Expect(some.in_order && some.count == 57, "deal 2: stopped by the consumer at 57");
    Expect(next.in_order && next.count == 100, "deal 3: complete after a stopped deal");
    Expect(empty.count == 0, "deal 4: an empty range");
  }
  std::printf("rank %d of %d: %s\n", dist::Rank(), dist::Size(), g_failures ? "FAILED" : "ok");
  return g_failures ? 1 : 0;
}
