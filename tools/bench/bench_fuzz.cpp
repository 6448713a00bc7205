// Campaign throughput (cases/s) on 1 and 2 threads, for one- and two-layer pairs.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "ltsim/fuzz/campaign.h"

namespace {

namespace fs = std::filesystem;

// Args: layers, |x|, threads, cases.
void BM_Campaign(benchmark::State& state) {
  ltsim::CampaignOptions o;
  o.layers = {static_cast<int>(state.range(0))};
  o.min_length = o.max_length = static_cast<std::uint64_t>(state.range(1));
  o.threads = static_cast<int>(state.range(2));
  o.cases = static_cast<std::uint64_t>(state.range(3));
  o.min_target = 300;
  o.max_target = 3000;
  const fs::path dir = fs::temp_directory_path() / ("ltsim_bench_fuzz_" + std::to_string(getpid()));
  o.out = dir.string();
  const std::atomic<bool> never{false};
  for (auto _ : state) {
    fs::remove_all(dir);
    benchmark::DoNotOptimize(ltsim::RunCampaign(o, false, never, {}).cases_done);
  }
  fs::remove_all(dir);
  state.counters["cases_per_s"] = benchmark::Counter(static_cast<double>(o.cases),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Campaign)
    ->ArgNames({"layers", "x", "threads", "cases"})
    ->Args({1, 10000, 1, 128})
    ->Args({1, 10000, 2, 128})
    ->Args({1, 1000000, 1, 16})
    ->Args({1, 1000000, 2, 16})
    ->Args({2, 10000, 1, 256})
    ->Args({2, 10000, 2, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
