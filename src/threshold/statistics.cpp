// Counting, realising and comparing the sufficient statistics of one-layer pairs
// (docs/theory.md §7.2).
#include "threshold/statistics.h"

#include <algorithm>
#include <limits>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/threshold/threshold.h"
#include "threshold/cells.h"

namespace ltsim {
namespace threshold {

std::uint64_t SaturatingMul(std::uint64_t a, std::uint64_t b) {
  const Uint128 product = static_cast<Uint128>(a) * b;
  return product >= kSaturated ? kSaturated : static_cast<std::uint64_t>(product);
}

std::uint64_t SaturatingAdd(std::uint64_t a, std::uint64_t b) {
  return std::min(kSaturated, std::min(a, kSaturated) + std::min(b, kSaturated));
}

std::uint64_t Multichoose(std::uint64_t n, int k) {
  Uint128 c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * (n + i) / i;  // C(n + i, i) = C(n + i − 1, i − 1)·(n + i)/i, exact
    if (c >= kSaturated) return kSaturated;
  }
  return static_cast<std::uint64_t>(c);
}

std::uint64_t ClassSize(std::uint64_t far, int period, int r) {
  const std::uint64_t delta = period;
  return far / delta + (r >= 1 && static_cast<std::uint64_t>(r) <= far % delta ? 1 : 0);
}

std::vector<Token> Realise(const TypeCounts& counts) {
  std::vector<std::uint64_t> left = counts.far;
  std::vector<int> token(counts.period, 0);
  std::vector<Token> x;
  x.reserve(counts.length);
  for (std::uint64_t j = 1; j <= counts.far_length(); ++j) {
    const int r = counts.Residue(j);
    while (left[counts.TypeIndex(token[r], r)] == 0) ++token[r];
    --left[counts.TypeIndex(token[r], r)];
    x.push_back(static_cast<Token>(token[r]));
  }
  x.insert(x.end(), counts.suffix.begin(), counts.suffix.end());
  const TypeCounts check = CountTypes(x, counts.alphabet, counts.period, counts.locality);
  LTSIM_CHECK(check.far == counts.far && check.suffix == counts.suffix);
  return x;
}

double Gap(const Vector& a, const Vector& b) {
  if (!a.allFinite() || !b.allFinite()) return std::numeric_limits<double>::infinity();
  return SupDistance(a, b);
}

}  // namespace threshold

bool ThresholdDisagrees(double gap, double epsilon, const Vector& f, const Vector& g) {
  return threshold::Disagrees(gap, epsilon, std::vector<double>(f.data(), f.data() + f.size()),
                              std::vector<double>(g.data(), g.data() + g.size()));
}

std::uint64_t CountStatistics(int alphabet, int period, int locality, std::uint64_t length) {
  using threshold::ClassSize;
  using threshold::Multichoose;
  using threshold::SaturatingMul;
  const std::uint64_t m = std::min<std::uint64_t>(length, static_cast<std::uint64_t>(locality) + 1);
  std::uint64_t count = 1;
  for (std::uint64_t k = 0; k < m; ++k) count = SaturatingMul(count, alphabet);
  for (int r = 0; r < period; ++r)
    count = SaturatingMul(count, Multichoose(ClassSize(length - m, period, r), alphabet - 1));
  return count;
}

}  // namespace ltsim
