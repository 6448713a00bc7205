// The one-layer threshold search: statistics certified per second and the largest N reached
// in a time budget (default 60 s, LTSIM_BENCH_SECONDS), pruned cells against full enumeration
// (every statistic evaluated, ThresholdOptions::prune = false), at D* = 2, 4, 6, on four kinds
// of pair. A/B: run this binary and the previous one's alternately (docs/theory.md §11.7).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "ltsim/threshold/threshold.h"
#include "ltsim_test/residue_share_pairs.h"

namespace {

using ltsim::Transformer;
using ltsim::test::Kind;
using ltsim::test::KindName;
using ltsim::test::ResidueShareModel;

double BudgetSeconds() {
  const char* env = std::getenv("LTSIM_BENCH_SECONDS");
  return env ? std::atof(env) : 60.0;
}

struct Stop {};

// range(0) = P (D* = 2P), range(1) = 1 for the pruned search, 0 for full enumeration,
// range(2) = the kind of g (Kind).
void BM_Threshold(benchmark::State& state) {
  const int period = static_cast<int>(state.range(0));
  const bool prune = state.range(1) != 0;
  const Kind kind = static_cast<Kind>(state.range(2));
  const Transformer f = ResidueShareModel(period, false, kind),
                    g = ResidueShareModel(period, true, kind);
  const double budget = BudgetSeconds();
  std::uint64_t reached = 0, statistics = 0;
  double seconds = 0.0;
  for (auto _ : state) {
    ltsim::ThresholdOptions o;
    o.epsilon = 0.5;
    o.prune = prune;
    o.threads = 1;
    o.max_length = 1'000'000;  // the N of docs/theory.md §11.7's table
    if (!prune) {              // the full enumeration's own limit on Σ #statistics
      std::uint64_t total = 0, n = 0;
      while (n < o.max_length) {
        const std::uint64_t next = ltsim::CountStatistics(2, period, 0, n + 1);
        if (total + next > ltsim::kThresholdMaxStatistics) break;
        total += next;
        ++n;
      }
      o.max_length = n;
    }
    reached = 0;
    const auto start = std::chrono::steady_clock::now();
    o.progress = [&](std::uint64_t done, std::uint64_t, std::uint64_t, double elapsed) {
      reached = done;
      if (elapsed > budget) throw Stop{};
    };
    try {
      const ltsim::ThresholdResult r = ltsim::FindThreshold(f, g, o);
      reached = r.checked_up_to;
      if (r.first_disagreement) state.SkipWithError("the benchmark pair disagreed");
    } catch (const Stop&) {
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    statistics = 0;
    for (std::uint64_t t = 1; t <= reached; ++t)
      statistics += ltsim::CountStatistics(2, period, 0, t);
  }
  state.counters["D"] = 2.0 * period;
  state.counters["largest_N"] = static_cast<double>(reached);
  state.counters["statistics_per_s"] = static_cast<double>(statistics) / seconds;
  state.counters["seconds"] = seconds;
  state.SetLabel(std::string(KindName(kind)) + (prune ? ", pruned cells" : ", full enumeration"));
}
BENCHMARK(BM_Threshold)
    ->ArgsProduct({{1, 2, 3},
                   {0, 1},
                   {Kind::kLinear, Kind::kBump, Kind::kGlobalBump, Kind::kSoftmaxTilt}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
