// The two-layer threshold (docs/theory.md §11.5): the largest N certified within a budget of
// CPU time (default 60 s, LTSIM_BENCH_SECONDS; CPU time, since the machine may be shared) by the
// path search, against the string search it replaced (every string up to T_ex,
// ThresholdOptions::two_layer_paths = false), one thread, on k-gram pairs: S = 2, k = 1 (τ = 1, one
// head a layer) to T = 1000 and T = 300, S = 3, k = 2 to T = 100.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>

#include "ltsim/construct/kgram.h"
#include "ltsim/threshold/threshold.h"

namespace {

using ltsim::Transformer;

double BudgetSeconds() {
  const char* env = std::getenv("LTSIM_BENCH_SECONDS");
  return env ? std::atof(env) : 60.0;
}

struct Stop {};

// CPU seconds of this process (the search runs on one thread).
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

Transformer KGram(int alphabet, int k, double scale) {
  ltsim::KGramOptions o;
  o.alphabet = alphabet;
  o.k = k;
  o.scale = scale;
  return ltsim::MakeKGram(o);
}

struct Config {
  const char* name;
  Transformer f, g;
  double epsilon;
  std::uint64_t target;
};

// 0: S = 2, k = 1 against the copy with second-layer qk[2][0] = 7 (docs/theory.md §11.5's pair)
// at ε = 0.2, above its gaps up to 1000; 1: S = 2, k = 1 at β = 8 against β = 8.5, ε = 0.05;
// 2: S = 3, k = 2 at β = 8 against β = 8.5, ε = 0.05.
Config MakeConfig(int which) {
  if (which == 0) {
    Transformer f = KGram(2, 1, 8.0), g = f;
    g.layers[1].heads[0].qk(2, 0) = 7.0;
    return {"kgram S=2 k=1 vs qk[2][0]=7, eps 0.2", f, g, 0.2, 1000};
  }
  if (which == 1)
    return {"kgram S=2 k=1 beta 8 vs 8.5, eps 0.05", KGram(2, 1, 8.0), KGram(2, 1, 8.5), 0.05, 300};
  return {"kgram S=3 k=2 beta 8 vs 8.5, eps 0.05", KGram(3, 2, 8.0), KGram(3, 2, 8.5), 0.05, 100};
}

// range(0) = the configuration, range(1) = 1 for the path search, 0 for the string search.
void BM_TwoLayerThreshold(benchmark::State& state) {
  const Config c = MakeConfig(static_cast<int>(state.range(0)));
  const bool paths = state.range(1) != 0;
  const double budget = BudgetSeconds();
  std::uint64_t reached = 0, within = 0, exact = 0, first = 0, evaluations = 0, programs = 0;
  double seconds = 0.0, cpu = 0.0;
  for (auto _ : state) {
    ltsim::ThresholdOptions o;
    o.epsilon = c.epsilon;
    // LTSIM_BENCH_MAX_LENGTH: a smaller target, for the CPU time to a fixed length.
    const char* max_length = std::getenv("LTSIM_BENCH_MAX_LENGTH");
    o.max_length = max_length
                       ? std::min<std::uint64_t>(c.target, std::strtoull(max_length, nullptr, 10))
                       : c.target;
    o.threads = 1;
    o.two_layer_paths = paths;
    o.samples_per_length = 1;
    reached = 0;
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = CpuSeconds();
    within = 0;
    o.progress = [&](std::uint64_t done, std::uint64_t, std::uint64_t, double) {
      reached = done;
      if (CpuSeconds() - cpu_start > budget) throw Stop{};
      within = done;
    };
    try {
      const ltsim::ThresholdResult r = ltsim::FindThreshold(c.f, c.g, o);
      reached = r.checked_up_to;
      if (CpuSeconds() - cpu_start <= budget) within = reached;
      exact = r.exhaustive_up_to;
      first = r.first_disagreement.value_or(0);
      evaluations = r.evaluations;
      programs = r.paths.programs;
    } catch (const Stop&) {
      exact = paths ? reached : exact;
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cpu = CpuSeconds() - cpu_start;
  }
  state.counters["target_N"] = static_cast<double>(c.target);
  state.counters["largest_N"] = static_cast<double>(reached);
  // The last length certified within the budget (largest_N's window may end past it).
  state.counters["N_within_budget"] = static_cast<double>(within);
  state.counters["exact_up_to"] = static_cast<double>(exact);
  state.counters["T_star"] = static_cast<double>(first);
  state.counters["evaluations"] = static_cast<double>(evaluations);
  state.counters["programs"] = static_cast<double>(programs);
  state.counters["seconds"] = seconds;
  state.counters["cpu_seconds"] = cpu;
  state.SetLabel(std::string(c.name) + (paths ? ", paths" : ", strings (--no-paths)"));
}
BENCHMARK(BM_TwoLayerThreshold)
    ->ArgsProduct({{0, 1, 2}, {1, 0}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
