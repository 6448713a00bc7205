// The one-layer threshold search: statistics certified per second and the largest N reached
// in a time budget (default 60 s, LTSIM_BENCH_SECONDS), pruned cells against full enumeration
// (every statistic evaluated, ThresholdOptions::prune = false), at D* = 2, 4, 6.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "ltsim/check/threshold.h"

namespace {

using ltsim::Matrix;
using ltsim::Transformer;
using ltsim::Vector;

// S = 2, period P, one hardmax head per residue r that attends to the keys at residue r and
// writes their share of 1s, averaged over the heads: f = mean_r share_r. Every residue matters
// (D* = 2P). Two kinds of g, both never disagreeing at ε = 0.5 (the search has to certify
// every length): kLinear reads the mean ×1.4 (gap 0.4·mean ≤ 0.4); kBump
// adds a triangular MLP bump of height 0.3 and half-width 0.05 at c = φ − 1 on the mean.
enum Kind { kSame, kLinear, kBump };
Transformer Model(int period, Kind kind) {
  const bool bump = kind == kBump;
  const int S = 2, d = S + period + 1, out = d - 1;
  Transformer m;
  m.name = kind == kSame ? "bench-f" : "bench-g";
  m.alphabet = S;
  m.width = d;
  m.period = period;
  m.locality = 0;
  m.embedding = Matrix::Zero(S, d);
  for (int s = 0; s < S; ++s) m.embedding(s, s) = 1.0;
  m.positional = Matrix::Zero(period, d);
  for (int r = 0; r < period; ++r) m.positional(r, S + r) = 1.0;
  ltsim::Layer layer;
  layer.attention = ltsim::Attention::kHardmax;
  for (int r = 0; r < period; ++r) {
    ltsim::Head head{Matrix::Zero(d, d), Matrix::Zero(d, d), Vector::Zero(1)};
    for (int s = 0; s < S; ++s) head.qk(S + r, s) = 1.0;  // logit 1 on residue-r keys
    head.ov(out, 1) = 1.0 / period;
    layer.heads.push_back(head);
  }
  if (bump) {
    const double c = 0.6180339887498949, w = 0.05, h = 0.3;
    ltsim::Mlp mlp{Matrix::Zero(3, d), Vector(3), Matrix::Zero(d, 3)};
    for (int i = 0; i < 3; ++i) mlp.in(i, out) = 1.0;
    mlp.in_bias << -(c - w), -c, -(c + w);
    mlp.out(out, 0) = h / w;
    mlp.out(out, 1) = -2 * h / w;
    mlp.out(out, 2) = h / w;
    layer.mlp = mlp;
  }
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_weight(0, out) = kind == kLinear ? 1.4 : 1.0;
  m.readout_bias = Vector::Zero(1);
  ltsim::ValidateTransformer(m, m.name);
  return m;
}

double BudgetSeconds() {
  const char* env = std::getenv("LTSIM_BENCH_SECONDS");
  return env ? std::atof(env) : 60.0;
}

struct Stop {};

// range(0) = P (D* = 2P), range(1) = 1 for the pruned search, 0 for full enumeration,
// range(2) = the kind of g (1 linear, 2 bump).
void BM_Threshold(benchmark::State& state) {
  const int period = static_cast<int>(state.range(0));
  const bool prune = state.range(1) != 0;
  const Kind kind = static_cast<Kind>(state.range(2));
  const Transformer f = Model(period, kSame), g = Model(period, kind);
  const double budget = BudgetSeconds();
  std::uint64_t reached = 0, statistics = 0;
  double seconds = 0.0;
  for (auto _ : state) {
    ltsim::ThresholdOptions o;
    o.epsilon = 0.5;
    o.prune = prune;
    o.threads = 1;
    o.max_length = ltsim::kThresholdMaxLength;
    if (!prune) {  // the full enumeration's own limit on Σ #statistics
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
  state.SetLabel(std::string(kind == kLinear ? "linear g, " : "bump g, ") +
                 (prune ? "pruned cells" : "full enumeration"));
}
BENCHMARK(BM_Threshold)
    ->ArgsProduct({{1, 2, 3}, {0, 1}, {1, 2}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
