// The nested family (docs/families.md): S heads on nested supports; the hole needs every
// head's ratio small at once.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"

namespace ltsim {
namespace construct {
namespace {

// ---- nested: S heads on nested supports; the hole needs every head's ratio small at once ----
//
// Query token 0. Head 1 attends the far 1-keys and the query (φ[0] ties it): u₁ = 1/(C₁ + 1),
// the query's share. Head j (2 ≤ j ≤ S−1) attends the far keys of tokens 1 … j: u_j = C_{j−1}/C_j.
// Head S attends every position: u_S = C_{S−1}/T. Here C_j = c₁ + … + c_j (far counts).
// f = ReLU(θ − a·Σ_j u_j − K·[query ≠ 0]), θ = κε, K = 2θ; g = 0. Since Π_j u_j = C₁/((C₁+1)T)
// ≈ 1/T, Σ_j u_j ≥ S·T^(−1/S) roughly, so f > ε needs T ≳ (S·a/((κ − 1)ε))^S.
// Coordinates: 0 = constant 1, 1 … S−1 = one-hot of tokens 1 … S−1, S … 2S−1 = u₁ … u_S,
// 2S = the unit.
// The largest T* computed: the exact threshold's largest length (kThresholdMaxLength, which
// `construct` cannot include), so every member can be certified.
constexpr int kNestedMaxClosedForm = 1'000'000;

// min over 1 ≤ c ≤ C of 1/(c + 1) + c/C: convex in c with real minimiser √C − 1, so the
// integer minimum is at one of the integers next to it.
long double ChainStart(int C) {
  const int c0 = static_cast<int>(std::floor(std::sqrt(static_cast<long double>(C)))) - 1;
  long double best = std::numeric_limits<long double>::infinity();
  for (int c = std::max(1, c0 - 1); c <= std::min(C, c0 + 2); ++c)
    best = std::min(best, 1.0L / (c + 1) + static_cast<long double>(c) / C);
  return best;
}

// next[c] = min over 1 ≤ c' ≤ min(c, c_max) of F[c'] + c'/c, for c = 1 … limit. The cost
// w(c', c) = F[c'] + c'/c satisfies the quadrangle inequality (for c'₁ < c'₂, c₁ < c₂:
// w(c'₁, c₁) + w(c'₂, c₂) ≤ w(c'₁, c₂) + w(c'₂, c₁) ⟺ (c'₂ − c'₁)(1/c₂ − 1/c₁) ≤ 0; a pair
// with c' > c is +∞ and satisfies it trivially), so the leftmost minimiser is non-decreasing
// in c and divide and conquer finds every minimum exactly in O(limit·log limit) evaluations.
void NextLevel(const std::vector<long double>& F, std::vector<long double>& next, int lo, int hi,
               int opt_lo, int opt_hi, int shift) {
  if (lo > hi) return;
  const int mid = lo + (hi - lo) / 2;
  long double best = std::numeric_limits<long double>::infinity();
  int arg = opt_lo;
  for (int c = opt_lo; c <= std::min(opt_hi, mid - shift); ++c) {
    const long double v = F[c] + static_cast<long double>(c) / mid;
    if (v < best) {
      best = v;
      arg = c;
    }
  }
  next[mid] = best;
  NextLevel(F, next, lo, mid - 1, opt_lo, arg, shift);
  NextLevel(F, next, mid + 1, hi, arg, opt_hi, shift);
}

// m(T) = min over the statistics of length T with query 0 and C₁ ≥ 1 of Σ_j u_j
// (docs/families.md), for T = 1 … limit (+∞ at T = 1, where none exists), computed exactly in
// long double. F[C] = min over 1 ≤ C₁ ≤ … ≤ C_{S−1} = C of 1/(C₁+1) + Σ_{j=2}^{S−1} C_{j−1}/C_j.
std::vector<long double> NestedMinima(int alphabet, int limit) {
  const long double inf = std::numeric_limits<long double>::infinity();
  std::vector<long double> m(limit + 1, inf);
  if (alphabet == 2) {
    for (int t = 2; t <= limit; ++t) {
      // c ≤ T − 1 bounds the chain; ChainStart(T) ranges over c ≤ T, and c = T is never the
      // minimiser for T ≥ 2 (1/(T+1) + 1 > 1/2 + 1/T).
      m[t] = ChainStart(t);
    }
    return m;
  }
  std::vector<long double> F(limit + 1, inf);
  for (int c = 1; c <= limit; ++c) F[c] = ChainStart(c);  // level 2: C₁/C₂ after 1/(C₁+1)
  for (int level = 3; level <= alphabet - 1; ++level) {
    std::vector<long double> next(limit + 1, inf);
    NextLevel(F, next, 1, limit, 1, limit, 0);  // C_{level−1} ≤ C_level
    F = std::move(next);
  }
  NextLevel(F, m, 2, limit, 1, limit, 1);  // the last ratio C_{S−1}/T, C_{S−1} ≤ T − 1
  return m;
}

}  // namespace
}  // namespace construct

std::vector<long double> NestedChainMinimaReference(int alphabet, int limit) {
  const long double inf = std::numeric_limits<long double>::infinity();
  std::vector<long double> m(limit + 1, inf);
  std::vector<long double> F(limit + 1, inf);
  for (int c = 1; c <= limit; ++c) F[c] = construct::ChainStart(c);
  if (alphabet == 2) {
    for (int t = 2; t <= limit; ++t) m[t] = construct::ChainStart(t);
    return m;
  }
  for (int level = 3; level <= alphabet - 1; ++level) {
    std::vector<long double> next(limit + 1, inf);
    for (int c = 1; c <= limit; ++c)
      for (int c_prev = 1; c_prev <= c; ++c_prev)
        next[c] = std::min(next[c], F[c_prev] + static_cast<long double>(c_prev) / c);
    F = next;
  }
  for (int t = 2; t <= limit; ++t)
    for (int c = 1; c <= t - 1; ++c) m[t] = std::min(m[t], F[c] + static_cast<long double>(c) / t);
  return m;
}

std::vector<long double> NestedChainMinima(int alphabet, int limit) {
  return construct::NestedMinima(alphabet, limit);
}

namespace construct {
namespace {

FamilyMember BuildNested(const FamilyValues& v) {
  const int S = static_cast<int>(Get(v, "alphabet"));
  const double a = Get(v, "slope"), eps = Get(v, "eps"), kappa = Get(v, "height");
  const double theta = kappa * eps, theta_low = theta - eps, K = 2.0 * theta;
  if (!(a > theta))
    throw InputError(fmt::format("family nested: slope {} must exceed height·eps = {}", a, theta));
  const int width = 2 * S + 1, unit = 2 * S;
  auto ind = [](int token) { return token; };  // coordinate of [token = t], t ≥ 1
  auto u = [S](int j) { return S + j - 1; };   // coordinate of u_j, j = 1 … S
  Transformer f = Skeleton(S, width, 1, Attention::kHardmax, S);
  for (int t = 0; t < S; ++t) {
    f.embedding(t, 0) = 1.0;
    if (t >= 1) f.embedding(t, ind(t)) = 1.0;
  }
  Layer& layer = f.layers[0];
  // Head 1: logit 1 on far 1-keys; the query (token 0, logit 0) gets φ[0] = 1 to tie them.
  layer.heads[0].qk(ind(1), 0) = 1.0;
  layer.heads[0].bias(0) = 1.0;
  layer.heads[0].ov(u(1), 0) = 1.0;  // value [token = 0] = const − Σ_t [token = t]
  for (int t = 1; t < S; ++t) layer.heads[0].ov(u(1), ind(t)) = -1.0;
  for (int j = 2; j <= S - 1; ++j) {
    Head& head = layer.heads[j - 1];
    for (int t = 1; t <= j; ++t) head.qk(ind(t), 0) = 1.0;
    for (int t = 1; t < j; ++t) head.ov(u(j), ind(t)) = 1.0;  // value [1 ≤ token ≤ j − 1]
  }
  Head& last = layer.heads[S - 1];                          // uniform: qk = 0, φ = 0
  for (int t = 1; t < S; ++t) last.ov(u(S), ind(t)) = 1.0;  // value [token ≠ 0]
  Mlp mlp = OneUnit(width);
  for (int j = 1; j <= S; ++j) mlp.in(0, u(j)) = -a;
  for (int t = 1; t < S; ++t) mlp.in(0, ind(t)) = -K;
  mlp.in_bias(0) = theta;
  mlp.out(unit, 0) = 1.0;
  layer.mlp = mlp;
  const ZeroReadoutPair pair = MakeZeroReadoutPair(f, unit);

  // m_S up to growing limits (×8 from 1000) until T* is found, up to the exact threshold's
  // largest length, so that every member is one `ltsim threshold` can certify.
  const long double target = static_cast<long double>(theta_low) / a;  // f > ε ⟺ Σu < target
  int t_star = 0;
  std::vector<long double> m;
  for (int limit = std::min(1000, kNestedMaxClosedForm); t_star == 0;
       limit = std::min(limit * 8, kNestedMaxClosedForm)) {
    m = NestedMinima(S, limit);
    for (int t = 2; t <= limit && t_star == 0; ++t)
      if (m[t] < target) t_star = t;
    if (t_star == 0 && limit == kNestedMaxClosedForm)
      throw InputError(fmt::format(
          "family nested: T* is beyond the closed form's range ({}) for alphabet {}; lower slope",
          limit, S));
  }
  const long double below = t_star > 2 ? m[t_star - 1] : 1.0L;
  if (!(m[t_star] < target * (1 - kBoundaryMargin)) || !(below > target * (1 + kBoundaryMargin)))
    throw InputError(
        "family nested: a statistic lies on the boundary Σu = (height − 1)·eps/slope (the gap "
        "equals eps); change slope slightly");
  FamilyMember member;
  member.f = pair.f;
  member.g = pair.g;
  member.f.name =
      fmt::format("family nested f (alphabet={}, slope={}, eps={}, height={})", S, a, eps, kappa);
  member.g.name =
      fmt::format("family nested g (alphabet={}, slope={}, eps={}, height={})", S, a, eps, kappa);
  member.eps = eps;
  member.first_disagreement = static_cast<std::uint64_t>(t_star);
  member.closed_form = "min{T : a·m_S(T) < (κ−1)ε}, m_S(T) = min Σ_j u_j at length T";
  member.growth = "(S·a/((κ−1)ε))^S";
  member.gap_at_first_disagreement = static_cast<double>(theta - a * m[t_star]);
  member.sup_gap = theta;
  return member;
}

}  // namespace

Family NestedFamily() {
  return {
      "nested",
      "S heads on nested supports (ratios 1/(C₁+1), C₁/C₂, …, C_{S−1}/T); one MLP unit fires only "
      "when all are small",
      "L/ε with exponent S (S = 2: (L/ε)²); |Σ|",
      {{"alphabet", 2, 2, 4, true, "S: alphabet size = number of heads"},
       // The default 0.43 keeps every statistic off the boundary Σu = (κ − 1)ε/a (at a = 1
       // with ε = 0.05, κ = 3 a statistic lies on it and the member is refused).
       {"slope", 0.43, 1e-3, 1e6, false, "a: the unit's slope on each head's ratio (L ∝ a)"},
       EpsParameter(),
       {"height", 3.0, 1.5, 100.0, false, "κ: f − g approaches κε at long lengths"}},
      BuildNested};
}

}  // namespace construct
}  // namespace ltsim
