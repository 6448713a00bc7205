// `Certify`: agreement of a one-layer pair at every length, or its exact first disagreement
// (docs/theory.md §12). Lengths ≤ T₀ go to the exact threshold; longer ones to a branch and
// bound over boxes of frequencies ν = n/F and reciprocal far lengths e = 1/F ∈ [0, 1/F₀].
#include "ltsim/threshold/certify.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"
#include "ltsim/strings/source.h"
#include "threshold/cells.h"
#include "threshold/limits.h"
#include "threshold/relaxation.h"
#include "threshold/statistics.h"

namespace ltsim {

const char* CertifyVerdictName(CertifyVerdict verdict) {
  switch (verdict) {
    case CertifyVerdict::kAgrees:
      return "agrees-at-every-length";
    case CertifyVerdict::kDisagrees:
      return "disagrees";
    case CertifyVerdict::kUndecided:
      return "undecided";
  }
  return "undecided";
}

namespace threshold {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// F_hi of a box that reaches every longer length (e_lo = 0, the closure's boundary).
constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();
/// Representatives are evaluated at F ≤ this (counts stay exact in doubles).
constexpr std::uint64_t kLargestRepresentative = std::uint64_t{1} << 50;
/// Agreement: the certified bound ≤ ε + this, so no string disagrees by the threshold's rule
/// (gap > ε + kThresholdGapTolerance·max(1, ‖f‖, ‖g‖), whose slack is at least 10⁻⁹).
constexpr double kAgreementSlack = kThresholdGapTolerance;
/// Rounding slack of the box propagation (relative to frequencies ≤ 1).
constexpr double kSlack = 1e-12;

// One context of the joint view: T ≡ residue (mod Δ*), the last m = τ*+1 tokens.
struct LimitContext {
  ContextKey key;
  PairTable table;
  std::uint64_t far_residue = 0;  // F ≡ this (mod Δ*), F = T − m
};

// A box: far frequencies ν_κ = n_κ/F ∈ [lo_κ, hi_κ], F ∈ [F_lo, F_hi] (F_hi = kUnbounded: every
// longer length), types known present (n_κ ≥ 1 ⇔ ν_κ ≥ e = 1/F) or absent (hi = 0).
struct Box {
  int context = 0;
  std::vector<double> lo, hi;
  std::vector<char> present;
  std::uint64_t F_lo = 1, F_hi = kUnbounded;
  double upper = kInf;
  std::uint64_t id = 0;  // creation order: ties of `upper` pop in it
};

struct BoxOrder {
  bool operator()(const Box& a, const Box& b) const {
    return a.upper < b.upper || (a.upper == b.upper && a.id > b.id);
  }
};

double ELo(const Box& b) { return b.F_hi == kUnbounded ? 0.0 : 1.0 / static_cast<double>(b.F_hi); }
double EHi(const Box& b) { return 1.0 / static_cast<double>(b.F_lo); }

// A time budget as elapsed seconds compared as doubles (as threshold's StopWatch does): no
// conversion of the budget to a clock duration, which overflows above ~9.2e9 s.
struct Deadline {
  std::chrono::steady_clock::time_point start;
  double seconds;
  bool Passed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
           seconds;
  }
};

class LimitSearch {
 public:
  LimitSearch(const Transformer& f, const Transformer& g, const JointView& view,
              const CertifyOptions& options)
      : f_(f), g_(g), view_(view), o_(options) {
    S_ = view.alphabet;
    R_ = view.period;
    D_ = S_ * R_;
    m_ = view.locality + 1;
    std::uint64_t suffixes = 1;
    for (int t = 0; t < m_; ++t) suffixes *= static_cast<std::uint64_t>(S_);
    for (int rho = 0; rho < R_; ++rho)
      for (std::uint64_t code = 0; code < suffixes; ++code) {
        LimitContext c;
        c.key.residue = rho;
        c.key.suffix.assign(m_, 0);
        std::uint64_t x = code;
        for (int t = m_ - 1; t >= 0; --t) {
          c.key.suffix[t] = static_cast<int>(x % S_);
          x /= S_;
        }
        c.key.length = static_cast<std::uint64_t>(m_) + 1;  // β(T) unused: no `log` scaling
        c.table = BuildPairTable(f, g, view, c.key);
        c.far_residue = static_cast<std::uint64_t>(((rho - m_) % R_ + R_) % R_);
        contexts_.push_back(std::move(c));
      }
    sigma_c_ = static_cast<double>(R_ - 1) / R_;
  }

  enum class Outcome { kBelow, kAbove, kBracket, kStuck, kBudget, kTime, kNeedLonger };

  struct Report {
    Outcome outcome = Outcome::kBudget;
    double upper = kInf;  // certified: every statistic of length > m + F₀ − 1 … (all boxes)
    double lower = 0.0;   // attained by `best`
    CertifyStatistic best;
    std::uint64_t longer = 0;  // kNeedLonger: raise T₀ to this
    std::uint64_t boxes = 0;
  };

