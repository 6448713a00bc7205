// `frequency`: per-component scales over the heavy types of each head, so both models' attention
// survives with a length bounded uniformly in |x| (docs/theory.md §2.4).
#include "ltsim/sim/frequency_matching.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/model/constants.h"
#include "sim/simulators.h"

namespace ltsim {
namespace {

// The support of one head's attention on x, in joint types (see FrequencyPlan).
struct Group {
  std::vector<int> types;  // joint κ with c_κ > 0
  double mass = 0.0;       // S_h
  double fixed = 0.0;      // m_h: suffix slots in the support
  bool scaled() const { return types.size() + fixed > 1; }
  bool operator==(const Group& o) const { return types == o.types && fixed == o.fixed; }
};

std::vector<Group> HeadGroups(const TypeCounts& joint, const Transformer& model) {
  if (model.layers.size() != 1)
    throw OptionError("method", "frequency needs one-layer models ('" + model.name + "' has " +
                                    std::to_string(model.layers.size()) + " layers)");
  const TypeCounts own = Coarsen(joint, model.period, model.locality);
  const std::vector<HeadAttention> heads = OneLayerAttention(model, own);
  const std::size_t moved = joint.suffix.size() - own.suffix.size();
  const std::uint64_t first = joint.length - joint.suffix.size() + 1;
  std::vector<Group> groups;
  for (const HeadAttention& head : heads) {
    Group group;
    for (int r = 0; r < joint.period; ++r) {
      for (int s = 0; s < joint.alphabet; ++s) {
        const int kappa = joint.TypeIndex(s, r);
        if (joint.far[kappa] == 0 || head.far[own.TypeIndex(s, r % model.period)] <= 0.0) continue;
        group.types.push_back(kappa);
        group.mass += static_cast<double>(joint.far[kappa]);
      }
    }
    for (double w : head.suffix) group.fixed += w > 0.0 ? 1.0 : 0.0;
    for (std::size_t k = 0; k < moved; ++k) {  // joint suffix positions that are far for model
      const int own_type = own.TypeIndex(joint.suffix[k], own.Residue(first + k));
      group.fixed += head.far[own_type] > 0.0 ? 1.0 : 0.0;
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

// Every head of every model, identical supports once: a repeated group adds no constraint.
std::vector<Group> DistinctGroups(const TypeCounts& counts,
                                  const std::vector<const Transformer*>& models) {
  std::vector<Group> groups;
  for (const Transformer* model : models)
    for (Group& g : HeadGroups(counts, *model))
      if (std::find(groups.begin(), groups.end(), g) == groups.end())
        groups.push_back(std::move(g));
  return groups;
}

// Union-find over joint types.
class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int k) { return parent_[k] == k ? k : parent_[k] = Find(parent_[k]); }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

// The heavy/light structure at one δ (docs/theory.md §2.4, steps 2–3). Type κ is heavy in a
// scaled group h when c_κ ≥ δ·S_h (h's largest type always is); heavy types of one group share
// a component, and so one scale. A component type that is light in a group of another
// component C gives the edge λ_C ≥ λ_C'·c_κ/(δ·S_h), which keeps its share of h's z-total
// below δ; a type heavy in no group is `free` and takes the smallest scale of its groups.
struct Structure {
  double delta = 0.0;
  std::vector<int> type_comp;             // per joint type: component, −1 free or unsupported
  std::vector<int> group_comp;            // per group: the component of its heavy types
  std::vector<double> min_mass;           // per component: min S_h of its scaled groups
  std::vector<int> support;               // every type of some group, ascending
  std::vector<std::vector<int>> free_in;  // per joint type: the scaled groups a free type is in
  std::vector<int> foreign;               // per group: F_h, its types outside its component
  struct Edge {
    int from, to;
    double factor;
  };
  std::vector<Edge> edges;
  bool has_light = false;  // false: the same structure as δ = 0
  int components() const { return static_cast<int>(min_mass.size()); }
};

Structure Build(const TypeCounts& counts, const std::vector<Group>& groups, double delta) {
  Structure st;
  st.delta = delta;
  const std::size_t n = counts.far.size();
  UnionFind uf(n);
  std::vector<bool> heavy_anywhere(n, false), in_group(n, false), in_scaled(n, false);
  auto heavy = [&](const Group& g, int kappa, int top) {
    return kappa == top || static_cast<double>(counts.far[kappa]) >= delta * g.mass;
  };
  for (const Group& g : groups) {
    for (int kappa : g.types) in_group[kappa] = true;
    if (!g.scaled() || g.types.empty()) continue;
    int top = g.types.front();
    for (int kappa : g.types)
      if (counts.far[kappa] > counts.far[top]) top = kappa;
    for (int kappa : g.types) {
      in_scaled[kappa] = true;
      if (!heavy(g, kappa, top)) continue;
      heavy_anywhere[kappa] = true;
      uf.Union(kappa, top);
    }
  }
  // Components: the heavy classes, and a singleton for a type that is in no scaled group (its
  // count matters to no head, but it must stay present).
  std::vector<int> index(n, -1);
  st.type_comp.assign(n, -1);
  st.free_in.assign(n, {});
  for (std::size_t k = 0; k < n; ++k) {
    if (!in_group[k]) continue;
    st.support.push_back(static_cast<int>(k));
    if (!heavy_anywhere[k] && in_scaled[k]) continue;  // free
    const int root = uf.Find(static_cast<int>(k));
    if (index[root] < 0) {
      index[root] = st.components();
      st.min_mass.push_back(std::numeric_limits<double>::infinity());
    }
    st.type_comp[k] = index[root];
    if (!in_scaled[k]) st.min_mass[index[root]] = static_cast<double>(counts.far[k]);
  }
  for (std::size_t h = 0; h < groups.size(); ++h) {
    const Group& g = groups[h];
    int comp = -1;
    int foreign = 0;
    if (g.scaled() && !g.types.empty()) {
      int top = g.types.front();
      for (int kappa : g.types)
        if (counts.far[kappa] > counts.far[top]) top = kappa;
      comp = st.type_comp[top];
      st.min_mass[comp] = std::min(st.min_mass[comp], g.mass);
      for (int kappa : g.types) {
        if (st.type_comp[kappa] == comp) continue;
        ++foreign;
        st.has_light = true;
        const double share = static_cast<double>(counts.far[kappa]) / g.mass;
        if (st.type_comp[kappa] < 0) {
          st.free_in[kappa].push_back(static_cast<int>(h));
        } else {
          st.edges.push_back({st.type_comp[kappa], comp, share / delta});
        }
      }
    }
    st.group_comp.push_back(comp);
    st.foreign.push_back(foreign);
  }
  return st;
}

// λ_C at Θ: min(1, Θ / min S_h), then raised along the edges until they all hold. Every edge
// factor is below 1 (a light type has c_κ < δ·S_h), so the raising ends, and never at the cap.
std::vector<double> Scales(const Structure& st, double theta) {
  std::vector<double> lambda(st.min_mass.size());
  for (std::size_t c = 0; c < lambda.size(); ++c) lambda[c] = std::min(1.0, theta / st.min_mass[c]);
  for (std::size_t pass = 0; pass <= lambda.size(); ++pass) {
    bool changed = false;
    for (const Structure::Edge& e : st.edges) {
      const double need = std::min(1.0, lambda[e.from] * e.factor);
      if (need > lambda[e.to]) {
        lambda[e.to] = need;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return lambda;
}

// λ_κ at Θ for every support type: its component's scale, or for a free type the smallest scale
// of its groups (0 for types outside every group).
std::vector<double> SupportScales(const Structure& st, double theta, std::size_t types) {
  const std::vector<double> lambda = Scales(st, theta);
  std::vector<double> out(types, 0.0);
  for (int k : st.support) {
    double scale = 1.0;
    if (st.type_comp[k] >= 0) {
      scale = lambda[st.type_comp[k]];
    } else {
      for (int h : st.free_in[k]) scale = std::min(scale, lambda[st.group_comp[h]]);
    }
    out[k] = scale;
  }
  return out;
}

// c'_κ = max(1, round(max(λ_κ, ν)·c_κ)) for the support types (0 for types outside every
// group). ν = 0 is the construction's step 3; ν > 0 raises every scale below ν to ν (step 5).
std::vector<std::uint64_t> CountsAt(const TypeCounts& counts, const Structure& st,
                                    const std::vector<double>& scales, double nu) {
  std::vector<std::uint64_t> out(counts.far.size(), 0);
  for (int k : st.support) {
    const double scale = std::max(scales[k], nu);
    // scale ≤ 1, so c' ≤ c; a count near 2^64 rounds to 2^64 in double, which no cast may take.
    const double scaled = std::round(scale * static_cast<double>(counts.far[k]));
    out[k] = scaled >= 0x1p64
                 ? counts.far[k]
                 : std::clamp<std::uint64_t>(static_cast<std::uint64_t>(scaled), 1,
                                             std::max<std::uint64_t>(counts.far[k], 1));
  }
  return out;
}

// c'_κ for the support types at Θ (0 for types outside every group).
std::vector<std::uint64_t> GroupCounts(const TypeCounts& counts, const Structure& st,
                                       double theta) {
  return CountsAt(counts, st, SupportScales(st, theta, counts.far.size()), 0.0);
}

bool Fits(const TypeCounts& counts, const std::vector<std::uint64_t>& far,
          const std::vector<std::uint64_t>& residue_sizes) {
  for (int r = 0; r < counts.period; ++r) {
    std::uint64_t used = 0;  // saturating: counts near 2^64 must not wrap into "fits"
    for (int s = 0; s < counts.alphabet; ++s) {
      const std::uint64_t c = far[counts.TypeIndex(s, r)];
      used = c > std::numeric_limits<std::uint64_t>::max() - used
                 ? std::numeric_limits<std::uint64_t>::max()
                 : used + c;
    }
    if (used > residue_sizes[r]) return false;
  }
  return true;
}

// The largest Θ whose group counts fit (bisection on log Θ; the counts grow with Θ), or 0 when
// even one token of every support type does not fit.
double LargestTheta(const TypeCounts& counts, const Structure& st,
                    const std::vector<std::uint64_t>& residue_sizes) {
  double lo = 1e-12;
  double hi = 1.0;
  for (double m : st.min_mass) hi = std::max(hi, m);
  if (Fits(counts, GroupCounts(counts, st, hi), residue_sizes)) return hi;
  if (!Fits(counts, GroupCounts(counts, st, lo), residue_sizes)) return 0.0;
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double mid = std::sqrt(lo * hi);
    (Fits(counts, GroupCounts(counts, st, mid), residue_sizes) ? lo : hi) = mid;
  }
  return lo;
}

// Fills each residue class to N_r: with the present types outside every group in proportion
// to their counts, else by padding the largest support type of that residue. Returns the
// padded types.
std::vector<bool> Fill(const TypeCounts& counts, const Structure& st,
                       const std::vector<std::uint64_t>& residue_sizes,
                       std::vector<std::uint64_t>& far) {
  std::vector<bool> supported(counts.far.size(), false);
  for (int k : st.support) supported[k] = true;
  std::vector<bool> padded(counts.far.size(), false);
  for (int r = 0; r < counts.period; ++r) {
    std::uint64_t used = 0;
    std::vector<int> fillers;
    std::vector<double> quotas;
    int largest = -1;
    for (int s = 0; s < counts.alphabet; ++s) {
      const int k = counts.TypeIndex(s, r);
      used += far[k];
      if (counts.far[k] > 0 && !supported[k]) {
        fillers.push_back(k);
        quotas.push_back(static_cast<double>(counts.far[k]));
      }
      if (supported[k] && (largest < 0 || far[k] > far[largest])) largest = k;
    }
    const std::uint64_t room = residue_sizes[r] - used;
    if (room == 0) continue;
    if (!fillers.empty()) {
      const std::vector<std::uint64_t> fill = LargestRemainder(quotas, room);
      for (std::size_t i = 0; i < fillers.size(); ++i) far[fillers[i]] = fill[i];
    } else {
      LTSIM_CHECK(largest >= 0);
      far[largest] += room;
      padded[largest] = true;
    }
  }
  return padded;
}

// ‖α_h(x) − α_h(z)‖₁ of one group in the hardmax regime, exactly: uniform weights over the
// support's positions, c_κ/(S_h + m_h) in x and c'_κ/(S'_h + m_h) in z, 1/(S + m) per fixed slot.
double GroupDistance(const TypeCounts& counts, const Group& g,
                     const std::vector<std::uint64_t>& far) {
  double mass_z = 0.0;
  for (int kappa : g.types) mass_z += static_cast<double>(far[kappa]);
  const double nx = g.mass + g.fixed;
  const double nz = mass_z + g.fixed;
  double distance = g.fixed * std::abs(1.0 / nx - 1.0 / nz);
  for (int kappa : g.types)
    distance += std::abs(static_cast<double>(counts.far[kappa]) / nx -
                         static_cast<double>(far[kappa]) / nz);
  return distance;
}

// Hardmax, or finite with both lengths in [T_hard, T_split) (docs/theory.md §2.6): there the
// finite attention has the hardmax support, with weights in [T^(−ϑ), 1].
bool InHardmaxRegime(const Transformer& model, std::uint64_t x_length, std::uint64_t z_length) {
  const Layer& layer = model.layers.front();
  if (layer.bias_scaling != BiasScaling::kNone) return false;
  if (layer.attention == Attention::kHardmax) return true;
  if (layer.attention != Attention::kFinite) return false;
  return InFiniteHardmaxWindow(model, static_cast<double>(x_length)) &&
         InFiniteHardmaxWindow(model, static_cast<double>(z_length));
}

// What the finite models' attention may differ from their hardmax twins' on x and z (0 for
// hardmax models and for finite ones without near-ties).
double TieSlack(const Transformer& model, std::uint64_t x_length, std::uint64_t z_length) {
  if (model.layers.front().attention != Attention::kFinite) return 0.0;
  return FiniteHardmaxDistance(model, static_cast<double>(x_length)) +
         FiniteHardmaxDistance(model, static_cast<double>(z_length));
}

// Step 5 for a residue class r whose present types all lie in supports (no filler type): its
// *elastic* types, the support types whose scale was raised to ν (λ_κ ≤ ν) with ν·c_κ ≥ S + 1,
// share the positions the other types of r leave, R_r, by largest remainder of their x-counts,
// so that each gets ν_r·c_κ within 1 with ν_r = R_r/X^E_r (X^E_r their x-total), and every one
// stays present. Returns e_r = |ν_r − ν|/ν, or −1 when the class is left as it was (a filler, no
// room, no elastic type, or a count that would vanish).
double Balance(const TypeCounts& counts, const std::vector<bool>& supported,
               const std::vector<double>& scales, double nu, int r, std::uint64_t size,
               std::vector<std::uint64_t>& far) {
  std::vector<int> elastic;
  std::vector<double> quotas;
  std::uint64_t used = 0, rigid = 0;
  long double elastic_mass = 0.0L;
  for (int s = 0; s < counts.alphabet; ++s) {
    const int k = counts.TypeIndex(s, r);
    if (counts.far[k] == 0) continue;
    if (!supported[k]) return -1.0;  // a filler takes the room (Fill)
    used += far[k];
    const double c = static_cast<double>(counts.far[k]);
    if (scales[k] <= nu && nu * c >= counts.alphabet + 1.0) {
      elastic.push_back(k);
      quotas.push_back(c);
      elastic_mass += c;
    } else {
      rigid += far[k];
    }
  }
  if (used >= size || elastic.empty()) return -1.0;
  const std::uint64_t share = size - rigid;
  const std::vector<std::uint64_t> fill = LargestRemainder(quotas, share);
  if (std::any_of(fill.begin(), fill.end(), [](std::uint64_t c) { return c == 0; })) return -1.0;
  for (std::size_t i = 0; i < elastic.size(); ++i) far[elastic[i]] = fill[i];
  const long double nu_r = static_cast<long double>(share) / elastic_mass;
  return static_cast<double>(std::fabs(nu_r - nu) / nu);
}

// Fills, certifies and describes a plan whose support counts plan.far are set (Θ, δ and the
// balance e of step 5 too): the fill of step 5, η, the rate and the bookkeeping.
void Finish(const TypeCounts& counts, const std::vector<Group>& groups, const Structure& st,
            const std::vector<std::uint64_t>& residue_sizes, FrequencyPlan& plan) {
  plan.delta = st.delta;
  const std::vector<bool> padded = Fill(counts, st, residue_sizes, plan.far);
  const std::vector<double> lambda = Scales(st, plan.theta);
  plan.components = st.components();
  plan.exact_components = 0;
  for (double l : lambda) plan.exact_components += l == 1.0;
  plan.eta = plan.eta_rate = 0.0;
  plan.padded_groups = 0;
  for (std::size_t h = 0; h < groups.size(); ++h) {
    const Group& g = groups[h];
    // A one-slot support is the point mass on that slot in x and in z (the slot stays
    // present): its distance is 0 whatever the counts.
    if (st.group_comp[h] < 0) continue;
    plan.eta = std::max(plan.eta, GroupDistance(counts, g, plan.far));
    bool group_padded = false;
    for (int kappa : g.types) group_padded = group_padded || padded[kappa];
    plan.padded_groups += group_padded;
    if (!group_padded)
      plan.eta_rate =
          std::max(plan.eta_rate, 2.0 * (g.types.size() + g.fixed) / plan.theta +
                                      4.0 * st.foreign[h] * st.delta + 2.0 * plan.balance);
  }
}

// The plan at one δ: Θ, the counts, the fill and the certificate. False when the support does
// not fit.
bool PlanAt(const TypeCounts& counts, const std::vector<Group>& groups, const Structure& st,
            const std::vector<std::uint64_t>& residue_sizes, FrequencyPlan& plan) {
  plan.theta = LargestTheta(counts, st, residue_sizes);
  if (plan.theta == 0.0) return false;
  plan.far = GroupCounts(counts, st, plan.theta);
  Finish(counts, groups, st, residue_sizes, plan);
  return true;
}

// The balanced plan at one δ and a given Θ (docs/theory.md §2.4, step 5): every scale below ν is
// raised to ν, the largest ν ≤ 1 whose counts fit (bisection; it starts at the smallest scale,
// where the counts are step 3's), then each residue class without a filler type shares its room
// among its elastic types (Balance). False when step 3's counts at Θ do not fit.
bool BalancedPlanAt(const TypeCounts& counts, const std::vector<Group>& groups, const Structure& st,
                    const std::vector<std::uint64_t>& residue_sizes, double theta,
                    FrequencyPlan& plan) {
  const std::vector<double> scales = SupportScales(st, theta, counts.far.size());
  double lo = 1.0;
  for (int k : st.support) lo = std::min(lo, scales[k]);
  if (!Fits(counts, CountsAt(counts, st, scales, lo), residue_sizes)) return false;
  double hi = 1.0;
  if (Fits(counts, CountsAt(counts, st, scales, hi), residue_sizes)) lo = hi;
  for (int iteration = 0; iteration < 64 && lo < hi; ++iteration) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (Fits(counts, CountsAt(counts, st, scales, mid), residue_sizes) ? lo : hi) = mid;
  }
  plan.theta = theta;
  plan.nu = lo;
  plan.far = CountsAt(counts, st, scales, lo);
  plan.balance = 0.0;
  plan.balanced_residues = 0;
  if (lo < 1.0) {
    std::vector<bool> supported(counts.far.size(), false);
    for (int k : st.support) supported[k] = true;
    for (int r = 0; r < counts.period; ++r) {
      const double e = Balance(counts, supported, scales, lo, r, residue_sizes[r], plan.far);
      if (e < 0.0) continue;
      plan.balance = std::max(plan.balance, e);
      ++plan.balanced_residues;
    }
  }
  Finish(counts, groups, st, residue_sizes, plan);
  return true;
}

// δ = 0 (one scale per coupled support, no light types) and δ = 2^−k down to the smallest
// share any type can have, 1/max S_h; below it every type is heavy again.
std::vector<double> Deltas(const std::vector<Group>& groups) {
  double largest = 1.0;
  for (const Group& g : groups) largest = std::max(largest, g.mass);
  std::vector<double> deltas = {0.0};
  for (double d = 0.5; d * largest >= 1.0 && deltas.size() < 70; d /= 2) deltas.push_back(d);
  return deltas;
}

}  // namespace

FrequencyPlan PlanFrequencyMatching(const TypeCounts& counts,
                                    const std::vector<std::uint64_t>& residue_sizes,
                                    std::uint64_t z_length,
                                    const std::vector<const Transformer*>& models, bool balance) {
  const std::vector<Group> groups = DistinctGroups(counts, models);
  FrequencyPlan best;
  bool found = false;
  auto consider = [&](FrequencyPlan& plan) {
    if (!found || plan.eta < best.eta) best = std::move(plan);
    found = true;
  };
  for (double delta : Deltas(groups)) {
    const Structure st = Build(counts, groups, delta);
    if (delta > 0.0 && !st.has_light) continue;  // the structure of δ = 0 again
    FrequencyPlan plan;
    if (!PlanAt(counts, groups, st, residue_sizes, plan)) continue;
    const bool padded = plan.padded_groups > 0;
    const double theta = plan.theta;
    consider(plan);
    // Δ* > 1 and a residue class needed padding: the balanced plans of step 5 at Θ, Θ/2, …
    // down to 1 (the proof needs one within a factor 2 above its Θ, docs/theory.md §2.4).
    if (!balance || counts.period == 1 || !padded) continue;
    for (double t = theta; t >= 1.0 || t == theta; t /= 2) {
      FrequencyPlan balanced;
      if (BalancedPlanAt(counts, groups, st, residue_sizes, t, balanced)) consider(balanced);
    }
  }
  if (!found) {
    std::uint64_t widest = 0;
    const Structure st = Build(counts, groups, 0.0);
    for (int r = 0; r < counts.period; ++r) {
      std::uint64_t types = 0;
      for (int k : st.support) types += k / counts.alphabet == r;
      widest = std::max(widest, types);
    }
    throw OptionError(
        "length",
        fmt::format("frequency needs at least {} positions to keep every maximal type of x",
                    widest * counts.period + counts.suffix.size()));
  }
  best.groups = static_cast<int>(groups.size());
  best.hardmax_regime = true;
  for (const Transformer* model : models)
    best.hardmax_regime = best.hardmax_regime && InHardmaxRegime(*model, counts.length, z_length);
  if (best.hardmax_regime)
    for (const Transformer* model : models)
      best.tie_slack = std::max(best.tie_slack, TieSlack(*model, counts.length, z_length));
  return best;
}

namespace {

class FrequencyMatching : public Simulator {
 public:
  std::string name() const override { return "frequency"; }
  SimulatorTraits traits() const override {
    return {.model_aware = true, .one_layer_only = true, .claims_eta = true};
  }
  Simulation Simulate(const SimulationInput& in) const override {
    Simulation out;
    if (SimulateShortString(in, out)) return out;
    const FarRegion region = PlanFarRegion(in.counts, in.target_length, "frequency");
    const std::uint64_t z_length = region.length + in.counts.suffix.size();
    const FrequencyPlan plan =
        PlanFrequencyMatching(in.counts, region.residue_sizes, z_length, in.models);
    out.z = LayOut(in.counts, region, plan.far);
    out.length = z_length;
    out.theta = plan.theta;
    out.eta =
        plan.hardmax_regime ? plan.eta + plan.tie_slack : std::numeric_limits<double>::quiet_NaN();
    out.detail = fmt::format(
        "Θ = {:.6g}, δ = {:.3g}; {} coupled components ({} copied exactly); {}{} padded groups; {}",
        plan.theta, plan.delta, plan.components, plan.exact_components,
        plan.nu > 0.0 ? fmt::format("ν = {:.6g}, {} balanced residue classes "
                                    "(e = {:.3g}); ",
                                    plan.nu, plan.balanced_residues, plan.balance)
                      : std::string(),
        plan.padded_groups,
        plan.hardmax_regime
            ? (plan.tie_slack > 0.0
                   ? fmt::format("η ≤ {:.3g} (hardmax regime; {:.3g} of it for finite attention "
                                 "on keys within θ of the maximum)",
                                 plan.eta + plan.tie_slack, plan.tie_slack)
                   : fmt::format("η ≤ {:.3g} (hardmax regime)", plan.eta))
            : std::string("outside the hardmax regime: no η bound claimed"));
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeFrequencyMatching() { return std::make_unique<FrequencyMatching>(); }

}  // namespace ltsim
