// The one-layer threshold's tables, fast evaluation and certified cell bound (docs/theory.md §11).
#include "threshold/cells.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/rounding.h"
#include "threshold/relaxation.h"

namespace ltsim::threshold {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ModelTable BuildModelTable(const Transformer& model, const JointView& view, const ContextKey& key) {
  const int S = view.alphabet, D = S * view.period;
  const int m = static_cast<int>(key.suffix.size());
  const int slots = D + m;
  const Layer& layer = model.layers.front();
  ModelTable t;
  t.model = &model;
  t.layer = &layer;
  t.width = model.width;
  t.outputs = model.outputs();
  t.neurons = layer.mlp ? static_cast<int>(layer.mlp->in.rows()) : 0;
  // The last token sits at position T ≡ key.residue (mod Δ of the view), the key t back at
  // the view's residue (T − t) mod Δ; a model reads residue r of the view as r mod Δ_M (the
  // view's period is Δ* or a divisor of it on which both models' inputs depend, SearchPeriod).
  const auto suffix_residue = [&](int t) {
    return ((key.residue - t) % view.period + view.period) % view.period % model.period;
  };
  std::vector<Vector> keys;
  keys.reserve(slots);
  for (int kappa = 0; kappa < D; ++kappa)
    keys.push_back(InputVector(model, kappa % S, (kappa / S) % model.period));
  for (int t = 0; t < m; ++t)
    keys.push_back(InputVector(model, key.suffix[m - 1 - t], suffix_residue(t)));
  const Vector query = keys[D];
  t.query.assign(query.data(), query.data() + query.size());
  const double beta = BiasScale(layer.bias_scaling, static_cast<double>(key.length));
  const int d = model.width, H = static_cast<int>(layer.heads.size());
  for (const Head& head : layer.heads) {
    HeadTable h;
    const Vector mq = head.qk * query;
    h.logit.resize(slots);
    h.value.resize(static_cast<std::size_t>(slots) * d);
    for (int j = 0; j < slots; ++j) {
      const int t = j - D;  // suffix offset, or negative for a far type
      // A joint suffix position beyond the model's locality is a far key for the model.
      h.logit[j] = Logit(keys[j], mq, head, beta, t >= 0 && t <= model.locality ? t : -1);
      const Vector v = head.ov * keys[j];
      for (int i = 0; i < d; ++i) h.value[static_cast<std::size_t>(j) * d + i] = v[i];
    }
    t.heads.push_back(std::move(h));
  }
  // Projections for the bound.
  const int K = t.outputs, M = t.neurons;
  t.P.assign(static_cast<std::size_t>(K) * H * slots, 0.0);
  t.Q.assign(static_cast<std::size_t>(M) * H * slots, 0.0);
  t.WB.assign(static_cast<std::size_t>(K) * M, 0.0);
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < slots; ++j) {
      const double* v = &t.heads[h].value[static_cast<std::size_t>(j) * d];
      for (int k = 0; k < K; ++k) {
        double s = 0.0;
        for (int i = 0; i < d; ++i) s += model.readout_weight(k, i) * v[i];
        t.P[(static_cast<std::size_t>(k) * H + h) * slots + j] = s;
      }
      for (int a = 0; a < M; ++a) {
        double s = 0.0;
        for (int i = 0; i < d; ++i) s += layer.mlp->in(a, i) * v[i];
        t.Q[(static_cast<std::size_t>(a) * H + h) * slots + j] = s;
      }
    }
  if (M > 0) {
    const Matrix wb = model.readout_weight * layer.mlp->out;
    for (int k = 0; k < K; ++k)
      for (int a = 0; a < M; ++a) t.WB[static_cast<std::size_t>(k) * M + a] = wb(k, a);
  }
  t.pre_base.resize(M);
  for (int a = 0; a < M; ++a)
    t.pre_base[a] = layer.mlp->in_bias[a] + layer.mlp->in.row(a).dot(query);
  t.out_base.resize(K);
  for (int k = 0; k < K; ++k)
    t.out_base[k] = model.readout_bias[k] + model.readout_weight.row(k).dot(query);
  return t;
}

// max_j c_j − min_j c_j over the slots j in `support`.
double Range(const double* c, const std::vector<int>& support) {
  double lo = kInf, hi = -kInf;
  for (int j : support) {
    lo = std::min(lo, c[j]);
    hi = std::max(hi, c[j]);
  }
  return support.empty() ? 0.0 : hi - lo;
}

}  // namespace

PairTable BuildPairTable(const Transformer& f, const Transformer& g, const JointView& view,
                         const ContextKey& key) {
  PairTable p;
  p.types = view.alphabet * view.period;
  p.slots = p.types + static_cast<int>(key.suffix.size());
  p.side[0] = BuildModelTable(f, view, key);
  p.side[1] = BuildModelTable(g, view, key);
  return p;
}

