// MPI ranks: session, broadcast and the dynamic dealer (rank 0 deals chunks, reduces in order).
#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/dist/dist.h"

#ifdef LTSIM_HAVE_MPI
// The C API only (no C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace ltsim::dist {
namespace {

int g_rank = 0, g_size = 1;
bool g_interrupted = false;
#ifdef LTSIM_HAVE_MPI
bool g_initialised = false;
#endif

}  // namespace

bool LaunchedByMpi() {
  // Open MPI's mpirun, PMIx launchers (srun --mpi=pmix, prterun) and PMI ones (MPICH's Hydra,
  // srun --mpi=pmi2) each set one of these.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

bool Interrupted() { return g_interrupted; }

int Rank() { return g_rank; }
int Size() { return g_size; }

#ifndef LTSIM_HAVE_MPI

bool MpiBuiltIn() { return false; }
std::string MpiDescription() { return "not built in"; }
Session::Session(int*, char***) {}
Session::~Session() = default;
void Broadcast(std::string&) {}
[[noreturn]] void AbortAll(int code) { std::exit(code); }
ItemDealer& MpiDealer() { return LocalDealer(); }

#else

bool MpiBuiltIn() { return true; }

std::string MpiDescription() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);  // allowed before MPI_Init
  std::string line(text, static_cast<std::size_t>(length));
  line = line.substr(0, line.find_first_of("\n,"));
  return "built in (" + line + ")";
}

