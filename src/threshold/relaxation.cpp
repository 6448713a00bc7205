// The linear-relaxation bounds on a cell of the threshold search (docs/theory.md §11.6).
#include "threshold/relaxation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ltsim::threshold {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Rounding of the bounds' own sums: a relative 1e-12 of the magnitudes summed (far below the
// 1e-9 verdict tolerance, as in CellBound).
constexpr double kRelative = 1e-12;

// How an undetermined ReLU (l < 0 < u) is bounded from below: λ·z for λ = 0, 1, u/(u − l).
enum class Lower { kZero, kIdentity, kChordSlope };

}  // namespace

double BoxDomain::Maximise(const std::vector<double>& coef, double& scale) const {
  double total = 0.0;
  std::vector<int> order;
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    const AttentionClass& cls = classes_[c];
    const double* v = &coef[c * static_cast<std::size_t>(slots_)];
    double value = 0.0, room = 1.0;
    for (int j : cls.support) {
      value += v[j] * cls.lo[j];
      room -= cls.lo[j];
      scale += std::abs(v[j]) * cls.hi[j];
    }
    order = cls.support;
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
    for (int j : order) {
      if (!(room > 0.0)) break;
      const double t = std::min(cls.hi[j] - cls.lo[j], room);
      value += v[j] * t;
      room -= t;
    }
    total += value;
  }
  return total;
}

CountDomain::CountDomain(const std::vector<AttentionClass>& classes, int slots, int alphabet,
                         int period, const Cell& cell, const std::vector<std::int64_t>& base)
    : classes_(classes), slots_(slots), S_(alphabet), R_(period), cell_(cell), base_(base) {
  const int D = S_ * R_;
  z_mid_.resize(classes.size());
  eta_.resize(classes.size());
  std::vector<double> w(D);
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const AttentionClass& cls = classes[c];
    if (!cls.constant_weights) {
      valid_ = false;
      return;
    }
    double suffix = 0.0, scale = 0.0;
    for (int j = 0; j < D; ++j) w[j] = cls.weight[j];
    for (int j = D; j < slots; ++j) suffix += cls.weight[j];
    const double z_hi = suffix + CountMaximum(w, scale);
    for (double& x : w) x = -x;
    const double z_lo = suffix - CountMaximum(w, scale);
    const double lo = z_lo * (1.0 - kRelative) - kRelative * scale;
    const double hi = z_hi * (1.0 + kRelative) + kRelative * scale;
    if (!(lo > 0.0) || !std::isfinite(hi)) {
      valid_ = false;
      return;
    }
    z_mid_[c] = 0.5 * (lo + hi);
    eta_[c] = (hi - lo) / (hi + lo);
  }
}

double CountDomain::CountMaximum(const std::vector<double>& g, double& scale) const {
  // Per residue r, φ_r(N) = max Σ_s g_(s,r)·n_(s,r) over lo ≤ n ≤ hi, Σ_s n = N: every count
  // at its lower end, the rest to the largest coefficients first. φ_r is concave in N, so
  // F(k) = Σ_r φ_r(base_r + k) is concave in k and its maximum over the integers of
  // [k_lo, k_hi] is found by bisecting the sign of F(k + 1) − F(k).
  std::vector<std::vector<int>> order(R_);
  for (int r = 0; r < R_; ++r) {
    order[r].resize(S_);
    for (int s = 0; s < S_; ++s) order[r][s] = r * S_ + s;
    std::sort(order[r].begin(), order[r].end(),
              [&](int a, int b) { return g[a] > g[b] || (g[a] == g[b] && a < b); });
    for (int s = 0; s < S_; ++s)
      scale += std::abs(g[r * S_ + s]) * static_cast<double>(cell_.hi[r * S_ + s]);
  }
  const auto F = [&](std::int64_t k) {
    double total = 0.0;
    for (int r = 0; r < R_; ++r) {
      double room = static_cast<double>(base_[r] + k);
      for (int s = 0; s < S_; ++s) {
        const int kappa = r * S_ + s;
        total += g[kappa] * static_cast<double>(cell_.lo[kappa]);
        room -= static_cast<double>(cell_.lo[kappa]);
      }
      for (int kappa : order[r]) {
        if (!(room > 0.0)) break;
        const double t = std::min(static_cast<double>(cell_.hi[kappa] - cell_.lo[kappa]), room);
        total += g[kappa] * t;
        room -= t;
      }
    }
    return total;
  };
  std::int64_t a = cell_.k_lo, b = cell_.k_hi;  // the maximum lies in [a, b]
  while (a < b) {
    const std::int64_t mid = a + (b - a) / 2;
    if (F(mid + 1) > F(mid)) {
      a = mid + 1;
    } else {
      b = mid;
    }
  }
  // Rounding can blur the bisection where F is flat; the neighbours cover it locally. A sign
  // misjudged at mid means |F(mid + 1) − F(mid)| ≤ 2·err (err: F's rounding, at most
  // (D + 2R)·ε·scale), and by concavity every increment beyond it is smaller still, so each of the
  // at most log₂(K) + 1 misjudgements loses at most 2·err·K: that much is added.
  double best = F(a);
  if (a > cell_.k_lo) best = std::max(best, F(a - 1));
  if (a < cell_.k_hi) best = std::max(best, F(a + 1));
  const double K = static_cast<double>(cell_.k_hi - cell_.k_lo) + 1.0;
  const double err = (S_ * R_ + 2.0 * R_) * std::numeric_limits<double>::epsilon() * scale;
  return best + 2.0 * err * K * (std::log2(K) + 1.0);
}