void EvaluateSide(const ModelTable& table, int types, const std::vector<std::uint64_t>& n,
                  std::uint64_t length, SideValue& value) {
  const Layer& layer = *table.layer;
  const int H = static_cast<int>(table.heads.size());
  const int slots = static_cast<int>(table.heads.empty() ? types : table.heads[0].logit.size());
  const int d = table.width;
  const double position = static_cast<double>(length);
  const double theta = table.model->tie_tolerance;
  value.alpha.resize(H);
  std::vector<double> u = table.query;
  for (int h = 0; h < H; ++h) {
    const HeadTable& head = table.heads[h];
    double a_max = -kInf;
    for (int j = 0; j < slots; ++j)
      if (j >= types || n[j] > 0) a_max = std::max(a_max, head.logit[j]);
    std::vector<double>& alpha = value.alpha[h];
    alpha.assign(slots, 0.0);
    double total = 0.0;
    for (int j = 0; j < slots; ++j) {
      if (j < types && n[j] == 0) continue;
      const double w = AttentionWeight(layer, theta, head.logit[j], a_max, position);
      alpha[j] = j < types ? w * static_cast<double>(n[j]) : w;
      total += alpha[j];
    }
    LTSIM_CHECK(total > 0.0);
    for (int j = 0; j < slots; ++j) {
      if (alpha[j] == 0.0) continue;
      alpha[j] /= total;
      const double* v = &head.value[static_cast<std::size_t>(j) * d];
      for (int i = 0; i < d; ++i) u[i] += alpha[j] * v[i];
    }
  }
  const Transformer& model = *table.model;
  std::vector<double> y = u;
  value.pre.clear();
  if (layer.mlp) {
    const Mlp& mlp = *layer.mlp;
    const int M = table.neurons;
    value.pre.resize(M);
    for (int a = 0; a < M; ++a) {
      double s = mlp.in_bias[a];
      for (int i = 0; i < d; ++i) s += mlp.in(a, i) * u[i];
      value.pre[a] = s;
    }
    for (int i = 0; i < d; ++i) {
      double s = 0.0;
      for (int a = 0; a < M; ++a) s += mlp.out(i, a) * std::max(value.pre[a], 0.0);
      y[i] += s;
    }
  }
  value.out.resize(table.outputs);
  for (int k = 0; k < table.outputs; ++k) {
    double s = model.readout_bias[k];
    for (int i = 0; i < d; ++i) s += model.readout_weight(k, i) * y[i];
    value.out[k] = s;
  }
}

double OutputGap(const std::vector<double>& a, const std::vector<double>& b) {
  double gap = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!std::isfinite(a[k]) || !std::isfinite(b[k])) return kInf;
    gap = std::max(gap, std::abs(a[k] - b[k]));
  }
  return gap;
}

// The bound of docs/theory.md §11.3. For α, α' two distributions on the same
// slots, Σ_j (α_j − α'_j)·c_j ≤ ½‖α − α'‖₁·(max c − min c) over the slots where either is
// positive. Each head's α over the cell lies in per-slot intervals [α_lo, α_hi] (from the
// masses' intervals), so ‖α(x) − α(x0)‖₁ ≤ δ_h = Σ_j max(α_hi − α0, α0 − α_lo). Then
//   u(x) − u(x0) = Σ_h Σ_j Δα_hj·O_h y_j,
//   f_k(x) − f_k(x0) = ℓ_k·(u − u0) + Σ_{i undetermined} (WB)_ki·(ReLU(A_i u + b_i) − ReLU(…u0…)),
// with ℓ_k = W_k + Σ_{i active on the cell} (WB)_ki A_i, and a neuron active (inactive) on the
// cell when A_i u0 + b_i ∓ r_i ≥ 0 (≤ 0), r_i = Σ_h ½δ_h·range_j(A_i O_h y_j) ≥ |A_i(u − u0)|.
// Heads (of either model) whose α is the same function on the cell are one class, and their
// terms are added before the range is taken, so what f and g share cancels.
namespace {

// How far each coordinate's range moves one head's attention, the split heuristic's score
// (docs/theory.md §11.3). A type's mass moving over [m_lo, m_hi], the others' mass O at the
// middle of its range, moves the shares by 2·(m_hi/(m_hi + O) − m_lo/(m_lo + O)) in ‖·‖₁: a
// dominant type (O small against m) barely moves them, however wide its range. A longer length
// adds keys to every residue, each to a type whose count can still grow, and at most that
// count's range of them; where the keys' weights depend on T (finite precision) it also moves
// every slot's weight. Only the order of the splits depends on the scores, never a bound; on
// ties a count is split before the lengths.
void SplitScores(const CellBoundInput& in, const std::vector<double>& wlo,
                 const std::vector<double>& whi, const std::vector<double>& mlo,
                 const std::vector<double>& mhi, double zlo, double zhi,
                 std::vector<double>& score) {
  const int types = in.table->types, S = in.alphabet;
  const double z_mid = 0.5 * (zlo + zhi);
  const auto moved = [](double lo, double hi, double others) {
    if (!(others > 0.0)) return lo > 0.0 || !(hi > 0.0) ? 0.0 : 2.0;
    return 2.0 * (hi / (hi + others) - lo / (lo + others));
  };
  for (int j = 0; j < types; ++j) {
    const double others = 0.5 * ((zlo - mlo[j]) + (zhi - mhi[j]));
    score[j] += moved(mlo[j], mhi[j], std::max(others, 0.0));
  }
  const double lengths = static_cast<double>(in.cell->k_hi - in.cell->k_lo);
  if (!(lengths > 0.0)) return;
  double per_lengths = 0.0;
  for (int r = 0; r < in.period; ++r) {
    double most = 0.0;
    for (int t = 0; t < S; ++t) {
      const int j = r * S + t;
      const double range = (*in.mult_hi)[j] - (*in.mult_lo)[j];
      if (!(range > 0.0)) continue;  // a fixed count takes no more keys
      const double m_mid = 0.5 * (mlo[j] + mhi[j]);
      const double others = std::max(z_mid - m_mid, 0.0);
      most = std::max(most, moved(m_mid, m_mid + wlo[j] * std::min(lengths, range), others));
    }
    per_lengths += most;
  }
  const int slots = static_cast<int>(wlo.size());
  for (int j = 0; j < slots; ++j) {
    const double mult = 0.5 * ((*in.mult_lo)[j] + (*in.mult_hi)[j]);
    per_lengths += 2.0 * mult * (whi[j] - wlo[j]) / zlo;
  }
  score[types] += per_lengths;
}

}  // namespace

