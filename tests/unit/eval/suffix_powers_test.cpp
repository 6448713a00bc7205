// SuffixPowerSeries (the log-scaled local bias' i^b at a block of positions) against long double.
#include "eval/suffix_powers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace ltsim {
namespace {

// The worst ratio of |error| to suffix_powers.h's bound over positions first … first + n − 1.
// The bound: a power is at most 7 + min(n, 256)/8 series factors from its exp anchor, each
// within 2^−56 + (K + 2)·2^−53 ≤ 15·2^−53 (K ≤ 12). The anchor e^(b·log i) is off by the
// roundings of log i and of the product, each ≤ 2^−53 relative of b·log i, so by
// 2|b|·log(i)·2^−53, plus exp's own ulp (early in x every power is such an exp, of log i ≤
// log last). In all, ((2|b| log last + 1) + (7 + min(n, 256)/8)·15)·2^−53 relative.
double WorstRatio(const std::vector<double>& exponents, std::uint64_t first, int n) {
  SuffixPowerSeries series(exponents);
  const int m = static_cast<int>(exponents.size());
  std::vector<double> powers(static_cast<std::size_t>(n) * m);
  series.Fill(first, n, powers.data());
  double worst = 0.0;
  for (int w = 0; w < m; ++w) {
    const double b = exponents[w];
    const double last = static_cast<double>(first + n - 1);
    const double bound =
        ((2.0 * std::abs(b) * std::log(last) + 1.0) + (7.0 + std::min(n, 256) / 8.0) * 15.0) *
        0x1p-53;
    for (int j = 0; j < n; ++j) {
      const long double exact =
          std::pow(static_cast<long double>(first + j), static_cast<long double>(b));
      // Beyond the normal doubles (|b| = 80 at large i) a relative bound means nothing; the
      // stream's overflow guard keeps such powers out of the batched path anyway.
      if (exact < std::numeric_limits<double>::min() || exact > 1e300) continue;
      const double got = powers[static_cast<std::size_t>(w) * n + j];
      const double error = static_cast<double>(std::abs((got - exact) / exact));
      EXPECT_LE(error, bound) << "b = " << b << ", i = " << first + j << ", n = " << n;
      worst = std::max(worst, error / bound);
    }
  }
  return worst;
}

// Two sets of exponents, since the series' length K depends on the largest |b|: with |b| ≤ 3
// the series starts near i = 1000 (K = 12) and shortens to K = 3 at 10^8; with |b| = 80 it
// starts near 2·10^4 and before that every power is an exp. Lengths below 8 use only the fine
// steps, 1000 crosses three re-anchorings.
TEST(SuffixPowerSeries, WithinItsStatedBoundOfLongDouble) {
  const std::vector<std::vector<double>> sets = {{-3.0, -0.5, 0.0, 0.3, 2.0, 3.0},
                                                 {-80.0, -3.7, 10.0, 80.0}};
  double worst = 0.0;
  for (const std::vector<double>& exponents : sets)
    for (std::uint64_t first : {1ULL, 300ULL, 1000ULL, 5000ULL, 20000ULL, 1000000ULL, 100000000ULL})
      for (int n : {1, 5, 8, 9, 256, 1000})
        worst = std::max(worst, WorstRatio(exponents, first, n));
  std::printf("SuffixPowerSeries: worst error / bound = %.3f\n", worst);
}

// The bound holds for any n only because each 256 positions start from a fresh exp anchor: one
// chain over 2^20 positions gathers 2^17 coarse factors, and without the re-anchoring this case
// measured 4.6 times the bound (with it, 0.11).
TEST(SuffixPowerSeries, LongFillsStayWithinTheBlockBound) {
  const double worst = WorstRatio({-3.0, -0.5, 0.3, 3.0}, 1000000, 1 << 20);
  std::printf("SuffixPowerSeries, n = 2^20: worst error / bound = %.3f\n", worst);
}

}  // namespace
}  // namespace ltsim
