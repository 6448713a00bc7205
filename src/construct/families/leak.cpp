// The leak family (docs/families.md): the first layer's previous-token head leaks; the
// second layer sums the leak.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"

namespace ltsim::construct {
namespace {

// ---- leak: the first layer's previous-token head leaks; the second layer sums the leak ----------
//
// Alphabet {0, 1}, Δ = 1, τ = 1. Layer 1 (softmax, no bias scaling) has two previous-token heads:
// A with φ[1] = b (the norm) and B with φ[1] = b + kLeakOffset, each copying [x = 1]; at
// position j ≥ 2 head H outputs p_H(j) = (e^(b_H)·x_(j−1) + N₁(j) − x_(j−1))/(e^(b_H) + j − 1),
// N₁(j) the number of 1s in x_1 … x_j (at j = 1 both output x_1). Layer 2 (hardmax, every logit 0)
// averages s·(p_A − p_B) over all T positions; f reads it, g is the same model with a zero
// readout. Coordinates: 0 = constant 1, 1 = [x = 1], 2 = p_A, 3 = p_B, 4 = the average.
constexpr double kLeakOffset = 12.0;
// The largest T* the builder computes: its O(T*²) dynamic programme stays below a second.
constexpr int kLeakMaxClosedForm = 5000;

// d(j, N₁, x_(j−1)) = p_A(j) − p_B(j) in long double (docs/families.md).
long double LeakTerm(long double ea, long double eb, int j, int ones, int prev) {
  const long double num = static_cast<long double>(ones - prev);
  return (ea * prev + num) / (ea + (j - 1)) - (eb * prev + num) / (eb + (j - 1));
}

FamilyMember BuildLeak(const FamilyValues& v) {
  const double b = Get(v, "norm"), eps = Get(v, "eps"), kappa = Get(v, "height");
  const double s = std::exp(1.0) * kappa * eps;  // sup |f − g| ≈ s/e = κε (docs/families.md)
  const int width = 5;
  Transformer f = Skeleton(2, width, 1, Attention::kSoftmax, 2);
  f.locality = 1;
  f.embedding(0, 0) = 1.0;
  f.embedding(1, 0) = 1.0;
  f.embedding(1, 1) = 1.0;
  for (int h = 0; h < 2; ++h) {
    Head& head = f.layers[0].heads[h];
    head.bias = Vector::Zero(2);
    head.bias(1) = h == 0 ? b : b + kLeakOffset;  // logit on the previous position
    head.ov(2 + h, 1) = 1.0;                      // copies [x = 1]
  }
  Layer second;
  second.attention = Attention::kHardmax;
  second.heads.push_back({Matrix::Zero(width, width), Matrix::Zero(width, width), Vector::Zero(2)});
  second.heads[0].ov(4, 2) = s;
  second.heads[0].ov(4, 3) = -s;
  f.layers.push_back(second);
  const ZeroReadoutPair pair = MakeZeroReadoutPair(f, 4);

  // f − g = (s/T)·Σ_(j=2..T) d(j, N₁(j), x_(j−1)): additive along the string, each term a
  // function of (j, N₁(j), x_(j−1)). So its largest and smallest values over the strings of
  // each length are one forward dynamic programme over the states (N₁(j), x_j), exact in long
  // double up to rounding far below the refusal margin. T* is the first T where the largest
  // |f − g| exceeds B = ε + 10⁻⁹ (the verdict of `threshold`; ‖f‖ ≤ 1 here).
  const long double B = static_cast<long double>(eps) + kVerdictTolerance;
  const long double ea = std::exp(static_cast<long double>(b));
  const long double eb = std::exp(static_cast<long double>(b + kLeakOffset));
  const long double inf = std::numeric_limits<long double>::infinity();
  // hi[2n + x], lo[2n + x]: largest and smallest sum over strings x_1 … x_j with N₁(j) = n, x_j =
  // x.
  std::vector<long double> hi(2 * (kLeakMaxClosedForm + 2), -inf), lo(hi.size(), inf);
  hi[0] = lo[0] = 0.0L;  // x_1 = 0
  hi[3] = lo[3] = 0.0L;  // x_1 = 1 (n = 1)
  std::uint64_t t_star = 0;
  long double below = 0.0L, at = 0.0L;  // largest |gap| before T*, and at T*
  for (int j = 2; j <= kLeakMaxClosedForm && t_star == 0; ++j) {
    std::vector<long double> nhi(hi.size(), -inf), nlo(lo.size(), inf);
    for (int n = 0; n < j; ++n)
      for (int prev = 0; prev < 2; ++prev) {
        const long double h = hi[2 * n + prev], l = lo[2 * n + prev];
        if (h == -inf) continue;
        for (int x = 0; x < 2; ++x) {
          const long double d = LeakTerm(ea, eb, j, n + x, prev);
          const int k = 2 * (n + x) + x;
          nhi[k] = std::max(nhi[k], h + d);
          nlo[k] = std::min(nlo[k], l + d);
        }
      }
    hi.swap(nhi);
    lo.swap(nlo);
    long double largest = 0.0L;
    for (std::size_t k = 0; k < hi.size(); ++k)
      if (hi[k] != -inf) largest = std::max({largest, hi[k], -lo[k]});
    const long double gap = static_cast<long double>(s) * largest / j;
    if (gap > B)
      t_star = static_cast<std::uint64_t>(j), at = gap;
    else
      below = std::max(below, gap);
  }
  if (t_star == 0)
    throw InputError(fmt::format(
        "family leak: T* is beyond the closed form's range ({}); lower norm", kLeakMaxClosedForm));
  if (!(at > B * (1 + kBoundaryMargin)) || !(below < B * (1 - kBoundaryMargin)))
    throw InputError(fmt::format(
        "family leak: the largest gap lies within a relative 1e-6 of eps (+ the verdict's 1e-9) "
        "at T* or before (norm {}, eps {}, height {}): a boundary case; change norm slightly",
        b, eps, kappa));
  FamilyMember member;
  member.f = pair.f;
  member.g = pair.g;
  member.f.name = fmt::format("family leak f (norm={}, eps={}, height={})", b, eps, kappa);
  member.g.name = fmt::format("family leak g (norm={}, eps={}, height={})", b, eps, kappa);
  member.eps = eps;
  member.first_disagreement = t_star;
  member.closed_form =
      "min{T : (s/T)·max_x |Σ_(j≤T) p_A(j) − p_B(j)| > ε + 1e-9}, the max by a DP over (N₁, x_j)";
  member.growth = "e^b/κ";
  member.gap_at_first_disagreement = static_cast<double>(at);
  member.sup_gap = s / std::exp(1.0);
  return member;
}

}  // namespace

Family LeakFamily() {
  return {"leak",
          "two layers: layer 1's previous-token head (bias b) leaks a share ≈ N₁/e^b, layer 2 "
          "averages the leak over every position",
          "e^b (the first layer's attention norm)",
          {{"norm", 4.0, 0.0, 7.0, false, "b: the first layer's bias on the previous position"},
           EpsParameter(),
           {"height", 3.0, 1.5, 100.0, false, "κ: sup |f − g| ≈ κε, the slope is s = e·κε"}},
          BuildLeak};
}

}  // namespace ltsim::construct