double CellBound(const CellBoundInput& in) {
  const PairTable& table = *in.table;
  if (in.score != nullptr) in.score->assign(table.types + 1, 0.0);
  const int slots = table.slots;
  struct HeadInfo {
    int side, h;
    std::vector<int> support;
    double delta;
    int cls;
    std::vector<double> a_lo, a_hi;  // [slot]: α's interval on the cell
  };
  std::vector<HeadInfo> heads;
  for (int s = 0; s < 2; ++s) {
    const ModelTable& mt = table.side[s];
    const SideValue& at = *in.at[s];
    for (int h = 0; h < static_cast<int>(mt.heads.size()); ++h) {
      const std::vector<double>& wlo = (*in.weight_lo[s])[h];
      const std::vector<double>& whi = (*in.weight_hi[s])[h];
      double zlo = 0.0, zhi = 0.0;
      std::vector<double> mlo(slots), mhi(slots);
      for (int j = 0; j < slots; ++j) {
        mlo[j] = (*in.mult_lo)[j] * wlo[j];
        mhi[j] = (*in.mult_hi)[j] * whi[j];
        zlo += mlo[j];
        zhi += mhi[j];
      }
      if (!(zlo > 0.0) || !std::isfinite(zhi)) {
        if (in.score != nullptr) in.score->clear();  // split by width, not a partial score
        return kInf;
      }
      if (in.score != nullptr) SplitScores(in, wlo, whi, mlo, mhi, zlo, zhi, *in.score);
      HeadInfo info{
          s, h, {}, 0.0, -1, std::vector<double>(slots, 0.0), std::vector<double>(slots, 0.0)};
      for (int j = 0; j < slots; ++j) {
        if (!(mhi[j] > 0.0)) continue;
        info.support.push_back(j);
        // The others' mass by difference, widened by the rounding of the sums it came from
        // (slots·ε of the total), which a dominant slot would otherwise exceed.
        const double sum_error = 2.0 * slots * std::numeric_limits<double>::epsilon();
        const double others_hi = std::max(zhi - mhi[j], 0.0) + sum_error * zhi;
        const double others_lo = std::max(zlo - mlo[j] - sum_error * zhi, 0.0);
        const double a_lo = mlo[j] > 0.0 ? mlo[j] / (mlo[j] + others_hi) : 0.0;
        const double a_hi = std::min(1.0, mhi[j] / (mhi[j] + others_lo));
        const double a0 = at.alpha[h][j];
        info.delta += std::max({a_hi - a0, a0 - a_lo, 0.0});
        // Widened by their rounding (a relative 1e-12) for the relaxed bound.
        info.a_lo[j] = std::max(0.0, a_lo * (1.0 - 1e-12) - 1e-15);
        info.a_hi[j] = std::min(1.0, a_hi * (1.0 + 1e-12) + 1e-15);
      }
      // Rounding of the intervals: a relative 1e-12 of each term, far below the 1e-9 verdict
      // tolerance the bound is compared against.
      info.delta = std::min(2.0, info.delta * (1.0 + 1e-12) + 1e-15);
      heads.push_back(std::move(info));
    }
  }
  // Classes: identical logits on every slot under the same rule, or weights that are constant
  // on the cell and equal (hardmax masks, finite precision past the rounding of every key).
  const auto same_rule = [&](const HeadInfo& a, const HeadInfo& b) {
    const Layer& la = *table.side[a.side].layer;
    const Layer& lb = *table.side[b.side].layer;
    if (la.attention != lb.attention || la.bias_scaling != lb.bias_scaling) return false;
    if (la.attention == Attention::kFinite && la.precision_bits != lb.precision_bits) return false;
    if (la.attention == Attention::kHardmax &&
        table.side[a.side].model->tie_tolerance != table.side[b.side].model->tie_tolerance)
      return false;
    return table.side[a.side].heads[a.h].logit == table.side[b.side].heads[b.h].logit;
  };
  const auto same_constant_weights = [&](const HeadInfo& a, const HeadInfo& b) {
    const auto& alo = (*in.weight_lo[a.side])[a.h];
    const auto& ahi = (*in.weight_hi[a.side])[a.h];
    const auto& blo = (*in.weight_lo[b.side])[b.h];
    const auto& bhi = (*in.weight_hi[b.side])[b.h];
    return alo == ahi && blo == bhi && alo == blo;
  };
  int classes = 0;
  for (std::size_t a = 0; a < heads.size(); ++a) {
    if (heads[a].cls >= 0) continue;
    heads[a].cls = classes;
    for (std::size_t b = a + 1; b < heads.size(); ++b)
      if (heads[b].cls < 0 &&
          (same_constant_weights(heads[a], heads[b]) || same_rule(heads[a], heads[b])))
        heads[b].cls = classes;
    ++classes;
  }
  // Neuron status and the undetermined neurons' terms, per side.
  const int K = table.side[0].outputs;
  std::vector<double> bound(K, 0.0);
  for (int k = 0; k < K; ++k) {
    const double fk = in.at[0]->out[k], gk = in.at[1]->out[k];
    if (!std::isfinite(fk) || !std::isfinite(gk)) return kInf;
    bound[k] = std::abs(fk - gk);
  }
  std::vector<std::vector<char>> active(2);
  for (int s = 0; s < 2; ++s) {
    const ModelTable& mt = table.side[s];
    const int H = static_cast<int>(mt.heads.size()), M = mt.neurons;
    active[s].assign(M, 0);
    for (int a = 0; a < M; ++a) {
      double r = 0.0;
      for (const HeadInfo& info : heads) {
        if (info.side != s) continue;
        r += 0.5 * info.delta *
             Range(&mt.Q[(static_cast<std::size_t>(a) * H + info.h) * slots], info.support);
      }
      r = r * (1.0 + 1e-12) + 1e-15 * (1.0 + std::abs(in.at[s]->pre[a]));
      const double pre = in.at[s]->pre[a];
      if (pre - r >= 0.0) {
        active[s][a] = 1;
      } else if (pre + r > 0.0) {
        for (int k = 0; k < K; ++k)
          bound[k] += std::abs(mt.WB[static_cast<std::size_t>(k) * M + a]) * r;
      }
    }
  }
  // The linear part, class by class.
  std::vector<double> coef(slots);
  std::vector<int> support;
  for (int c = 0; c < classes; ++c) {
    support.clear();
    double delta = 0.0;
    for (const HeadInfo& info : heads) {
      if (info.cls != c) continue;
      delta = std::max(delta, info.delta);  // the class's heads have one α: equal deltas
      for (int j : info.support)
        if (std::find(support.begin(), support.end(), j) == support.end()) support.push_back(j);
    }
    for (int k = 0; k < K; ++k) {
      std::fill(coef.begin(), coef.end(), 0.0);
      for (const HeadInfo& info : heads) {
        if (info.cls != c) continue;
        const ModelTable& mt = table.side[info.side];
        const int H = static_cast<int>(mt.heads.size()), M = mt.neurons;
        const double sign = info.side == 0 ? 1.0 : -1.0;
        const double* p = &mt.P[(static_cast<std::size_t>(k) * H + info.h) * slots];
        for (int j : support) coef[j] += sign * p[j];
        for (int a = 0; a < M; ++a) {
          if (!active[info.side][a]) continue;
          const double wb = sign * mt.WB[static_cast<std::size_t>(k) * M + a];
          const double* q = &mt.Q[(static_cast<std::size_t>(a) * H + info.h) * slots];
          for (int j : support) coef[j] += wb * q[j];
        }
      }
      bound[k] += 0.5 * delta * Range(coef.data(), support);
    }
  }
  double worst = 0.0;
  for (double b : bound) worst = std::max(worst, b);
  worst *= 1.0 + 1e-12;
  if (in.parts != nullptr) in.parts[0] = worst;
  if (worst <= in.limit) return worst;
  // The relaxed bounds (relaxation.h, docs/theory.md §11.6) on the same classes; every
  // bound is certified, so the smallest holds.
  std::vector<AttentionClass> relaxed(classes);
  for (AttentionClass& cls : relaxed) {
    cls.lo.assign(slots, 0.0);
    cls.hi.assign(slots, 1.0);
    cls.constant_weights = true;
  }
  for (const HeadInfo& info : heads) {
    AttentionClass& cls = relaxed[info.cls];
    const std::vector<double>& wlo = (*in.weight_lo[info.side])[info.h];
    const std::vector<double>& whi = (*in.weight_hi[info.side])[info.h];
    if (cls.heads.empty()) cls.weight = wlo;
    if (wlo != whi || wlo != cls.weight) cls.constant_weights = false;
    cls.heads.emplace_back(info.side, info.h);
    std::vector<char> present(slots, 0);
    for (int j : info.support) present[j] = 1;
    for (int j = 0; j < slots; ++j) {  // one α: the intersection of the members' boxes
      cls.lo[j] = std::max(cls.lo[j], present[j] ? info.a_lo[j] : 0.0);
      cls.hi[j] = std::min(cls.hi[j], present[j] ? info.a_hi[j] : 0.0);
    }
  }
  for (AttentionClass& cls : relaxed)
    for (int j = 0; j < slots; ++j)
      if (cls.hi[j] > 0.0) cls.support.push_back(j);
  const CountDomain counts(relaxed, slots, in.alphabet, in.period, *in.cell, *in.base);
  if (counts.valid()) {
    const double relaxed_counts = RelaxedCellBound(table, relaxed, counts);
    if (in.parts != nullptr) in.parts[1] = relaxed_counts;
    worst = std::min(worst, relaxed_counts);
    if (worst <= in.limit) return worst;
  }
  const double relaxed_box = RelaxedCellBound(table, relaxed, BoxDomain(relaxed, slots));
  if (in.parts != nullptr) in.parts[2] = relaxed_box;
  return std::min(worst, relaxed_box);
}