  // Refines the boxes of every context over F ≥ F0 until ε is outside the bracket [lower,
  // upper] of the supremum, the bracket is within the tolerance, or the budget is spent. With
  // `extend_to` > 0, a finite range of lengths on top with F_hi + m ≤ extend_to is handed back
  // (kNeedLonger) for the exact threshold instead of being split.
  // `deadline` (when set): the time after which it stops as for the box budget (kTime).
  Report Run(std::uint64_t F0, double epsilon, bool decide, std::uint64_t extend_to,
             std::uint64_t budget, std::uint64_t done,
             std::optional<Deadline> deadline = std::nullopt) {
    Report rep;
    done_ = done;
    std::priority_queue<Box, std::vector<Box>, BoxOrder> heap;
    double stuck = -kInf;  // boxes that cannot be split further
    for (int c = 0; c < static_cast<int>(contexts_.size()); ++c) {
      Box b;
      b.context = c;
      b.lo.assign(D_, 0.0);
      b.hi.assign(D_, 1.0);
      b.present.assign(D_, 0);
      b.F_lo = std::max<std::uint64_t>(F0, 1);
      Push(b, heap, rep, stuck);
    }
    while (true) {
      const double top = heap.empty() ? -kInf : heap.top().upper;
      rep.upper = std::max({top, stuck, 0.0});
      if (decide && rep.best.length != 0 && Disagrees(rep.lower, epsilon, best_f_, best_g_)) {
        rep.outcome = Outcome::kAbove;
        return rep;
      }
      if (rep.upper <= epsilon + kAgreementSlack && decide) {
        rep.outcome = Outcome::kBelow;
        return rep;
      }
      if (rep.upper - rep.lower <= o_.tolerance) {
        rep.outcome = Outcome::kBracket;
        return rep;
      }
      if (heap.empty() || top < stuck) {  // the largest bound is a box too small to split
        rep.outcome = Outcome::kStuck;
        return rep;
      }
      if (rep.boxes >= budget) {
        rep.outcome = Outcome::kBudget;
        return rep;
      }
      if (deadline && deadline->Passed()) {
        rep.outcome = Outcome::kTime;
        return rep;
      }
      Box b = heap.top();
      heap.pop();
      if (extend_to > 0 && b.F_hi != kUnbounded && b.F_hi + m_ <= extend_to) {
        rep.outcome = Outcome::kNeedLonger;
        rep.longer = b.F_hi + m_;
        return rep;
      }
      const std::uint64_t before = rep.boxes;
      Split(b, heap, rep, stuck);
      if (o_.progress && rep.boxes / 1024 != before / 1024)
        o_.progress(done_ + rep.boxes,
                    fmt::format("limit search, T > {}: attained {:.9g}, certified bound {:.9g}",
                                F0 + m_ - 1, rep.lower, rep.upper));
    }
  }

 private:
  // Σ_s ν_(s,r) = N_r/F ∈ 1/Δ ± (Δ−1)/(Δ·F) and ν_κ ≥ e for present types: tightens the box;
  // false when it holds no point.
  bool Propagate(Box& b) const {
    for (int pass = 0; pass < 3; ++pass) {
      for (int k = 0; k < D_; ++k)
        if (b.present[k] && b.hi[k] > 0.0) {
          // n ≥ 1 ⇒ ν ≥ 1/F ≥ e_lo, and F ≥ 1/ν ≥ 1/hi.
          b.lo[k] = std::max(b.lo[k], ELo(b) * (1.0 - kSlack));
          const double need = std::ceil((1.0 / b.hi[k]) * (1.0 - kSlack));
          if (need > static_cast<double>(b.F_lo)) {
            if (need >= static_cast<double>(kUnbounded)) return false;
            b.F_lo = static_cast<std::uint64_t>(need);
          }
        } else if (b.present[k]) {
          return false;
        }
      if (b.F_lo > b.F_hi) return false;
      const double sig_lo = 1.0 / R_ - sigma_c_ * EHi(b) - kSlack;
      const double sig_hi = 1.0 / R_ + sigma_c_ * EHi(b) + kSlack;
      for (int r = 0; r < R_; ++r) {
        double sum_lo = 0.0, sum_hi = 0.0;
        for (int s = 0; s < S_; ++s) {
          sum_lo += b.lo[r * S_ + s];
          sum_hi += b.hi[r * S_ + s];
        }
        if (sum_lo > sig_hi || sum_hi < sig_lo) return false;
        for (int s = 0; s < S_; ++s) {
          double& lo = b.lo[r * S_ + s];
          double& hi = b.hi[r * S_ + s];
          lo = std::max(lo, sig_lo - (sum_hi - hi) - kSlack);
          hi = std::min(hi, sig_hi - (sum_lo - lo) + kSlack);
          lo = std::max(lo, 0.0);
          hi = std::min(hi, 1.0);
          if (lo > hi) {
            if (lo - hi > 4 * kSlack) return false;
            lo = hi;
          }
        }
      }
    }
    return true;
  }