Session::Session(int* argc, char*** argv) {
  if (!LaunchedByMpi()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  // A failed send to a dead rank is an error code (the dealer then stops), not an abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_initialised = true;
}

Session::~Session() {
  if (g_initialised) MPI_Finalize();
}

void Broadcast(std::string& bytes) {
  if (g_size == 1) return;
  auto size = static_cast<std::uint64_t>(bytes.size());
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(size);
  LTSIM_CHECK(size <= static_cast<std::uint64_t>(std::numeric_limits<int>::max()));
  MPI_Bcast(bytes.data(), static_cast<int>(size), MPI_BYTE, 0, MPI_COMM_WORLD);
}

[[noreturn]] void AbortAll(int code) {
  if (g_initialised) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

namespace {

constexpr int kTagChunk = 1;   // root → worker: deal, begin, end
constexpr int kTagStop = 2;    // root → worker: leave this Deal
constexpr int kTagResult = 3;  // worker → root: deal, begin, end, the items' bytes
constexpr int kPrefetch = 2;   // chunks a worker holds (one computing, one queued)

using Clock = std::chrono::steady_clock;

// Sleeps growing from 50 µs to 2 ms while nothing happens: the dealer stays responsive
// without spinning a core that a rank's threads need.
class Backoff {
 public:
  void Reset() { micros_ = 50; }
  void Wait() {
    std::this_thread::sleep_for(std::chrono::microseconds(micros_));
    micros_ = std::min(micros_ * 2, 2000);
  }

 private:
  int micros_ = 50;
};

bool Send(const std::string& bytes, int to, int tag) {
  return MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag,
                  MPI_COMM_WORLD) == MPI_SUCCESS;
}

std::string Receive(const MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string bytes(static_cast<std::size_t>(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return bytes;
}

std::string ChunkMessage(std::uint32_t deal, std::uint64_t begin, std::uint64_t end) {
  ByteWriter w;
  w.Put(deal);
  w.Put(begin);
  w.Put(end);
  return w.Take();
}

std::string ResultMessage(std::uint32_t deal, std::uint64_t begin, std::uint64_t end,
                          const std::vector<std::string>& items) {
  ByteWriter w;
  w.Put(deal);
  w.Put(begin);
  w.Put(end);
  for (const std::string& item : items) w.PutString(item);
  return w.Take();
}

class Mpi final : public ItemDealer {
 public:
  bool Reduces() const override { return g_rank == 0; }
  std::uint64_t Processes() const override { return static_cast<std::uint64_t>(g_size); }
  bool Shares() const override { return true; }
  void Broadcast(std::string& bytes) override { dist::Broadcast(bytes); }

  DealReport Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                  const ChunkCompute& compute, const ItemConsume& consume,
                  const StopFn& stop) override {
    LTSIM_CHECK(chunk >= 1 && begin <= end);
    const std::uint32_t deal = deal_++;
    if (g_size == 1) return LocalDealer().Deal(begin, end, chunk, compute, consume, stop);
    return g_rank == 0 ? Root(deal, begin, end, chunk, compute, consume, stop)
                       : Worker(deal, compute, stop);
  }

 private:
  DealReport Worker(std::uint32_t deal, const ChunkCompute& compute, const StopFn& stop) {
    Backoff backoff;
    std::optional<Clock::time_point> stopped_at;
    while (true) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (!flag) {
        // Rank 0 normally ends the deal; if it is gone, a signalled worker leaves by itself.
        if (stop && stop()) {
          if (!stopped_at) stopped_at = Clock::now();
          if (Clock::now() - *stopped_at > std::chrono::duration<double>(kStopGraceSeconds)) {
            g_interrupted = true;
            return {};
          }
        }
        backoff.Wait();
        continue;
      }
      backoff.Reset();
      const std::string message = Receive(status);
      if (status.MPI_TAG == kTagStop) return {};
      LTSIM_CHECK(status.MPI_TAG == kTagChunk);
      ByteReader r(message);
      const auto chunk_deal = r.Get<std::uint32_t>();
      const auto b = r.Get<std::uint64_t>(), e = r.Get<std::uint64_t>();
      if (chunk_deal != deal) continue;  // a stale chunk of an earlier, stopped deal
      std::vector<std::string> items;
      try {
        items = compute(b, e);
      } catch (const std::exception& error) {
        // Rank 0 cannot see this failure and would wait: end the job.
        std::cerr << "ltsim: rank " << g_rank << ": " << error.what() << "\n";
        AbortAll(2);
      }
      LTSIM_CHECK(items.size() == e - b);
      if (!Send(ResultMessage(deal, b, e, items), 0, kTagResult)) {
        g_interrupted = true;
        return {};
      }
    }
  }

  DealReport Root(std::uint32_t deal, std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                  const ChunkCompute& compute, const ItemConsume& consume, const StopFn& stop) {
    DealReport report;
    std::uint64_t next = begin;    // first item not dealt yet
    std::uint64_t expect = begin;  // first item not consumed yet
    bool dealing = true;           // false once stopped, the consumer is done, or all dealt
    bool consuming = true;         // false once the consumer returned false
    std::map<std::uint64_t, std::vector<std::string> > finished;  // by chunk begin
    std::vector<int> outstanding(static_cast<std::size_t>(g_size), 0);
    int out = 0;  // chunks out at workers
    std::future<std::vector<std::string> > own;
    std::uint64_t own_begin = 0;
    std::optional<Clock::time_point> stopped_at;
    auto take = [&](std::uint64_t& b, std::uint64_t& e) {
      if (!dealing || next >= end) return false;
      b = next;
      e = std::min(end, next + chunk);
      next = e;
      return true;
    };
    auto give = [&](int worker) {
      std::uint64_t b, e;
      if (!take(b, e)) return;
      if (Send(ChunkMessage(deal, b, e), worker, kTagChunk)) {
        ++outstanding[worker];
        ++out;
      } else {
        dealing = false;  // a rank is gone: stop like a signal
        report.stopped = true;
        next = b;
      }
    };
    auto start_own = [&] {
      std::uint64_t b, e;
      if (!take(b, e)) return;
      own_begin = b;
      own = std::async(std::launch::async, compute, b, e);
    };
    // One chunk each first (so a short range is not hoarded by the first workers), then the
    // workers' second, queued chunk.
    for (int w = 1; w < g_size; ++w) give(w);
    start_own();
    for (int k = 1; k < kPrefetch; ++k)
      for (int w = 1; w < g_size; ++w) give(w);
    Backoff backoff;
    std::exception_ptr failure;
    while (true) {
      bool progress = false;
      if (dealing && stop && stop()) {
        dealing = false;
        report.stopped = true;
      }
      if (!dealing && !stopped_at && report.stopped) stopped_at = Clock::now();
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &flag, &status);
      if (flag) {
        progress = true;
        const std::string message = Receive(status);
        ByteReader r(message);
        const auto result_deal = r.Get<std::uint32_t>();
        const auto b = r.Get<std::uint64_t>(), e = r.Get<std::uint64_t>();
        if (result_deal == deal) {
          std::vector<std::string> items;
          for (std::uint64_t i = b; i < e; ++i) items.push_back(r.GetString());
          finished.emplace(b, std::move(items));
          --outstanding[status.MPI_SOURCE];
          --out;
          give(status.MPI_SOURCE);
        }
      }
      if (own.valid() && own.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        progress = true;
        try {
          finished.emplace(own_begin, own.get());
        } catch (...) {
          failure = std::current_exception();
          dealing = false;
        }
        start_own();
      }
      // Consume the complete prefix in index order.
      while (consuming && !failure) {
        auto it = finished.find(expect);
        if (it == finished.end()) break;
        std::vector<std::string> items = std::move(it->second);
        finished.erase(it);
        const std::uint64_t first = expect;
        expect += items.size();
        for (std::uint64_t k = 0; k < items.size() && consuming; ++k) {
          ++report.consumed;
          try {
            if (!consume(first + k, std::move(items[k]))) consuming = false;
          } catch (...) {
            failure = std::current_exception();
            consuming = false;
          }
        }
        if (!consuming) dealing = false;
      }
      if (consuming && !failure && expect >= end) dealing = false;
      const bool own_busy = own.valid();
      if (!dealing && !own_busy) {
        if (out == 0) break;
        // A dead rank never answers: after a stop, wait for the others only so long.
        if (stopped_at &&
            Clock::now() - *stopped_at > std::chrono::duration<double>(kStopGraceSeconds))
          break;
      }
      if (progress) {
        backoff.Reset();
      } else {
        backoff.Wait();
      }
    }
    for (int w = 1; w < g_size; ++w) Send(std::string(), w, kTagStop);
    if (report.stopped || failure) g_interrupted = true;
    if (failure) std::rethrow_exception(failure);
    return report;
  }

  std::uint32_t deal_ = 0;
};

}  // namespace

ItemDealer& MpiDealer() {
  static Mpi dealer;
  return dealer;
}

#endif

}  // namespace ltsim::dist