bool Disagrees(double gap, double epsilon, const std::vector<double>& f,
               const std::vector<double>& g) {
  if (!(gap > epsilon)) return false;
  if (!std::isfinite(gap)) return true;
  double scale = 1.0;
  for (double v : f) scale = std::max(scale, std::abs(v));
  for (double v : g) scale = std::max(scale, std::abs(v));
  return gap > epsilon + kThresholdGapTolerance * scale;
}

namespace {

// N_r = #{1 ≤ j ≤ far : j ≡ r (mod Δ)}.
std::int64_t ClassSizeOf(std::int64_t far, int period, int r) {
  return far / period + (r >= 1 && r <= far % period ? 1 : 0);
}

// Cells processed between two polls of EngineOptions::interrupted.
constexpr std::uint64_t kPollCells = 256;

// One task's branch and bound.
class Engine {
 public:
  Engine(const Transformer& f, const Transformer& g, const JointView& view, const TaskSpec& spec,
         const EngineOptions& options)
      : view_(view),
        spec_(spec),
        o_(options),
        S_(view.alphabet),
        R_(view.period),
        D_(view.alphabet * view.period) {
    table_ = BuildPairTable(f, g, view, spec.key);
    const std::int64_t m = static_cast<std::int64_t>(spec.key.suffix.size());
    base_.resize(R_);
    for (int r = 0; r < R_; ++r)
      base_[r] = ClassSizeOf(static_cast<std::int64_t>(spec.T_base) - m, R_, r);
    const std::size_t width = static_cast<std::size_t>(spec.k_hi - spec.k_lo + 1);
    out_.evaluated.assign(width, 0);
    out_.pruned.assign(o_.count_pruned ? width : 0, 0);
    out_.max_gap.assign(width, std::numeric_limits<double>::quiet_NaN());
    bound_tree_.assign(2 * width, -std::numeric_limits<double>::infinity());
    if (o_.goal == Goal::kMax) out_.best_gap = o_.epsilon;
    n_.assign(D_, 0);
    for (int s = 0; s < 2; ++s) {
      const int H = static_cast<int>(table_.side[s].heads.size());
      wlo_[s].assign(H, std::vector<double>(table_.slots, 0.0));
      whi_[s].assign(H, std::vector<double>(table_.slots, 0.0));
    }
    mlo_.assign(table_.slots, 1.0);
    mhi_.assign(table_.slots, 1.0);
    // Rounding bounds up to the task's longest length (docs/theory.md §8.7), in double and in
    // the 50 digits a statistic near the verdict's boundary is decided in.
    const std::uint64_t longest = LengthOf(spec.k_hi);
    for (int s = 0; s < 2; ++s) {
      const Transformer& model = *table_.side[s].model;
      round_[s] = MakeOneLayerRounding(model, longest, static_cast<std::uint64_t>(table_.slots));
      precise_round_[s] = MakeOneLayerRounding(
          model, longest, static_cast<std::uint64_t>(table_.slots), kPreciseUnit);
    }
  }