  // Per-slot weight intervals of every head on the box (docs/theory.md §12.3); for hardmax and
  // finite precision the largest present logit a* must be fixed, else the type that could
  // raise it is returned (≥ 0) to be split into absent and present.
  int Weights(const Box& b, const LimitContext& c) {
    const int slots = c.table.slots;
    const double T_lo = static_cast<double>(b.F_lo + m_);
    const bool unbounded = b.F_hi == kUnbounded;
    const double T_hi = unbounded ? kInf : static_cast<double>(b.F_hi + m_);
    for (int s = 0; s < 2; ++s) {
      const ModelTable& mt = c.table.side[s];
      const Layer& layer = *mt.layer;
      const double theta = mt.model->tie_tolerance;
      wlo_[s].resize(mt.heads.size());
      whi_[s].resize(mt.heads.size());
      for (std::size_t h = 0; h < mt.heads.size(); ++h) {
        const HeadTable& head = mt.heads[h];
        double sure = -kInf, possible = -kInf;
        for (int j = 0; j < slots; ++j) {
          const bool is_sure = j >= D_ || b.present[j] || b.lo[j] > 0.0;
          const bool is_possible = j >= D_ || b.hi[j] > 0.0;
          if (is_sure) sure = std::max(sure, head.logit[j]);
          if (is_possible) possible = std::max(possible, head.logit[j]);
        }
        if (layer.attention != Attention::kSoftmax && sure != possible) {
          int split = -1;
          for (int j = 0; j < D_; ++j)
            if (!b.present[j] && b.lo[j] == 0.0 && b.hi[j] > 0.0 && head.logit[j] > sure &&
                (split < 0 || head.logit[j] > head.logit[split]))
              split = j;
          LTSIM_CHECK(split >= 0);
          return split;
        }
        const double a_max = layer.attention == Attention::kSoftmax ? possible : sure;
        std::vector<double>& lo = wlo_[s][h];
        std::vector<double>& hi = whi_[s][h];
        lo.assign(slots, 0.0);
        hi.assign(slots, 0.0);
        for (int j = 0; j < slots; ++j) {
          if (j < D_ && b.hi[j] == 0.0) continue;
          const double a = head.logit[j];
          if (layer.attention != Attention::kFinite) {
            lo[j] = hi[j] = AttentionWeight(layer, theta, a, a_max, T_lo);
            continue;
          }
          // T^(a − a*) with the p-bit cut-off is non-increasing in T (a ≤ a*): its values at
          // the box's shortest and longest lengths bound it; at T = ∞ only ties survive.
          hi[j] = AttentionWeight(layer, theta, a, a_max, T_lo);
          lo[j] =
              unbounded ? (a >= a_max ? 1.0 : 0.0) : AttentionWeight(layer, theta, a, a_max, T_hi);
        }
      }
    }
    return -1;
  }

  // α's interval per slot of one head on the box (docs/theory.md §12.3).
  void AlphaBox(const Box& b, const std::vector<double>& wlo, const std::vector<double>& whi,
                int slots, std::vector<double>& a_lo, std::vector<double>& a_hi) const {
    const double e_lo = ELo(b), e_hi = EHi(b);
    a_lo.assign(slots, 0.0);
    a_hi.assign(slots, 0.0);
    std::vector<char> pres(D_);
    double far_hi = 0.0, suf_hi = 0.0, suf_lo = 0.0;
    for (int k = 0; k < D_; ++k) {
      pres[k] = b.present[k] || b.lo[k] > 0.0;
      far_hi += whi[k] * b.hi[k];
    }
    for (int j = D_; j < slots; ++j) {
      suf_hi += whi[j];
      suf_lo += wlo[j];
    }
    // Σ_{far i ≠ skip} wlo_i·max(lo_i, [present_i]·e)
    const auto far_low = [&](double e, int skip) {
      double z = 0.0;
      for (int i = 0; i < D_; ++i)
        if (i != skip) z += wlo[i] * std::max(b.lo[i], pres[i] ? e : 0.0);
      return z;
    };
    for (int k = 0; k < D_; ++k) {
      if (b.hi[k] == 0.0 || whi[k] == 0.0) continue;
      double others_hi = 0.0;  // summed, not by difference: no cancellation
      for (int i = 0; i < D_; ++i)
        if (i != k) others_hi += whi[i] * b.hi[i];
      // lower: w·max(lo, e)/(w·max(lo, e) + others + e·W) falls in e up to lo, rises after
      const double e = pres[k] ? std::clamp(b.lo[k], e_lo, e_hi) : e_hi;
      const double num = wlo[k] * std::max(b.lo[k], pres[k] ? e : 0.0);
      const double den = num + std::max(others_hi, 0.0) + e * suf_hi;
      if (num > 0.0) {
        a_lo[k] = num / den;
      } else if (pres[k] && others_hi <= 0.0 && wlo[k] > 0.0) {
        a_lo[k] = wlo[k] / (wlo[k] + suf_hi);  // e → 0 with ν = e: the ratio stays w/(w + W)
      }
      // upper: every other mass is non-decreasing in e, so e = e_lo
      const double top = whi[k] * b.hi[k];
      const double rest = far_low(e_lo, k) + e_lo * suf_lo;
      a_hi[k] = rest > 0.0 ? std::min(1.0, top / (top + rest)) : 1.0;
    }
    const double far_lo_at_hi = far_low(e_hi, -1);
    for (int j = D_; j < slots; ++j) {
      if (whi[j] == 0.0) continue;
      // lower: e·w/(far + e·(W_others + w)) rises in e: at e_lo
      const double w_others_hi = suf_hi - whi[j];
      if (e_lo > 0.0) {
        a_lo[j] = e_lo * wlo[j] / (far_hi + e_lo * (std::max(w_others_hi, 0.0) + wlo[j]));
      } else if (far_hi <= 0.0 && wlo[j] > 0.0) {
        a_lo[j] = wlo[j] / (std::max(w_others_hi, 0.0) + wlo[j]);
      }
      // upper: w/(Σ_far wlo·max(lo/e, [present]) + W_others + w) rises in e: at e_hi
      const double den = far_lo_at_hi / e_hi + std::max(suf_lo - wlo[j], 0.0) + whi[j];
      a_hi[j] = den > 0.0 ? std::min(1.0, whi[j] / den) : 1.0;
    }
    for (int j = 0; j < slots; ++j) {  // rounding of the sums above: a relative 1e-12
      a_lo[j] = std::max(0.0, a_lo[j] * (1.0 - 1e-12) - 1e-15);
      if (a_hi[j] > 0.0) a_hi[j] = std::min(1.0, a_hi[j] * (1.0 + 1e-12) + 1e-15);
    }
  }

