// Throughput of the streaming two-layer evaluator (tokens/s) and of the quadratic reference.
#include <benchmark/benchmark.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>

#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/strings/sources.h"

namespace {

// The configuration README's benchmark list names: d = 16, S = 8, Δ = 1, τ = 2, two heads a
// layer; first layer softmax with `log` bias scaling (Section 5), second layer softmax; optional
// MLPs.
ltsim::Transformer BenchModel(bool mlp) {
  boost::random::mt19937_64 engine(7);
  boost::random::normal_distribution<double> normal(0.0, 0.3);
  auto draw = [&](int rows, int cols) {
    ltsim::Matrix m(rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) m(i, j) = normal(engine);
    return m;
  };
  const int d = 16, s = 8, tau = 2;
  ltsim::Transformer model;
  model.alphabet = s;
  model.width = d;
  model.period = 1;
  model.locality = tau;
  model.embedding = draw(s, d);
  model.positional = draw(1, d);
  for (int l = 0; l < 2; ++l) {
    ltsim::Layer layer;
    layer.attention = ltsim::Attention::kSoftmax;
    layer.bias_scaling = l == 0 ? ltsim::BiasScaling::kLog : ltsim::BiasScaling::kNone;
    for (int h = 0; h < 2; ++h)
      layer.heads.push_back({draw(d, d), draw(d, d), draw(tau + 1, 1).col(0)});
    if (mlp) layer.mlp = ltsim::Mlp{draw(2 * d, d), draw(2 * d, 1).col(0), draw(d, 2 * d)};
    model.layers.push_back(layer);
  }
  model.readout_weight = draw(1, d);
  model.readout_bias = draw(1, 1).col(0);
  ltsim::ValidateTransformer(model, "bench");
  return model;
}

// x is held in memory as bytes (like a .u8 file read into the page cache), so the time is
// the evaluator's, not the random generator's.
std::unique_ptr<ltsim::Source> BenchString(std::uint64_t n) {
  const std::vector<ltsim::Token> tokens = ltsim::ReadAll(*ltsim::MakeIidSource(n, 8, 3, {}), n);
  return ltsim::MakeByteSource(std::vector<std::uint8_t>(tokens.begin(), tokens.end()), "bench");
}

void BM_TwoLayerFast(benchmark::State& state) {
  const ltsim::Transformer model = BenchModel(state.range(1) != 0);
  const auto x = BenchString(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ltsim::EvaluateTwoLayer(model, *x));
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TwoLayerFast)
    ->Args({2000, 0})
    ->Args({1000000, 0})
    ->Args({1000000, 1})
    ->Unit(benchmark::kMillisecond);

// One pass of the first layer alone (the two-layer evaluator makes two such passes).
void BM_FirstLayerStream(benchmark::State& state) {
  const ltsim::Transformer model = BenchModel(false);
  const std::vector<ltsim::Token> x =
      ltsim::ReadAll(*ltsim::MakeIidSource(1000000, 8, 3, {}), 1000000);
  for (auto _ : state) {
    ltsim::FirstLayerStream stream(model);
    for (ltsim::Token t : x) benchmark::DoNotOptimize(stream.Push(t).data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(x.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_FirstLayerStream)->Unit(benchmark::kMillisecond);

// The literal forward pass: quadratic in T for the first layer.
void BM_TwoLayerReference(benchmark::State& state) {
  const ltsim::Transformer model = BenchModel(false);
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const std::vector<ltsim::Token> x = ltsim::ReadAll(*ltsim::MakeIidSource(n, 8, 3, {}), n);
  for (auto _ : state) benchmark::DoNotOptimize(ltsim::EvaluateReference(model, x));
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TwoLayerReference)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