  TaskOutcome Run() {
    Cell root;
    root.k_lo = spec_.k_lo;
    root.k_hi = spec_.k_hi;
    root.lo.assign(D_, 0);
    root.hi.resize(D_);
    for (int kappa = 0; kappa < D_; ++kappa) root.hi[kappa] = base_[kappa / S_] + spec_.k_hi;
    std::vector<Cell> stack{root};
    std::uint64_t popped = 0;
    while (!stack.empty()) {
      if (o_.interrupted && ++popped % kPollCells == 0 && o_.interrupted()) {
        // The cells left hold every statistic not yet covered; none has a length below its
        // k_lo (propagation only raises it).
        std::int64_t k = stack.front().k_hi + 1;
        for (const Cell& c : stack) k = std::min(k, c.k_lo);
        out_.stopped_at = LengthOf(k);
        break;
      }
      Cell cell = std::move(stack.back());
      stack.pop_back();
      Process(cell, stack);
    }
    if (o_.goal == Goal::kMax && out_.best_counts.empty()) out_.best_gap = -1.0;
    // Each length's largest bound: the largest over the tree nodes above its leaf.
    const std::size_t width = out_.max_gap.size();
    out_.max_bound.assign(width, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < width; ++i) {
      double top = -std::numeric_limits<double>::infinity();
      for (std::size_t node = i + width; node >= 1; node /= 2)
        top = std::max(top, bound_tree_[node]);
      if (top > -std::numeric_limits<double>::infinity()) out_.max_bound[i] = top;
    }
    return std::move(out_);
  }

 private:
  std::uint64_t LengthOf(std::int64_t k) const {
    return spec_.T_base + static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(R_);
  }
  // A pruned cell's bound applies to each of its lengths [k_lo, k_hi]: a range update of a
  // segment tree whose leaves are the task's lengths, each node the largest bound of the
  // ranges it covers whole (O(log K) a cell).
  void NoteBound(const Cell& c, double bound) {
    const std::size_t width = out_.max_gap.size();
    std::size_t l = static_cast<std::size_t>(c.k_lo - spec_.k_lo) + width;
    std::size_t r = static_cast<std::size_t>(c.k_hi - spec_.k_lo) + 1 + width;
    for (; l < r; l /= 2, r /= 2) {
      if (l & 1) {
        bound_tree_[l] = std::max(bound_tree_[l], bound);
        ++l;
      }
      if (r & 1) {
        --r;
        bound_tree_[r] = std::max(bound_tree_[r], bound);
      }
    }
  }

  bool Abandoned(std::int64_t k) const {
    return o_.goal == Goal::kFirst && out_.first_T != 0 && LengthOf(k) >= out_.first_T;
  }

  // Tightens the cell under Σ_s n_(s,r) = base_r + k; false if it holds no statistic.
  bool Propagate(Cell& c) const {
    for (int pass = 0; pass < 3; ++pass) {
      for (int r = 0; r < R_; ++r) {
        std::int64_t sum_lo = 0, sum_hi = 0;
        for (int s = 0; s < S_; ++s) {
          sum_lo += c.lo[r * S_ + s];
          sum_hi += c.hi[r * S_ + s];
        }
        // base_r + k ∈ [sum_lo, sum_hi].
        c.k_lo = std::max(c.k_lo, sum_lo - base_[r]);
        c.k_hi = std::min(c.k_hi, sum_hi - base_[r]);
        if (c.k_lo > c.k_hi) return false;
        const std::int64_t n_lo = base_[r] + c.k_lo, n_hi = base_[r] + c.k_hi;
        for (int s = 0; s < S_; ++s) {
          std::int64_t& lo = c.lo[r * S_ + s];
          std::int64_t& hi = c.hi[r * S_ + s];
          lo = std::max(lo, n_lo - (sum_hi - hi));
          hi = std::min(hi, n_hi - (sum_lo - lo));
          if (lo > hi) return false;
        }
      }
    }
    // The lengths at which every residue can be filled from its final box: for each such k
    // every residue has a composition (Σ lo ≤ N_r ≤ Σ hi), and for no other k.
    for (int r = 0; r < R_; ++r) {
      std::int64_t sum_lo = 0, sum_hi = 0;
      for (int s = 0; s < S_; ++s) {
        sum_lo += c.lo[r * S_ + s];
        sum_hi += c.hi[r * S_ + s];
      }
      c.k_lo = std::max(c.k_lo, sum_lo - base_[r]);
      c.k_hi = std::min(c.k_hi, sum_hi - base_[r]);
    }
    return c.k_lo <= c.k_hi;
  }

  double Volume(const Cell& c) const {
    double v = static_cast<double>(c.k_hi - c.k_lo + 1);
    for (int r = 0; r < R_; ++r)
      for (int s = 0; s + 1 < S_; ++s)
        v *= static_cast<double>(c.hi[r * S_ + s] - c.lo[r * S_ + s] + 1);
    return v;
  }

  // The largest logit over slots surely (n ≥ 1) or possibly (n ≥ 1 somewhere) present.
  void LogitMaxima(const Cell& c, const HeadTable& head, double& sure, double& possible) const {
    sure = possible = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < table_.slots; ++j) {
      const bool is_sure = j >= D_ || c.lo[j] >= 1;
      const bool is_possible = j >= D_ || c.hi[j] >= 1;
      if (is_sure) sure = std::max(sure, head.logit[j]);
      if (is_possible) possible = std::max(possible, head.logit[j]);
    }
  }

  enum class Weights { kReady, kSplitPresence, kSplitLength };

