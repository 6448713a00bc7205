// The linear-relaxation bounds on a cell of the one-layer threshold search (docs/theory.md
// §11.6): the gap as an affine function of the attention weights, each ReLU replaced by linear
// upper and lower bounds, maximised over a set that holds the cell's attention weights.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "threshold/cells.h"

namespace ltsim::threshold {

/// Heads (of either model) whose attention α is the same function on the cell, with the box
/// [lo_j, hi_j] (per slot) that holds α on every statistic of the cell (Σ_j α_j = 1) and, when
/// the per-key weights are constant on the cell, those weights.
struct AttentionClass {
  std::vector<std::pair<int, int>> heads;  ///< (side, head index)
  std::vector<int> support;                ///< the slots with hi > 0
  std::vector<double> lo, hi;              ///< [slot]
  bool constant_weights = false;           ///< weight[j] is every statistic's per-key weight
  std::vector<double> weight;              ///< [slot] (when constant_weights)
};

/// A set holding every statistic's attention weights (α_c)_c of a cell, on which linear
/// functions can be maximised.
class AttentionDomain {
 public:
  virtual ~AttentionDomain() = default;
  /// A certified upper bound on max over the set of Σ_c Σ_j α_cj·coef[c·slots + j] (coef
  /// zero outside the supports); `scale` gains the magnitude of the terms summed, for the
  /// caller's rounding slack.
  virtual double Maximise(const std::vector<double>& coef, double& scale) const = 0;
};

/// Every class's α independently in {Σ_j α_j = 1, lo ≤ α ≤ hi}: maximised slot by slot, every
/// slot at its lower end and the rest of the mass to the largest coefficients (exact on that
/// polytope).
class BoxDomain : public AttentionDomain {
 public:
  BoxDomain(const std::vector<AttentionClass>& classes, int slots)
      : classes_(classes), slots_(slots) {}
  double Maximise(const std::vector<double>& coef, double& scale) const override;

 private:
  const std::vector<AttentionClass>& classes_;
  int slots_;
};

/// The cell's counts themselves, for classes whose per-key weights are constant on the cell:
/// α_cj = w_j·m_j / Z_c(n) with m_j = n_j (far types) or 1 (suffix keys) and Z_c = Σ_j w_j·m_j.
/// For μ the midpoint of the coefficients' range and Z̄ the midpoint of Z_c's range over the
/// cell, Σ_j α_cj·C_j = μ + Σ_j w_j·m_j·(C_j − μ)/Z̄ + E with |E| ≤ ½·range(C)·η_c,
/// η_c = (Z_hi − Z_lo)/(Z_hi + Z_lo): affine in n, exact when Z_c is constant (a head that reads
/// whole residue classes, at one length). The affine part is maximised over the cell's counts
/// (lo ≤ n ≤ hi, Σ_s n_(s,r) = base_r + k for one integer k ∈ [k_lo, k_hi]), exactly for the
/// counts taken as reals: every classes' α is coupled through the same n, which the box loses.
class CountDomain : public AttentionDomain {
 public:
  /// `valid()` is false when a class's weights are not constant on the cell.
  CountDomain(const std::vector<AttentionClass>& classes, int slots, int alphabet, int period,
              const Cell& cell, const std::vector<std::int64_t>& base);
  bool valid() const { return valid_; }
  double Maximise(const std::vector<double>& coef, double& scale) const override;

 private:
  // max over the cell's counts of Σ_κ g_κ·n_κ (far types only).
  double CountMaximum(const std::vector<double>& g, double& scale) const;
  const std::vector<AttentionClass>& classes_;
  int slots_, S_, R_;
  const Cell& cell_;
  const std::vector<std::int64_t>& base_;
  bool valid_ = true;
  std::vector<double> z_mid_, eta_;  // [class]
};

/// A certified upper bound on max over the domain of ‖f − g‖_∞: each ReLU with pre-activation
/// range [l, u] (from the domain) is replaced by its chord from above and by λ·z,
/// λ ∈ {0, 1, u/(u − l)}, from below, and the resulting affine function of α is maximised over
/// the domain. Shared heads cancel, and the neurons of a bump, which all read one quantity, are
/// bounded together rather than by the sum of their slopes. +∞ when a number is not finite.
double RelaxedCellBound(const PairTable& table, const std::vector<AttentionClass>& classes,
                        const AttentionDomain& domain);

}  // namespace ltsim::threshold