  // The certified bound on the gap over the box (docs/theory.md §12.4): attention classes with
  // their α boxes, then the relaxed bound of §11.6 over the box domain.
  double Bound(const Box& b, const LimitContext& c) {
    const PairTable& table = c.table;
    const int slots = table.slots;
    struct HeadInfo {
      int side, h, cls = -1;
      std::vector<double> lo, hi;
    };
    std::vector<HeadInfo> heads;
    for (int s = 0; s < 2; ++s)
      for (int h = 0; h < static_cast<int>(table.side[s].heads.size()); ++h) {
        HeadInfo info{s, h, -1, {}, {}};
        AlphaBox(b, wlo_[s][h], whi_[s][h], slots, info.lo, info.hi);
        heads.push_back(std::move(info));
      }
    const auto same_rule = [&](const HeadInfo& x, const HeadInfo& y) {
      const Layer& lx = *table.side[x.side].layer;
      const Layer& ly = *table.side[y.side].layer;
      if (lx.attention != ly.attention || lx.bias_scaling != ly.bias_scaling) return false;
      if (lx.attention == Attention::kFinite && lx.precision_bits != ly.precision_bits)
        return false;
      if (lx.attention == Attention::kHardmax &&
          table.side[x.side].model->tie_tolerance != table.side[y.side].model->tie_tolerance)
        return false;
      return table.side[x.side].heads[x.h].logit == table.side[y.side].heads[y.h].logit;
    };
    const auto same_constant = [&](const HeadInfo& x, const HeadInfo& y) {
      const auto& xl = wlo_[x.side][x.h];
      const auto& yl = wlo_[y.side][y.h];
      return xl == whi_[x.side][x.h] && yl == whi_[y.side][y.h] && xl == yl;
    };
    std::vector<AttentionClass> classes;
    for (std::size_t a = 0; a < heads.size(); ++a) {
      if (heads[a].cls >= 0) continue;
      heads[a].cls = static_cast<int>(classes.size());
      for (std::size_t z = a + 1; z < heads.size(); ++z)
        if (heads[z].cls < 0 &&
            (same_constant(heads[a], heads[z]) || same_rule(heads[a], heads[z])))
          heads[z].cls = heads[a].cls;
      AttentionClass cls;
      cls.lo.assign(slots, 0.0);
      cls.hi.assign(slots, 1.0);
      classes.push_back(std::move(cls));
    }
    for (const HeadInfo& info : heads) {
      AttentionClass& cls = classes[info.cls];
      cls.heads.emplace_back(info.side, info.h);
      for (int j = 0; j < slots; ++j) {  // one α: the intersection of the members' boxes
        cls.lo[j] = std::max(cls.lo[j], info.lo[j]);
        cls.hi[j] = std::min(cls.hi[j], info.hi[j]);
      }
    }
    for (AttentionClass& cls : classes)
      for (int j = 0; j < slots; ++j)
        if (cls.hi[j] > 0.0) cls.support.push_back(j);
    const double bound = RelaxedCellBound(table, classes, BoxDomain(classes, slots));
    return std::isfinite(bound) ? bound : kInf;
  }