  // Per-slot weight intervals on the cell; a* must be the same for every statistic of the cell
  // (else the type that could raise it is split off), and for finite precision every key's
  // rounding to 0 must be the same at both ends of the cell's lengths (else T is split).
  Weights CellWeights(const Cell& c, int& split_type) {
    const double t_lo = static_cast<double>(LengthOf(c.k_lo));
    const double t_hi = static_cast<double>(LengthOf(c.k_hi));
    uncertain_ = false;
    for (int s = 0; s < 2; ++s) {
      const ModelTable& mt = table_.side[s];
      const double theta = mt.model->tie_tolerance;
      for (std::size_t h = 0; h < mt.heads.size(); ++h) {
        const HeadTable& head = mt.heads[h];
        double sure, possible;
        LogitMaxima(c, head, sure, possible);
        if (sure != possible) {
          split_type = -1;
          for (int j = 0; j < D_; ++j)
            if (c.lo[j] == 0 && c.hi[j] >= 1 && head.logit[j] > sure &&
                (split_type < 0 || head.logit[j] > head.logit[split_type]))
              split_type = j;
          LTSIM_CHECK(split_type >= 0);
          return Weights::kSplitPresence;
        }
        for (int j = 0; j < table_.slots; ++j) {
          if (j < D_ && c.hi[j] == 0) {
            wlo_[s][h][j] = whi_[s][h][j] = 0.0;
            continue;
          }
          const double a = AttentionWeight(*mt.layer, theta, head.logit[j], sure, t_lo);
          const double b = AttentionWeight(*mt.layer, theta, head.logit[j], sure, t_hi);
          if ((a == 0.0) != (b == 0.0)) return Weights::kSplitLength;
          // A decision that rounding could flip somewhere in the cell: no bound (§8.7).
          if (!uncertain_ &&
              !DecisionCertain(round_[s], *mt.layer, head.logit[j], sure, t_lo, t_hi))
            uncertain_ = true;
          wlo_[s][h][j] = std::min(a, b);
          whi_[s][h][j] = std::max(a, b);
        }
      }
    }
    return Weights::kReady;
  }

  // A statistic of the cell near its middle: k in the middle, each residue's count spread over
  // the tokens in proportion to their ranges.
  std::int64_t Representative(const Cell& c) {
    const std::int64_t k = c.k_lo + (c.k_hi - c.k_lo) / 2;
    for (int r = 0; r < R_; ++r) {
      const std::int64_t total = base_[r] + k;
      std::int64_t sum_lo = 0, sum_hi = 0;
      for (int s = 0; s < S_; ++s) {
        sum_lo += c.lo[r * S_ + s];
        sum_hi += c.hi[r * S_ + s];
      }
      LTSIM_CHECK(sum_lo <= total && total <= sum_hi);
      const double frac =
          sum_hi > sum_lo ? static_cast<double>(total - sum_lo) / (sum_hi - sum_lo) : 0.0;
      std::int64_t left = total;
      for (int s = 0; s < S_; ++s) {
        const std::int64_t lo = c.lo[r * S_ + s], hi = c.hi[r * S_ + s];
        const std::int64_t v =
            std::min(hi, lo + static_cast<std::int64_t>(std::floor(frac * (hi - lo))));
        n_[r * S_ + s] = static_cast<std::uint64_t>(v);
        left -= v;
      }
      for (int s = 0; s < S_ && left > 0; ++s) {  // floors left a deficit: fill in order
        const std::int64_t room = c.hi[r * S_ + s] - static_cast<std::int64_t>(n_[r * S_ + s]);
        const std::int64_t add = std::min(room, left);
        n_[r * S_ + s] += static_cast<std::uint64_t>(add);
        left -= add;
      }
      LTSIM_CHECK(left == 0);
    }
    return k;
  }

  // Bound on |f̂ − f|_∞ of side s at the statistic in n_ (docs/theory.md §8.7): +∞ when a
  // decision of one of its heads is not certain.
  double SideBound(int s, std::uint64_t T) {
    const ModelTable& mt = table_.side[s];
    const double position = static_cast<double>(T);
    if (mt.layer->attention != Attention::kSoftmax) {
      for (const HeadTable& head : mt.heads) {
        double a_max = -kInf;
        for (int j = 0; j < table_.slots; ++j)
          if (j >= D_ || n_[j] > 0) a_max = std::max(a_max, head.logit[j]);
        for (int j = 0; j < table_.slots; ++j)
          if ((j >= D_ || n_[j] > 0) &&
              !DecisionCertain(round_[s], *mt.layer, head.logit[j], a_max, position, position))
            return kInf;
      }
    }
    if (bound_length_[s] != T) {
      bound_length_[s] = T;
      bound_[s] = OutputBound(round_[s], T);
    }
    return bound_[s];
  }

  // The statistic in n_ at length T in model s's own view (its period and locality): far counts
  // mapped as BuildModelTable maps them, joint suffix positions beyond its locality made far.
  TypeCounts ModelCounts(int s, std::uint64_t T) const {
    const Transformer& model = *table_.side[s].model;
    const std::vector<int>& suffix = spec_.key.suffix;
    const int m = static_cast<int>(suffix.size());
    TypeCounts c;
    c.alphabet = S_;
    c.period = model.period;
    c.locality = model.locality;
    c.length = T;
    c.far.assign(static_cast<std::size_t>(S_) * model.period, 0);
    for (int kappa = 0; kappa < D_; ++kappa)
      c.far[static_cast<std::size_t>((kappa / S_) % model.period) * S_ + kappa % S_] += n_[kappa];
    const int own = std::min(m, model.locality + 1);
    for (int t = own; t < m; ++t) {  // t back from the last token: a far key for the model
      const int r = ((spec_.key.residue - t) % R_ + R_) % R_ % model.period;
      ++c.far[static_cast<std::size_t>(r) * S_ + suffix[m - 1 - t]];
    }
    for (int t = own - 1; t >= 0; --t) c.suffix.push_back(static_cast<Token>(suffix[m - 1 - t]));
    return c;
  }

