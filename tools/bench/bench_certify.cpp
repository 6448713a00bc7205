// The exact first disagreement at T* = 10^7, D* = 2, one thread: `threshold` to N = 10^7 and
// `certify` (which finds the disagreement beyond T₀ and then T* exactly), docs/theory.md §12.9.
// Pair: f = the share x of 1s (hardmax, every key tied), g = f plus the triangle
// max(0, h − s·|x − c|) of slope s = 10⁹ and height h = 1/2 + 5·10⁻⁶ at c = 10⁻⁷ − 10⁻¹⁵. At
// ε = 1/2 a share disagrees iff |x − c| < 5·10⁻¹⁵: x = 1/10^7 does (|x − c| = 10⁻¹⁵), and any
// other n/T with T < 10^7 is at least 1/(10^7·T) > 10⁻¹⁴ from 1/10^7, hence > 9·10⁻¹⁵ from c;
// so T* = 10^7, the gaps at and below it 4·10⁻⁶ from ε. (A triangle of half-width 10⁻¹⁴, slope
// 10¹⁴, gives the same T*, but its doubles err by more than ε: every statistic is then decided
// in 50 digits, docs/theory.md §8.7.)
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

// g = f + max(0, h − s·|x − c|) on the share x: s·(ReLU(x − c + w) − 2·ReLU(x − c) +
// ReLU(x − c − w)) with w = h/s.
Transformer WithTriangle(double c, double s, double h) {
  Transformer m = ShareOfOnes();
  const double w = h / s;
  Mlp mlp{Matrix::Zero(3, 3), Vector(3), Matrix::Zero(3, 3)};
  for (int i = 0; i < 3; ++i) mlp.in(i, 2) = 1.0;
  mlp.in_bias << -(c - w), -c, -(c + w);
  mlp.out(2, 0) = s;
  mlp.out(2, 1) = -2 * s;
  mlp.out(2, 2) = s;
  m.layers[0].mlp = mlp;
  ValidateTransformer(m, "g");
  return m;
}

Transformer G() { return WithTriangle(1e-7 - 1e-15, 1e9, 0.5 + 5e-6); }

constexpr std::uint64_t kStar = 10'000'000;

void BM_ThresholdTenMillion(benchmark::State& state) {
  const Transformer f = ShareOfOnes(), g = G();
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
  const Transformer f = ShareOfOnes(), g = G();
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