  // A statistic near the box's centre at a length of the box (docs/theory.md §12.5): every
  // residue's N_r far positions split in proportion to the centre's frequencies.
  void Representative(const Box& b, const LimitContext& c, std::vector<std::uint64_t>& n,
                      std::uint64_t& F) const {
    double width = 1.0;
    for (int k = 0; k < D_; ++k)
      if (b.hi[k] > b.lo[k]) width = std::min(width, b.hi[k] - b.lo[k]);
    const double want =
        std::min(std::ceil(4.0 / width), static_cast<double>(kLargestRepresentative));
    const std::uint64_t top = std::min(b.F_hi, kLargestRepresentative);
    F = std::clamp(static_cast<std::uint64_t>(want), std::min(b.F_lo, top), top);
    const std::uint64_t R = static_cast<std::uint64_t>(R_);
    F += (c.far_residue + R - F % R) % R;
    if (F > top && F > R) F -= R;
    n.assign(D_, 0);
    for (int r = 0; r < R_; ++r) {
      const std::uint64_t N = ClassSize(F, R_, r);
      double total = 0.0;
      for (int s = 0; s < S_; ++s) total += 0.5 * (b.lo[r * S_ + s] + b.hi[r * S_ + s]);
      std::uint64_t used = 0;
      std::vector<std::pair<double, int>> rest;
      for (int s = 0; s < S_; ++s) {
        const int k = r * S_ + s;
        if (b.hi[k] == 0.0) continue;
        const double share = total > 0.0 ? 0.5 * (b.lo[k] + b.hi[k]) / total : 1.0 / S_;
        const double want_k = share * static_cast<double>(N);
        const std::uint64_t v =
            std::min<std::uint64_t>(N - used, static_cast<std::uint64_t>(want_k));
        n[k] = v;
        used += v;
        rest.emplace_back(want_k - static_cast<double>(v), k);
      }
      std::sort(rest.begin(), rest.end(), [](const auto& x, const auto& y) {
        return x.first > y.first || (x.first == y.first && x.second < y.second);
      });
      for (std::size_t q = 0; used < N && !rest.empty(); q = (q + 1) % rest.size()) {
        ++n[rest[q].second];
        ++used;
      }
      if (used < N) n[r * S_] += N - used;  // every type absent: a statistic all the same
      for (int s = 0; s < S_; ++s) {        // present types take one from the largest
        const int k = r * S_ + s;
        if (!b.present[k] || n[k] > 0) continue;
        int from = -1;
        for (int t = 0; t < S_; ++t)
          if (n[r * S_ + t] > 1 && (from < 0 || n[r * S_ + t] > n[from])) from = r * S_ + t;
        if (from >= 0) {
          --n[from];
          ++n[k];
        }
      }
    }
  }

  // Evaluates the representative and records it when its gap is the largest attained.
  void Attain(const Box& b, Report& rep) {
    const LimitContext& c = contexts_[b.context];
    std::vector<std::uint64_t> n;
    std::uint64_t F = 0;
    Representative(b, c, n, F);
    const std::uint64_t T = F + static_cast<std::uint64_t>(m_);
    EvaluateSide(c.table.side[0], D_, n, T, value_[0]);
    EvaluateSide(c.table.side[1], D_, n, T, value_[1]);
    const double gap = OutputGap(value_[0].out, value_[1].out);
    if (!(gap > rep.lower) && rep.best.length != 0) return;
    rep.lower = gap;
    best_f_ = value_[0].out;
    best_g_ = value_[1].out;
    rep.best.length = T;
    rep.best.gap = gap;
    rep.best.counts.alphabet = S_;
    rep.best.counts.period = R_;
    rep.best.counts.locality = view_.locality;
    rep.best.counts.length = T;
    rep.best.counts.far = n;
    rep.best.counts.suffix.assign(c.key.suffix.begin(), c.key.suffix.end());
  }

  // Bounds a box (splitting off presence first) and queues it.
  void Push(Box b, std::priority_queue<Box, std::vector<Box>, BoxOrder>& heap, Report& rep,
            double& stuck) {
    if (!Propagate(b)) return;
    const LimitContext& c = contexts_[b.context];
    const int split = Weights(b, c);
    if (split >= 0) {
      Box absent = b, present = b;
      absent.lo[split] = absent.hi[split] = 0.0;
      present.present[split] = 1;
      Push(std::move(absent), heap, rep, stuck);
      Push(std::move(present), heap, rep, stuck);
      return;
    }
    ++rep.boxes;
    b.upper = Bound(b, c);
    Attain(b, rep);
    b.id = next_id_++;
    if (!Splittable(b)) {
      stuck = std::max(stuck, b.upper);
      return;
    }
    heap.push(std::move(b));
  }

  bool Splittable(const Box& b) const {
    if (b.F_hi > b.F_lo) return true;
    for (int k = 0; k < D_; ++k)
      if (b.hi[k] - b.lo[k] > 1e-13) return true;
    return false;
  }