  // The statistic in n_ re-evaluated in 50 digits: its gap and verdict. InputError when even
  // that cannot be trusted to decide it (docs/theory.md §8.7).
  double PreciseGap(std::uint64_t T, bool& disagrees) {
    ++out_.precise;
    PreciseVector out[2];
    double error = 0.0;
    for (int s = 0; s < 2; ++s) {
      const TypeCounts counts = ModelCounts(s, T);
      const Transformer& model = *table_.side[s].model;
      out[s] = EvaluatePreciseOneLayer(model, counts);
      error += OutputBound(precise_round_[s], T);  // its decisions are the exact logits' ones
    }
    const PreciseReal gap = PreciseSupDistance(out[0], out[1]);
    PreciseReal scale = 1;
    for (const PreciseVector& v : out)
      for (const PreciseReal& y : v) scale = std::max(scale, PreciseReal(abs(y)));
    const PreciseReal boundary =
        PreciseReal(o_.epsilon) + PreciseReal(kThresholdGapTolerance) * scale;
    if (!(abs(gap - boundary) > PreciseReal(error) * 2))
      throw InputError(fmt::format(
          "threshold: the models cannot be evaluated reliably at length {}: their gap {} lies "
          "within the 50-digit rounding bound {:.3g} of eps + tolerance (docs/theory.md §8.7)",
          T, PreciseText(gap, 17), error));
    disagrees = gap > boundary;
    return static_cast<double>(gap);
  }

  // Evaluates the statistic in n_ at length index k; returns its gap and tallies it. A gap
  // within the rounding bound of the verdict's boundary, or a statistic with an uncertain
  // decision, is decided in 50 digits (docs/theory.md §8.7).
  double Evaluate(std::int64_t k, bool tally) {
    const std::uint64_t T = LengthOf(k);
    EvaluateSide(table_.side[0], D_, n_, T, value_[0]);
    EvaluateSide(table_.side[1], D_, n_, T, value_[1]);
    ++out_.evaluations;
    double gap = OutputGap(value_[0].out, value_[1].out);
    for (const SideValue& v : value_)
      for (double y : v.out) output_scale_ = std::max(output_scale_, std::abs(y));
    bool disagrees = Disagrees(gap, o_.epsilon, value_[0].out, value_[1].out);
    const double error = SideBound(0, T) + SideBound(1, T);
    if (!(std::abs(gap - Boundary()) > 2 * error)) gap = PreciseGap(T, disagrees);
    const std::size_t index = static_cast<std::size_t>(k - spec_.k_lo);
    if (tally) ++out_.evaluated[index];
    double& best = out_.max_gap[index];
    if (std::isnan(best) || gap > best) best = gap;
    if (disagrees && o_.goal == Goal::kFirst) {
      if (out_.first_T == 0 || T < out_.first_T) out_.first_T = T;
    }
    if (o_.goal == Goal::kMax && gap > out_.best_gap && disagrees) {
      out_.best_gap = gap;
      out_.best_counts = n_;
      out_.best_T = T;
    }
    return gap;
  }

  // ε + kThresholdGapTolerance·max(1, ‖f‖_∞, ‖g‖_∞) at the values just evaluated.
  double Boundary() const {
    double scale = 1.0;
    for (const SideValue& v : value_)
      for (double y : v.out) scale = std::max(scale, std::abs(y));
    return o_.epsilon + kThresholdGapTolerance * scale;
  }

  // Every statistic of the cell: evaluated (evaluate) or counted into `pruned` (count only).
  void Enumerate(const Cell& c, bool evaluate) {
    for (std::int64_t k = c.k_lo; k <= c.k_hi; ++k) {
      if (evaluate && Abandoned(k)) break;
      EnumerateResidue(c, k, 0, evaluate);
    }
  }

  void EnumerateResidue(const Cell& c, std::int64_t k, int r, bool evaluate) {
    if (r == R_) {
      if (evaluate) {
        Evaluate(k, true);
      } else {
        ++out_.pruned[static_cast<std::size_t>(k - spec_.k_lo)];
      }
      return;
    }
    EnumerateToken(c, k, r, 0, base_[r] + k, evaluate);
  }

  void EnumerateToken(const Cell& c, std::int64_t k, int r, int s, std::int64_t left,
                      bool evaluate) {
    const int kappa = r * S_ + s;
    if (s == S_ - 1) {
      if (left < c.lo[kappa] || left > c.hi[kappa]) return;
      n_[kappa] = static_cast<std::uint64_t>(left);
      EnumerateResidue(c, k, r + 1, evaluate);
      return;
    }
    const std::int64_t top = std::min(c.hi[kappa], left);
    for (std::int64_t v = c.lo[kappa]; v <= top; ++v) {
      n_[kappa] = static_cast<std::uint64_t>(v);
      EnumerateToken(c, k, r, s + 1, left - v, evaluate);
    }
  }

  void SplitType(const Cell& c, int kappa, std::int64_t at, std::vector<Cell>& stack) {
    Cell low = c, high = c;
    low.hi[kappa] = at;
    high.lo[kappa] = at + 1;
    stack.push_back(std::move(high));  // the lower half is searched first
    stack.push_back(std::move(low));
  }

  void SplitLength(const Cell& c, std::vector<Cell>& stack) {
    const std::int64_t mid = c.k_lo + (c.k_hi - c.k_lo) / 2;
    Cell low = c, high = c;
    low.k_hi = mid;
    high.k_lo = mid + 1;
    for (int kappa = 0; kappa < D_; ++kappa)
      low.hi[kappa] = std::min(low.hi[kappa], base_[kappa / S_] + mid);
    stack.push_back(std::move(high));  // shorter lengths first
    stack.push_back(std::move(low));
  }

