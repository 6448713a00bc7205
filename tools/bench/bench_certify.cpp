// The exact first disagreement at T* = 10^7, D* = 2, one thread: `threshold` to N = 10^7 and
// `certify` (which finds the disagreement beyond T₀ and then T* exactly), docs/theory.md §12.9.
// Pair: f = the share of 1s (hardmax, every key tied), g = f plus a triangular bump of height 1
// and half-width w = 10⁻¹⁴ at c = 10⁻⁷: a share n/T within w of c first occurs at n/T = 1/10^7
// (any other n/T with T < 10^7 is at least 1/(10^7·T) > 10⁻¹⁴ away), so T* = 10^7 at ε = 1/2.
#include <benchmark/benchmark.h>

#include "ltsim/threshold/certify.h"
#include "ltsim/threshold/threshold.h"

namespace {

using namespace ltsim;

Transformer ShareOfOnes() {
  Transformer m;
  m.name = "share-of-ones";
  m.alphabet = 2;
  m.width = 3;
  m.embedding = Matrix::Zero(2, 3);
  m.embedding(0, 0) = m.embedding(1, 1) = 1.0;
  m.positional = Matrix::Zero(1, 3);
  Head head{Matrix::Zero(3, 3), Matrix::Zero(3, 3), Vector::Zero(1)};
  head.ov(2, 1) = 1.0;
  Layer layer;
  layer.attention = Attention::kHardmax;
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 3);
  m.readout_weight(0, 2) = 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "f");
  return m;
}

Transformer WithBump(double c, double w, double h) {
  Transformer m = ShareOfOnes();
  Mlp mlp{Matrix::Zero(3, 3), Vector(3), Matrix::Zero(3, 3)};
  for (int i = 0; i < 3; ++i) mlp.in(i, 2) = 1.0;
  mlp.in_bias << -(c - w), -c, -(c + w);
  mlp.out(2, 0) = h / w;
  mlp.out(2, 1) = -2 * h / w;
  mlp.out(2, 2) = h / w;
  m.layers[0].mlp = mlp;
  ValidateTransformer(m, "g");
  return m;
}

constexpr std::uint64_t kStar = 10'000'000;

void BM_ThresholdTenMillion(benchmark::State& state) {
  const Transformer f = ShareOfOnes(), g = WithBump(1e-7, 1e-14, 1.0);
  std::uint64_t found = 0;
  for (auto _ : state) {
    ThresholdOptions o;
    o.epsilon = 0.5;
    o.max_length = kStar;
    o.threads = 1;
    const ThresholdResult r = FindThreshold(f, g, o);
    found = r.first_disagreement.value_or(0);
  }
  if (found != kStar) state.SkipWithError("T* is not 10^7");
  state.counters["T_star"] = static_cast<double>(found);
}
BENCHMARK(BM_ThresholdTenMillion)->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(2);

void BM_CertifyTenMillion(benchmark::State& state) {
  const Transformer f = ShareOfOnes(), g = WithBump(1e-7, 1e-14, 1.0);
  std::uint64_t found = 0, boxes = 0;
  for (auto _ : state) {
    CertifyOptions o;
    o.epsilon = 0.5;
    o.threads = 1;
    const CertifyResult r = Certify(f, g, o);
    found = r.first_disagreement.value_or(0);
    boxes = r.boxes;
  }
  if (found != kStar) state.SkipWithError("certify's T* is not 10^7");
  state.counters["T_star"] = static_cast<double>(found);
  state.counters["boxes"] = static_cast<double>(boxes);
}
BENCHMARK(BM_CertifyTenMillion)->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(2);

}  // namespace

BENCHMARK_MAIN();
