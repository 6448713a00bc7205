// i^b at a block of consecutive positions for the log-scaled local bias, without an exp per
// position (docs/theory.md §4.1; the error bound below is §8.2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ltsim {

/// Powers i^(b_w) of consecutive positions i for fixed exponents b_0 … b_(m−1), from the
/// binomial series (1 + u)^b = Σ_k c_k u^k (c_0 = 1, c_(k+1) = c_k·(b − k)/(k + 1)), in
/// segments of 256 positions: one exp at a segment's start, i^b = (i − 1)^b·(1 + 1/(i − 1))^b
/// for its next 7 positions, then i^b = (i − 8)^b·(1 + 8/(i − 8))^b, eight independent chains
/// that vectorise. Since |c_k| ≤ (|b| + 1)^k, cutting the series after K terms errs by at most
/// v^K/(1 − v) with v = 8·(max|b| + 1)/i at the segment's start; K is the least with that
/// ≤ 2^−56, and where it would exceed 12 (early in x) each power is an exp instead. A power is
/// at most 7 + 31 = 38 factors from its exp anchor, each within 2^−56 + (K + 2)·2^−53, so
/// within 38·15·2^−53 ≈ 6e-14 relative of the anchor's value times the exact product; the
/// anchor e^(b·log i) itself is within (2|b|·log i + 1)·2^−53 (the roundings of log i and of
/// the product, and exp's ulp; tests/unit/eval/suffix_powers_test.cpp).
class SuffixPowerSeries {
 public:
  explicit SuffixPowerSeries(std::vector<double> exponents);

  /// powers[w·n + j] = (first + j)^(b_w) for j < n (column-major n × m). first ≥ 1.
  void Fill(std::uint64_t first, int n, double* powers);

 private:
  // Fill for at most 256 positions, column w at powers + w·stride.
  void FillSegment(std::uint64_t first, int n, double* powers, std::ptrdiff_t stride);

  std::vector<double> exponents_;
  std::vector<double> coefficients_;  // c_k(b_w) at w·kMaxTerms + k
  double largest_ = 0.0;              // max |b_w|
  std::vector<double> steps_;         // u_j = 8/(i − 8)
};

}  // namespace ltsim