  // Halves the coordinate whose range moves the attention most (score_, from CellBound: a
  // count's range of mass over each head's smallest total, the lengths' range of every residue's
  // heaviest key likewise), else the widest range (lengths count as one more coordinate).
  void SplitWidest(const Cell& c, std::vector<Cell>& stack) {
    int best = -1;
    double top = 0.0;
    if (score_.size() == static_cast<std::size_t>(D_) + 1) {
      if (c.k_hi > c.k_lo) top = score_[D_];
      for (int kappa = 0; kappa < D_; ++kappa)
        if (c.hi[kappa] > c.lo[kappa] && score_[kappa] > 0.0 &&
            (score_[kappa] > top || (best < 0 && score_[kappa] == top))) {
          top = score_[kappa];
          best = kappa;
        }
    }
    if (top > 0.0) {
      if (best < 0) return SplitLength(c, stack);
      return SplitType(c, best, c.lo[best] + (c.hi[best] - c.lo[best]) / 2, stack);
    }
    std::int64_t width = c.k_hi - c.k_lo;
    for (int kappa = 0; kappa < D_; ++kappa)
      if (c.hi[kappa] - c.lo[kappa] > width) {
        width = c.hi[kappa] - c.lo[kappa];
        best = kappa;
      }
    LTSIM_CHECK(width > 0);
    if (best < 0) return SplitLength(c, stack);
    SplitType(c, best, c.lo[best] + (c.hi[best] - c.lo[best]) / 2, stack);
  }

  // Evaluates the cell's representative and returns the first certified bound ≤ limit, else
  // the smallest (every one of them with `parts`, docs/theory.md §11.3, §11.6).
  double Bound(const Cell& c, double limit, double* parts) {
    const std::int64_t k = Representative(c);
    const double gap = Evaluate(k, false);
    for (int kappa = 0; kappa < D_; ++kappa) {
      mlo_[kappa] = static_cast<double>(c.lo[kappa]);
      mhi_[kappa] = static_cast<double>(c.hi[kappa]);
    }
    CellBoundInput in;
    in.table = &table_;
    for (int s = 0; s < 2; ++s) {
      in.at[s] = &value_[s];
      in.weight_lo[s] = &wlo_[s];
      in.weight_hi[s] = &whi_[s];
    }
    in.mult_lo = &mlo_;
    in.mult_hi = &mhi_;
    in.cell = &c;
    in.base = &base_;
    in.alphabet = S_;
    in.period = R_;
    in.limit = limit;
    in.score = &score_;
    in.parts = parts;
    score_.clear();  // a cell left unbounded splits by its widest range, not a stale score
    return std::isfinite(gap) ? CellBound(in) : std::numeric_limits<double>::infinity();
  }

 public:
  CellCheck Check(Cell c) {
    CellCheck out;
    if (!Propagate(c)) return out;
    int split_type = -1;
    out.bounded = CellWeights(c, split_type) == Weights::kReady;
    if (out.bounded) Bound(c, -std::numeric_limits<double>::infinity(), out.bounds);
    Enumerate(c, true);
    for (std::size_t i = 0; i < out_.max_gap.size(); ++i) {
      out.statistics += out_.evaluated[i];
      if (!std::isnan(out_.max_gap[i])) out.max_gap = std::max(out.max_gap, out_.max_gap[i]);
    }
    out.output_scale = output_scale_;
    return out;
  }

 private:
  void Process(Cell& c, std::vector<Cell>& stack) {
    if (!Propagate(c)) return;
    if (Abandoned(c.k_lo)) return;
    ++out_.cells;
    if (!o_.prune) return Enumerate(c, true);
    int split_type = -1;
    switch (CellWeights(c, split_type)) {
      case Weights::kSplitPresence:
        return SplitType(c, split_type, 0, stack);
      case Weights::kSplitLength:
        return SplitLength(c, stack);
      case Weights::kReady:
        break;
    }
    if (Volume(c) <= o_.leaf_points) return Enumerate(c, true);
    const double limit = o_.goal == Goal::kFirst ? o_.epsilon : out_.best_gap;
    // The bound is computed from the representative's double values: the exact values may differ
    // by the rounding bound of either side, and the bound's per-slot terms (products of the same
    // weights) by as much again (docs/theory.md §8.7).
    const std::uint64_t t_hi = LengthOf(c.k_hi);
    const double slack =
        uncertain_ ? kInf : 2 * (OutputBound(round_[0], t_hi) + OutputBound(round_[1], t_hi));
    if (!std::isfinite(slack)) {
      score_.clear();
      return SplitWidest(c, stack);
    }
    const double bound = Bound(c, limit - slack, nullptr) + slack;
    if (bound <= limit) {
      ++out_.cells_pruned;
      out_.max_pruned_bound = std::max(out_.max_pruned_bound, bound);
      NoteBound(c, bound);
      if (o_.count_pruned) Enumerate(c, false);
      return;
    }
    SplitWidest(c, stack);
  }

  JointView view_;
  TaskSpec spec_;
  EngineOptions o_;
  int S_, R_, D_;
  PairTable table_;
  std::vector<std::int64_t> base_;
  TaskOutcome out_;
  std::vector<std::uint64_t> n_;
  SideValue value_[2];
  std::vector<std::vector<double>> wlo_[2], whi_[2];
  std::vector<double> mlo_, mhi_, score_;
  double output_scale_ = 0.0;  // the largest |output| evaluated (CellCheck)
  OneLayerRounding round_[2], precise_round_[2];
  std::uint64_t bound_length_[2] = {0, 0};  // the length bound_ holds OutputBound at
  double bound_[2] = {0.0, 0.0};
  bool uncertain_ = false;          // CellWeights found a decision rounding could flip
  std::vector<double> bound_tree_;  // NoteBound's segment tree, leaves at [width, 2·width)
};

}  // namespace

TaskOutcome RunTask(const Transformer& f, const Transformer& g, const JointView& view,
                    const TaskSpec& spec, const EngineOptions& options) {
  return Engine(f, g, view, spec, options).Run();
}

CellCheck CheckCell(const Transformer& f, const Transformer& g, const JointView& view,
                    const TaskSpec& spec, const Cell& cell) {
  EngineOptions options;  // nothing disagrees, so every length of the cell is enumerated
  options.epsilon = std::numeric_limits<double>::infinity();
  return Engine(f, g, view, spec, options).Check(cell);
}

}  // namespace ltsim::threshold
