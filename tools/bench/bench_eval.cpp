// Throughput of the fast one-layer evaluator (tokens/s) and its ratio to the reference.
#include <benchmark/benchmark.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/construct/tasks.h"
#include "ltsim/strings/sources.h"

namespace {

std::vector<std::uint8_t> RandomBytes(std::size_t n, int alphabet) {
  boost::random::mt19937_64 engine(42);
  boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
  std::vector<std::uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(token(engine));
  return bytes;
}

// Counting pass plus the O(D·H·d) evaluation, from an in-memory .u8 string.
void BM_FastOneLayerU8(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int period = static_cast<int>(state.range(1));
  const ltsim::Transformer model = ltsim::MakeModPTask(period, 0);
  const auto x = ltsim::MakeByteSource(RandomBytes(n, 2), "bench");
  for (auto _ : state) {
    const auto counts = ltsim::CountTypes(*x, model.alphabet, model.period, model.locality);
    benchmark::DoNotOptimize(ltsim::EvaluateOneLayer(model, counts));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_FastOneLayerU8)
    ->Args({10000, 1})
    ->Args({100000000, 1})
    ->Args({100000000, 3})
    ->Unit(benchmark::kMillisecond);

// The literal forward pass, O(T²·d): the oracle the fast path is compared with.
void BM_ReferenceOneLayer(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const ltsim::Transformer model = ltsim::MakeModPTask(1, 0);
  const auto bytes = RandomBytes(n, 2);
  const std::vector<ltsim::Token> x(bytes.begin(), bytes.end());
  for (auto _ : state) benchmark::DoNotOptimize(ltsim::EvaluateReference(model, x));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_ReferenceOneLayer)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
