// SuffixPowerSeries (suffix_powers.h).
#include "eval/suffix_powers.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "eval/kernel_clones.h"

namespace ltsim {
namespace {

constexpr int kMaxTerms = 12;
constexpr int kStride = 8;         // the coarse chains' step: i^b from (i − 8)^b
constexpr int kAnchorEvery = 256;  // positions between exp anchors

// Σ_{k<K} c_k·u^k by Horner.
inline double Series(const double* c, int terms, double u) {
  double f = c[terms - 1];
  for (int k = terms - 2; k >= 0; --k) f = f * u + c[k];
  return f;
}

// The coarse part of Fill for one exponent: out[j] = out[j − 8]·(1 + u_j)^b for 8 ≤ j < n, the
// factors by a Horner pass over the block (K fixed, so it vectorises) and the products by one
// pass whose dependence distance is 8.
template <int K>
[[gnu::always_inline]] inline void CoarseChain(const double* __restrict c,
                                               const double* __restrict u, double* out, int n) {
  for (int j = kStride; j < n; ++j) {
    double f = c[K - 1];
    for (int k = K - 2; k >= 0; --k) f = f * u[j] + c[k];
    out[j] = f;
  }
  for (int j = kStride; j < n; ++j) out[j] *= out[j - kStride];
}

LTSIM_KERNEL_CLONES void CoarseChains(const double* c, int terms, const double* u, double* out,
                                      int n) {
  switch (terms) {
#define LTSIM_TERMS(K) \
  case K:              \
    return CoarseChain<K>(c, u, out, n);
    LTSIM_TERMS(1)
    LTSIM_TERMS(2)
    LTSIM_TERMS(3)
    LTSIM_TERMS(4)
    LTSIM_TERMS(5)
    LTSIM_TERMS(6)
    LTSIM_TERMS(7)
    LTSIM_TERMS(8)
    LTSIM_TERMS(9)
    LTSIM_TERMS(10)
    LTSIM_TERMS(11)
    LTSIM_TERMS(12)
#undef LTSIM_TERMS
    default:
      return;
  }
}

}  // namespace

SuffixPowerSeries::SuffixPowerSeries(std::vector<double> exponents)
    : exponents_(std::move(exponents)), coefficients_(exponents_.size() * kMaxTerms) {
  for (std::size_t w = 0; w < exponents_.size(); ++w) {
    const double b = exponents_[w];
    double* c = &coefficients_[w * kMaxTerms];
    c[0] = 1.0;
    for (int k = 0; k + 1 < kMaxTerms; ++k) c[k + 1] = c[k] * (b - k) / (k + 1);
    largest_ = std::max(largest_, std::abs(b));
  }
}

void SuffixPowerSeries::Fill(std::uint64_t first, int n, double* powers) {
  for (int start = 0; start < n; start += kAnchorEvery)
    FillSegment(first + static_cast<std::uint64_t>(start), std::min(kAnchorEvery, n - start),
                powers + start, n);
}

void SuffixPowerSeries::FillSegment(std::uint64_t first_position, int n, double* powers,
                                    std::ptrdiff_t stride) {
  const int m = static_cast<int>(exponents_.size());
  const double first = static_cast<double>(first_position);
  const double v = kStride * (largest_ + 1.0) / first;
  int terms = 1;
  for (double tail = v / (1.0 - v); terms <= kMaxTerms && !(v < 1.0 && tail <= 0x1p-56); ++terms)
    tail *= v;
  if (terms > kMaxTerms) {  // too early in x for the series: one exp per power
    for (int j = 0; j < n; ++j) {
      const double log_i = std::log(first + j);
      for (int w = 0; w < m; ++w) powers[w * stride + j] = std::exp(exponents_[w] * log_i);
    }
    return;
  }
  steps_.resize(static_cast<std::size_t>(std::max(n, kStride)));
  for (int j = kStride; j < n; ++j) steps_[j] = kStride / (first + j - kStride);
  const double log_first = std::log(first);
  for (int w = 0; w < m; ++w) {
    const double* c = &coefficients_[static_cast<std::size_t>(w) * kMaxTerms];
    double* out = powers + w * stride;
    // The fine steps u = 1/(i − 1) are smaller than the coarse ones, so the same K suffices.
    out[0] = std::exp(exponents_[w] * log_first);
    for (int j = 1; j < std::min(n, kStride); ++j)
      out[j] = out[j - 1] * Series(c, terms, 1.0 / (first + j - 1));
    CoarseChains(c, terms, steps_.data(), out, n);
  }
}

}  // namespace ltsim