  // Halves the frequency whose range moves the attention most, or splits the lengths when
  // the suffix's share (at most e_hi·W over the far mass) moves it more.
  void Split(const Box& b, std::priority_queue<Box, std::vector<Box>, BoxOrder>& heap, Report& rep,
             double& stuck) {
    const LimitContext& c = contexts_[b.context];
    Weights(b, c);  // the box's own weights (its presence is settled)
    std::vector<double> score(D_, 0.0);
    double score_F = 0.0;
    for (int s = 0; s < 2; ++s)
      for (std::size_t h = 0; h < wlo_[s].size(); ++h) {
        const auto& lo = wlo_[s][h];
        const auto& hi = whi_[s][h];
        double z = 0.0, z_hi = 0.0, suf = 0.0;
        for (int k = 0; k < D_; ++k) {
          z += lo[k] * b.lo[k];
          z_hi += hi[k] * b.hi[k];
        }
        for (int j = D_; j < c.table.slots; ++j) suf += hi[j];
        z = std::max(z, 1e-3 * z_hi);
        if (!(z > 0.0)) z = 1.0;
        for (int k = 0; k < D_; ++k) score[k] += hi[k] * (b.hi[k] - b.lo[k]) / z;
        score_F += EHi(b) * (1.0 - ELo(b) / EHi(b)) * suf / z;
      }
    int best = -1;
    double top = b.F_hi > b.F_lo ? score_F : -1.0;
    for (int k = 0; k < D_; ++k)
      if (b.hi[k] - b.lo[k] > 1e-13 && score[k] > top) {
        top = score[k];
        best = k;
      }
    if (best < 0 && !(b.F_hi > b.F_lo)) {
      stuck = std::max(stuck, b.upper);
      return;
    }
    Box low = b, high = b;
    if (best < 0) {
      // [F_lo, F_mid − 1] and [F_mid, F_hi]; an unbounded range: ×8.
      const std::uint64_t mid = b.F_hi == kUnbounded
                                    ? (b.F_lo > kUnbounded / 16 ? b.F_lo + 1 : 8 * b.F_lo)
                                    : b.F_lo + (b.F_hi - b.F_lo + 1) / 2;
      low.F_hi = mid - 1;
      high.F_lo = mid;
    } else {
      const double mid = 0.5 * (b.lo[best] + b.hi[best]);
      low.hi[best] = mid;
      high.lo[best] = mid;
    }
    Push(std::move(low), heap, rep, stuck);
    Push(std::move(high), heap, rep, stuck);
  }

  const Transformer& f_;
  const Transformer& g_;
  JointView view_;
  const CertifyOptions& o_;
  int S_ = 0, R_ = 0, D_ = 0, m_ = 0;
  double sigma_c_ = 0.0;
  std::vector<LimitContext> contexts_;
  std::vector<std::vector<double>> wlo_[2], whi_[2];
  SideValue value_[2];
  std::vector<double> best_f_, best_g_;
  std::uint64_t next_id_ = 0;
  std::uint64_t done_ = 0;  // boxes of earlier runs (progress)
};

void CheckCertify(const Transformer& f, const Transformer& g, const CertifyOptions& o) {
  if (!std::isfinite(o.epsilon) || o.epsilon < 0.0)
    throw OptionError("epsilon", fmt::format("must be finite and ≥ 0, not {}", o.epsilon));
  if (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    throw OptionError("tolerance", fmt::format("must be finite and > 0, not {}", o.tolerance));
  if (o.max_exact_length < 1 || o.max_exact_length > kThresholdMaxLength)
    throw OptionError("max_exact_length",
                      fmt::format("must be in [1, {}] (the threshold limit)", kThresholdMaxLength),
                      std::to_string(o.max_exact_length));
  if (o.initial_length < 1 || o.initial_length > o.max_exact_length)
    throw OptionError(
        "initial_length",
        fmt::format("must be in [1, {}] (the largest exact length)", o.max_exact_length),
        std::to_string(o.initial_length));
  if (o.max_boxes < 1) throw OptionError("max_boxes", "must be at least 1");
  if (!(o.time_budget >= 0.0) || !std::isfinite(o.time_budget))
    throw OptionError("time_budget", fmt::format("must be finite and ≥ 0, not {}", o.time_budget));
  if (f.layers.size() != 1 || g.layers.size() != 1)
    throw InputError(fmt::format(
        "certify: one-layer pairs only (F has {} layers, G has {}): a two-layer model's output "
        "is not a function of type counts (docs/theory.md §11.5)",
        f.layers.size(), g.layers.size()));
  for (const Transformer* m : {&f, &g})
    if (m->layers.front().bias_scaling == BiasScaling::kLog)
      throw InputError(fmt::format(
          "certify: model '{}' scales its bias by ln T; certify handles bias_scaling none only "
          "(docs/theory.md §12.7)",
          m->name));
  ThresholdOptions t;
  t.epsilon = o.epsilon;
  t.max_length = 1;
  CheckCommon(f, g, t);
  const auto [period, locality] = CheckTypeLimits(f, g);
  std::uint64_t contexts = static_cast<std::uint64_t>(period);
  for (int q = 0; q <= locality; ++q) contexts = SaturatingMul(contexts, f.alphabet);
  if (contexts > kCertifyMaxContexts)
    throw InputError(
        fmt::format("certify: Δ*·S^(τ*+1) = {}·{}^{} contexts, over the limit search's limit of {}",
                    period, f.alphabet, locality + 1, kCertifyMaxContexts));
}

// The string Realise builds, as runs: directly for Δ = 1 (one run a token, then the suffix),
// through the tokens up to kThresholdMaxLength, else none (the statistic is reported instead).
std::vector<Run> RunsOf(const TypeCounts& counts) {
  if (counts.period == 1) {
    std::vector<Run> runs;
    const auto add = [&](Token t, std::uint64_t c) {
      if (c == 0) return;
      if (!runs.empty() && runs.back().token == t) {
        runs.back().count += c;
      } else {
        runs.push_back({t, c});
      }
    };
    for (int s = 0; s < counts.alphabet; ++s) add(static_cast<Token>(s), counts.far[s]);
    for (Token t : counts.suffix) add(t, 1);
    return runs;
  }
  if (counts.length > kThresholdMaxLength) return {};
  return ToRuns(Realise(counts));
}

}  // namespace
}  // namespace threshold

