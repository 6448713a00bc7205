// `AverageGap` against a direct sum over every string of every length, each weighted by its
// Dirichlet-multinomial probability, on random one-layer pairs of every attention mode
// (docs/theory.md §13.6).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/reference.h"
#include "ltsim/model/joint_view.h"
#include "ltsim/threshold/average.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// Strings summed by brute force a case, over all lengths (kept to tens of milliseconds).
constexpr double kStrings = 20000;

struct Pair {
  Transformer f, g;
  std::uint64_t max_length = 0;
  std::vector<double> alphas;
};

Pair GenPair() {
  test::ModelShape a = *test::GenShape();
  a.layers = 1;
  a.grid = *rc::gen::arbitrary<bool>();
  test::ModelShape b = *test::WithAlphabet(test::GenShape(), a.alphabet);
  b.layers = 1;
  b.grid = *rc::gen::element(a.grid, !a.grid);
  b.outputs = a.outputs;
  if (*rc::gen::arbitrary<bool>()) {  // a near copy: small expected gaps must come out right too
    b = a;
    b.scale = a.scale * *rc::gen::element(1.0, 1.05, 0.9);
    b.attention = *rc::gen::element(Attention::kHardmax, Attention::kSoftmax, Attention::kFinite);
    b.precision_bits = b.attention == Attention::kFinite ? *rc::gen::inRange(1, 5) : 0;
  }
  Pair p{test::MakeRandomModel(a), test::MakeRandomModel(b), 0, {}};
  const int S = a.alphabet;
  double strings = 0;
  while (p.max_length < 10) {
    const double next = std::pow(static_cast<double>(S), static_cast<double>(p.max_length + 1));
    if (strings + next > kStrings) break;
    strings += next;
    ++p.max_length;
  }
  if (*rc::gen::arbitrary<bool>()) {
    p.alphas.assign(S, *rc::gen::element(0.2, 0.5, 1.0, 3.0));
  } else {
    for (int s = 0; s < S; ++s) p.alphas.push_back(*rc::gen::element(0.3, 0.7, 1.0, 2.5, 10.0));
  }
  return p;
}

// Σ over every string x of length T of P(x)·‖f(x) − g(x)‖_∞, P(x) = Π_s Γ(α_s + n_s)/Γ(α_s) ·
// Γ(A)/Γ(A + T), with the reference evaluator (no statistics, no tables).
std::vector<double> BruteForce(const Pair& p, double& scale) {
  const int S = p.f.alphabet;
  const double A = std::accumulate(p.alphas.begin(), p.alphas.end(), 0.0);
  std::vector<double> out;
  scale = 1.0;
  for (std::uint64_t T = 1; T <= p.max_length; ++T) {
    std::vector<Token> x(T, 0);
    double sum = 0.0;
    while (true) {
      std::vector<int> n(S, 0);
      for (Token t : x) ++n[t];
      double lp = std::lgamma(A) - std::lgamma(A + static_cast<double>(T));
      for (int s = 0; s < S; ++s) lp += std::lgamma(p.alphas[s] + n[s]) - std::lgamma(p.alphas[s]);
      const Vector a = EvaluateReference(p.f, x), b = EvaluateReference(p.g, x);
      scale = std::max({scale, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
      sum += std::exp(lp) * SupDistance(a, b);
      std::size_t i = T;
      while (i > 0 && ++x[i - 1] == S) x[--i] = 0;
      if (i == 0) break;
    }
    out.push_back(sum);
  }
  return out;
}

RC_GTEST_PROP(AverageProperty, ExactSumEqualsTheSumOverEveryString, ()) {
  const Pair p = GenPair();
  RC_PRE(p.max_length >= 1);
  double scale = 1.0;
  const std::vector<double> want = BruteForce(p, scale);
  RC_PRE(std::all_of(want.begin(), want.end(), [](double v) { return std::isfinite(v); }));
  AverageOptions options;
  options.alphas = p.alphas;
  options.max_length = p.max_length;
  options.threads = 1;
  const AverageResult got = AverageGap(p.f, p.g, options);
  RC_ASSERT(got.exact_up_to == p.max_length);
  // Both sides are double sums of the same ≤ 2·10⁴ terms evaluated in different orders by
  // different evaluators: 1e-9 relative to the outputs' scale is far above their rounding and
  // far below any missing or misweighted statistic (the smallest probability here is ~1e-8
  // only for T = 10, and a lost statistic moves the sum by its probability times its gap).
  for (std::uint64_t t = 0; t < p.max_length; ++t) {
    RC_ASSERT(got.lower[t] == got.upper[t]);
    RC_ASSERT(std::abs(got.lower[t] - want[t]) <= 1e-9 * scale);
    RC_ASSERT(std::abs(got.mass[t] - 1.0) <= 1e-12);
  }
  // The brackets of a run that sums nothing beyond τ* + 1 hold the exact values.
  options.max_statistics = 0;
  const AverageResult bracket = AverageGap(p.f, p.g, options);
  for (std::uint64_t t = 0; t < p.max_length; ++t) {
    RC_ASSERT(bracket.lower[t] <= want[t] + 1e-9 * scale);
    RC_ASSERT(bracket.upper[t] >= want[t] - 1e-9 * scale);
    if (bracket.exact_per_length[t]) RC_ASSERT(bracket.lower[t] == got.lower[t]);
  }
  // The same numbers, bit for bit, on 3 threads.
  options.max_statistics = AverageOptions{}.max_statistics;
  options.threads = 3;
  const AverageResult threaded = AverageGap(p.f, p.g, options);
  RC_ASSERT(threaded.lower == got.lower);
  RC_ASSERT(threaded.upper == got.upper);
}

}  // namespace
}  // namespace ltsim
