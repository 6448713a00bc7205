// The single-process dealer: chunks in order, each consumed as soon as it is computed.
#include "ltsim/core/work.h"

#include <algorithm>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"

namespace ltsim {
namespace {

class Local final : public ItemDealer {
 public:
  bool Reduces() const override { return true; }
  std::uint64_t Processes() const override { return 1; }
  bool Shares() const override { return true; }

  DealReport Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t chunk,
                  const ChunkCompute& compute, const ItemConsume& consume,
                  const StopFn& stop) override {
    LTSIM_CHECK(chunk >= 1 && begin <= end);
    DealReport report;
    for (std::uint64_t at = begin; at < end;) {
      if (stop && stop()) {
        report.stopped = true;
        return report;
      }
      const std::uint64_t last = std::min(end, at + chunk);
      std::vector<std::string> results = compute(at, last);
      LTSIM_CHECK(results.size() == last - at);
      for (std::uint64_t i = at; i < last; ++i) {
        ++report.consumed;
        if (!consume(i, std::move(results[i - at]))) return report;
      }
      at = last;
    }
    return report;
  }
};

ItemDealer* g_current = nullptr;

}  // namespace

ItemDealer& LocalDealer() {
  static Local local;
  return local;
}

ItemDealer& CurrentDealer() { return g_current ? *g_current : LocalDealer(); }

void SetCurrentDealer(ItemDealer* dealer) { g_current = dealer; }

DealReport DealWeighted(ItemDealer& dealer, std::uint64_t begin, std::uint64_t end,
                        const std::function<double(std::uint64_t)>& weight,
                        const std::function<std::string(std::uint64_t)>& item,
                        const ItemConsume& consume, const StopFn& stop) {
  LTSIM_CHECK(begin <= end);
  constexpr double kRuns = 1024;
  std::vector<double> w(end - begin);
  double total = 0;
  for (std::uint64_t i = begin; i < end; ++i) total += w[i - begin] = std::max(0.0, weight(i));
  std::vector<std::uint64_t> starts;  // first item of each run
  double run = 0;
  for (std::uint64_t i = begin; i < end; ++i) {
    if (starts.empty() || run >= total / kRuns) {
      starts.push_back(i);
      run = 0;
    }
    run += w[i - begin];
  }
  starts.push_back(end);
  const ChunkCompute compute = [&](std::uint64_t b, std::uint64_t e) {
    std::vector<std::string> runs;
    for (std::uint64_t r = b; r < e; ++r) {
      ByteWriter out;
      for (std::uint64_t i = starts[r]; i < starts[r + 1]; ++i) out.PutString(item(i));
      runs.push_back(out.Take());
    }
    return runs;
  };
  DealReport report;
  bool more = true;
  const DealReport runs = dealer.Deal(
      0, starts.size() - 1, 1, compute,
      [&](std::uint64_t r, std::string&& bytes) {
        ByteReader in(bytes);
        for (std::uint64_t i = starts[r]; i < starts[r + 1] && more; ++i) {
          ++report.consumed;
          more = consume(i, in.GetString());
        }
        return more;
      },
      stop);
  report.stopped = runs.stopped;
  return report;
}

}  // namespace ltsim