double CountDomain::Maximise(const std::vector<double>& coef, double& scale) const {
  const int D = S_ * R_;
  std::vector<double> g(D, 0.0);
  double value = 0.0, error = 0.0;
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    const AttentionClass& cls = classes_[c];
    if (cls.support.empty()) continue;
    const double* v = &coef[c * static_cast<std::size_t>(slots_)];
    double lo = kInf, hi = -kInf;
    for (int j : cls.support) {
      lo = std::min(lo, v[j]);
      hi = std::max(hi, v[j]);
    }
    const double mu = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
    value += mu;
    scale += std::abs(mu);
    for (int j : cls.support) {
      const double a = cls.weight[j] * (v[j] - mu) / z_mid_[c];
      if (j < D) {
        g[j] += a;
      } else {
        value += a;
        scale += std::abs(a);
      }
    }
    error += half * eta_[c];
    scale += half;
  }
  return value + CountMaximum(g, scale) + error;
}

double RelaxedCellBound(const PairTable& table, const std::vector<AttentionClass>& classes,
                        const AttentionDomain& domain) {
  const int slots = table.slots, C = static_cast<int>(classes.size());
  const int K = table.side[0].outputs;
  const std::size_t width = static_cast<std::size_t>(C) * slots;
  // q[s][i·width + c·slots + j]: the coefficient of α_(c, j) in the pre-activation z_i of side
  // s; [zlo, zhi]: z_i's range over the domain (widened by its rounding).
  std::vector<double> q[2], zlo[2], zhi[2], row(width);
  std::vector<double> q_magnitude[2];  // [s][i]: Σ |Q| over the terms summed into q[s]
  for (int s = 0; s < 2; ++s) {
    const ModelTable& mt = table.side[s];
    const int M = mt.neurons, H = static_cast<int>(mt.heads.size());
    q[s].assign(static_cast<std::size_t>(M) * width, 0.0);
    for (int c = 0; c < C; ++c)
      for (const auto& [side, h] : classes[c].heads) {
        if (side != s) continue;
        for (int i = 0; i < M; ++i) {
          const double* from = &mt.Q[(static_cast<std::size_t>(i) * H + h) * slots];
          double* to = &q[s][i * width + static_cast<std::size_t>(c) * slots];
          for (int j : classes[c].support) to[j] += from[j];
        }
      }
    zlo[s].resize(M);
    zhi[s].resize(M);
    q_magnitude[s].assign(M, 0.0);
    for (int c = 0; c < C; ++c)
      for (const auto& [side, h] : classes[c].heads) {
        if (side != s) continue;
        for (int i = 0; i < M; ++i)
          for (int j : classes[c].support)
            q_magnitude[s][i] += std::abs(mt.Q[(static_cast<std::size_t>(i) * H + h) * slots + j]);
      }
    for (int i = 0; i < M; ++i) {
      double scale = std::abs(mt.pre_base[i]) + q_magnitude[s][i];
      std::copy(q[s].begin() + i * width, q[s].begin() + (i + 1) * width, row.begin());
      const double hi = mt.pre_base[i] + domain.Maximise(row, scale);
      for (double& x : row) x = -x;
      const double lo = mt.pre_base[i] - domain.Maximise(row, scale);
      if (!std::isfinite(hi) || !std::isfinite(lo) || !std::isfinite(scale)) return kInf;
      const double slack = kRelative * scale + 1e-300;
      zlo[s][i] = lo - slack;
      zhi[s][i] = hi + slack;
    }
  }
  std::vector<double> base(width), coef(width);
  double worst = 0.0;
  for (int k = 0; k < K; ++k) {
    // (f_k − g_k) without the ReLUs: affine in α, what f and g share cancelling in base.
    std::fill(base.begin(), base.end(), 0.0);
    for (int c = 0; c < C; ++c)
      for (const auto& [side, h] : classes[c].heads) {
        const ModelTable& mt = table.side[side];
        const int H = static_cast<int>(mt.heads.size());
        const double sign = side == 0 ? 1.0 : -1.0;
        const double* p = &mt.P[(static_cast<std::size_t>(k) * H + h) * slots];
        for (int j : classes[c].support)
          base[static_cast<std::size_t>(c) * slots + j] += sign * p[j];
      }
    double base_magnitude = 0.0;
    for (int c = 0; c < C; ++c)
      for (const auto& [side, h] : classes[c].heads) {
        const ModelTable& mt = table.side[side];
        const int H = static_cast<int>(mt.heads.size());
        const double* p = &mt.P[(static_cast<std::size_t>(k) * H + h) * slots];
        for (int j : classes[c].support) base_magnitude += std::abs(p[j]);
      }
    const double base_const = table.side[0].out_base[k] - table.side[1].out_base[k];
    if (!std::isfinite(base_const)) return kInf;
    for (double dir : {1.0, -1.0}) {
      double best = kInf;
      for (Lower rule : {Lower::kZero, Lower::kIdentity, Lower::kChordSlope}) {
        bool lower_choice = false;  // some undetermined ReLU enters with a negative weight
        // scale gathers the magnitudes of every term summed into coef (α ≤ 1 slot by slot), so
        // the slack also covers the rounding of sums that cancel (f's and g's terms).
        for (std::size_t x = 0; x < width; ++x) coef[x] = dir * base[x];
        double value = dir * base_const, scale = std::abs(base_const) + base_magnitude;
        for (int s = 0; s < 2; ++s) {
          const ModelTable& mt = table.side[s];
          const int M = mt.neurons;
          for (int i = 0; i < M; ++i) {
            const double w =
                dir * (s == 0 ? 1.0 : -1.0) * mt.WB[static_cast<std::size_t>(k) * M + i];
            if (w == 0.0) continue;
            const double l = zlo[s][i], u = zhi[s][i];
            if (!std::isfinite(u - l)) return kInf;
            double slope = 0.0, intercept = 0.0;  // ReLU(z) ≤ or ≥ slope·z + intercept
            if (l >= 0.0) {
              slope = 1.0;
            } else if (u <= 0.0) {
              continue;
            } else if (w > 0.0) {
              slope = u / (u - l);  // the chord, from above
              intercept = -slope * l;
            } else {
              lower_choice = true;
              slope = rule == Lower::kZero ? 0.0 : rule == Lower::kIdentity ? 1.0 : u / (u - l);
            }
            if (slope == 0.0 && intercept == 0.0) continue;
            value += w * (intercept + slope * mt.pre_base[i]);
            scale += std::abs(w) * (std::abs(intercept) + slope * std::abs(mt.pre_base[i]));
            const double* from = &q[s][i * width];
            for (std::size_t x = 0; x < width; ++x) coef[x] += w * slope * from[x];
            scale += std::abs(w) * slope * q_magnitude[s][i];
          }
        }
        value += domain.Maximise(coef, scale);
        if (!std::isfinite(value) || !std::isfinite(scale)) return kInf;
        best = std::min(best, value + kRelative * scale);
        if (!lower_choice) break;  // the other rules give the same function
      }
      worst = std::max(worst, best);
    }
  }
  return worst;
}

}  // namespace ltsim::threshold