const char* CertifyStopName(CertifyStop stop) {
  switch (stop) {
    case CertifyStop::kNone:
      return "none";
    case CertifyStop::kTimeBudget:
      return "time budget";
    case CertifyStop::kBoxBudget:
      return "box budget";
    case CertifyStop::kEvaluationBudget:
      return "evaluation budget";
  }
  return "none";
}

void CheckCertifyInputs(const Transformer& f, const Transformer& g, const CertifyOptions& options) {
  threshold::CheckCertify(f, g, options);
}

CertifyResult Certify(const Transformer& f, const Transformer& g, const CertifyOptions& options) {
  using namespace threshold;
  CheckCertify(f, g, options);
  const auto start = std::chrono::steady_clock::now();
  CertifyResult result;
  result.view = JointViewOf({&f, &g});
  result.tolerance = options.tolerance;
  if (SameFunction(f, g)) {
    // Equal parameters: f(x) = g(x) for every string, so G* = 0 ≤ ε (§12.10). Every bound is 0.
    result.verdict = CertifyVerdict::kAgrees;
    result.identical = true;
    result.sup_gap_upper = 0.0;
    result.limit_bound = 0.0;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  const std::uint64_t m = static_cast<std::uint64_t>(result.view.locality) + 1;
  LimitSearch limit(f, g, result.view, options);
  // The limit search stops at the time budget too (the exact runs get what is left of it).
  std::optional<Deadline> deadline;
  if (options.time_budget > 0.0) deadline = Deadline{start, options.time_budget};
  const auto note = [&](const std::string& line) {
    if (options.progress) options.progress(result.boxes, line);
  };
  bool confirming = false;  // the exact run confirms a disagreement of the limit search
  const auto exact = [&](std::uint64_t N, std::uint64_t budget) {
    ThresholdOptions t;
    t.epsilon = options.epsilon;
    t.max_length = N;
    t.max_evaluations = budget;
    t.seed = options.seed;
    t.threads = options.threads;
    if (options.time_budget > 0.0) {
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      t.time_budget = std::max(1e-3, options.time_budget - spent);
    }
    ++result.threshold_runs;
    if (options.progress)
      t.progress = [&](std::uint64_t done, std::uint64_t total, std::uint64_t, double) {
        note(fmt::format("exact threshold: lengths 1 … {} of {}", done, total));
      };
    ThresholdResult r = FindThreshold(f, g, t);
    result.threshold_evaluations += r.evaluations;
    if (!r.complete && r.stopped != ThresholdStop::kNone) {
      result.exact_stopped = r.stopped;
      result.exact_stopped_at = r.checked_up_to;
      result.exact_stopped_confirming = confirming;
    }
    return r;
  };
  // The attained gaps and certified bounds of an exact run.
  const auto take_exact = [&](const ThresholdResult& r) {
    result.exact_up_to = r.checked_up_to;
    result.exact_bound = r.max_pruned_bound;
    for (std::size_t t = 0; t < r.max_gap_per_length.size(); ++t) {
      const double gap = r.max_gap_per_length[t];
      if (std::isnan(gap)) continue;
      result.exact_bound = std::max(result.exact_bound, gap);
      if (gap > result.sup_gap_lower) {
        result.sup_gap_lower = gap;
        result.lower_statistic = CertifyStatistic{};
        result.lower_statistic.length = t + 1;
        result.lower_statistic.gap = gap;
      }
    }
  };
  const auto take_limit = [&](const LimitSearch::Report& rep) {
    result.boxes += rep.boxes;
    result.limit_bound = rep.upper;
    if (rep.best.length != 0 && rep.lower > result.sup_gap_lower) {
      result.sup_gap_lower = rep.lower;
      result.lower_statistic = rep.best;
    }
  };
  const auto finish = [&] {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  // A disagreement below T₀: exact, and the limit search bounds the supremum over every
  // length ≥ m + 1 (lengths ≤ m were evaluated in full by the threshold).
  const auto disagrees_at = [&](const ThresholdResult& r) {
    take_exact(r);
    result.verdict = CertifyVerdict::kDisagrees;
    result.first_disagreement = r.first_disagreement;
    result.witness = r.witness;
    result.witness_gap = r.gap;
    if (r.gap > result.sup_gap_lower) {
      result.sup_gap_lower = r.gap;
      result.lower_statistic = CertifyStatistic{};
      result.lower_statistic.length = *r.first_disagreement;
      result.lower_statistic.gap = r.gap;
    }
    // The lengths ≤ m hold no far keys: their largest gaps, evaluated string by string. The
    // run that found T* stopped there, so when T* < m the lengths T* + 1 … m are enumerated
    // here (at most Δ*·S^m ≤ 2^16 strings a length, §12.7), with an ε no gap exceeds.
    std::vector<double> short_gaps = r.max_gap_per_length;
    if (r.checked_up_to < m) {
      ThresholdOptions t;
      t.epsilon = std::numeric_limits<double>::max();
      t.max_length = m;
      t.prune = false;
      t.max_evaluations = options.exact_evaluations;
      t.seed = options.seed;
      t.threads = options.threads;
      ++result.threshold_runs;
      const ThresholdResult all = FindThreshold(f, g, t);
      result.threshold_evaluations += all.evaluations;
      short_gaps = all.checked_up_to >= m
                       ? all.max_gap_per_length
                       : std::vector<double>(m, std::numeric_limits<double>::infinity());
    }
    double short_max = 0.0;
    for (std::size_t t = 0; t < std::min<std::size_t>(m, short_gaps.size()); ++t)
      if (!std::isnan(short_gaps[t])) short_max = std::max(short_max, short_gaps[t]);
    const LimitSearch::Report rep =
        limit.Run(1, options.epsilon, false, 0, std::max<std::uint64_t>(1, options.max_boxes / 200),
                  result.boxes, deadline);
    take_limit(rep);
    result.sup_gap_upper = std::max({short_max, rep.upper, result.sup_gap_lower});
    return finish();
  };

  std::uint64_t cap = std::max(options.max_exact_length, m);
  std::uint64_t T0 = std::max(options.initial_length, m);
  bool first = true;
  while (true) {
    // The first run is complete; a raised T₀ is searched within the extension budget, and
    // where that stops becomes T₀ and the largest one (the limit search takes over there).
    const ThresholdResult r =
        exact(T0, first ? options.exact_evaluations : options.extension_evaluations);
    if (r.first_disagreement) return disagrees_at(r);
    if (!r.complete && r.checked_up_to < m) {  // not even the lengths without far keys
      result.verdict = CertifyVerdict::kUndecided;
      const bool timed = r.stopped == ThresholdStop::kTimeBudget;
      result.reason = timed ? "time budget" : "budget";
      result.stopped_by = timed ? CertifyStop::kTimeBudget : CertifyStop::kEvaluationBudget;
      result.exact_up_to = r.checked_up_to;
      return finish();
    }
    if (!r.complete) {
      cap = std::max(result.exact_up_to, r.checked_up_to);
      T0 = cap;
      if (r.checked_up_to >= result.exact_up_to) take_exact(r);
    } else {
      take_exact(r);
    }
    first = false;
    const bool can_extend = T0 < cap;
    const LimitSearch::Report rep =
        limit.Run(T0 + 1 - m, options.epsilon, true, can_extend ? cap : 0, options.max_boxes,
                  result.boxes, deadline);
    take_limit(rep);
    note(fmt::format("limit search, T > {}: attained {:.9g}, certified bound {:.9g}", T0, rep.lower,
                     rep.upper));
    if (rep.outcome == LimitSearch::Outcome::kNeedLonger) {
      T0 = std::min(cap, std::max(rep.longer, 8 * T0));
      continue;
    }
    result.sup_gap_upper = std::max(result.exact_bound, rep.upper);
    if (rep.outcome == LimitSearch::Outcome::kBelow) {
      result.verdict = CertifyVerdict::kAgrees;
      return finish();
    }
    if (rep.outcome == LimitSearch::Outcome::kAbove) {
      // A statistic of length L > T₀ disagrees: the exact threshold to min(L, its limit) finds
      // T* (≤ L), unless T* lies beyond that limit.
      const std::uint64_t L = rep.best.length;
      result.verdict = CertifyVerdict::kDisagrees;
      confirming = true;
      const ThresholdResult full = exact(std::min(L, cap), options.exact_evaluations);
      if (full.first_disagreement) {
        result.first_disagreement = full.first_disagreement;
        result.witness = full.witness;
        result.witness_gap = full.gap;
        if (full.gap > result.sup_gap_lower) {
          result.sup_gap_lower = full.gap;
          result.lower_statistic = CertifyStatistic{};
          result.lower_statistic.length = *full.first_disagreement;
          result.lower_statistic.gap = full.gap;
        }
        return finish();
      }
      if (L <= cap && full.complete) {
        // The threshold's own evaluation (sums in another order) put this statistic within
        // rounding of ε: a gap above ε attained, not a confirmed disagreement.
        result.verdict = CertifyVerdict::kUndecided;
        result.reason = "rounding";
        return finish();
      }
      result.first_disagreement_at_most = L;  // beyond the cap, or the exact budget spent
      result.witness_gap = rep.best.gap;
      result.witness = RunsOf(rep.best.counts);
      return finish();
    }
    result.verdict = CertifyVerdict::kUndecided;
    result.reason = rep.outcome == LimitSearch::Outcome::kBudget  ? "budget"
                    : rep.outcome == LimitSearch::Outcome::kTime  ? "time budget"
                    : rep.outcome == LimitSearch::Outcome::kStuck ? "resolution"
                                                                  : "tolerance";
    if (rep.outcome == LimitSearch::Outcome::kBudget) result.stopped_by = CertifyStop::kBoxBudget;
    if (rep.outcome == LimitSearch::Outcome::kTime) result.stopped_by = CertifyStop::kTimeBudget;
    return finish();
  }
}

}  // namespace ltsim
