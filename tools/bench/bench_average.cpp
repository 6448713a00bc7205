// `ltsim average`'s exact sum on the bundled bump family members (docs/theory.md §13), one
// thread: bump_s2.71 (D* = 2) to N = 1000 and 10⁴, bump_s2.71_period2 (D* = 4) to N = 300.
#include <benchmark/benchmark.h>

#include <string>

#include "ltsim/model/model_file.h"
#include "ltsim/threshold/average.h"

namespace {

using namespace ltsim;

void Run(benchmark::State& state, const std::string& member) {
  const std::string dir = std::string(LTSIM_SOURCE_DIR) + "/corpus/families/" + member + "/";
  const Transformer f = ReadModel(dir + "f.json"), g = ReadModel(dir + "g.json");
  AverageOptions o;
  o.alphas = {0.5, 0.5};
  o.max_length = static_cast<std::uint64_t>(state.range(0));
  o.threads = 1;
  double last = 0.0;
  std::uint64_t statistics = 0;
  for (auto _ : state) {
    const AverageResult r = AverageGap(f, g, o);
    last = r.lower.back();
    statistics = r.statistics_evaluated;
  }
  state.counters["average_gap_at_N"] = last;
  state.counters["statistics"] = static_cast<double>(statistics);
}

void BM_AverageBumpPeriod1(benchmark::State& state) { Run(state, "bump_s2.71"); }
void BM_AverageBumpPeriod2(benchmark::State& state) { Run(state, "bump_s2.71_period2"); }

BENCHMARK(BM_AverageBumpPeriod1)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AverageBumpPeriod2)->Arg(300)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
