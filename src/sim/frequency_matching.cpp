// `frequency`: one scale per coupled maximal set, so both models' attention survives
// (docs/theory.md §2.4).
#include "ltsim/sim/frequency_matching.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// Union-find over joint types.
class Components {
 public:
  explicit Components(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int k) { return parent_[k] == k ? k : parent_[k] = Find(parent_[k]); }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

// The coupled structure, independent of Θ.
struct Coupling {
  std::vector<Group> groups;
  std::vector<int> group_root;  // component root of each group (−1: no far types)
  std::vector<int> type_root;   // component root of each joint type (−1: not in a group)
  std::vector<int> roots;
  std::vector<double> min_mass;  // per root: min S_h over its scaled groups (or S_C)
};

Coupling Couple(const TypeCounts& counts, const std::vector<const Transformer*>& models) {
  Coupling c;
  for (const Transformer* model : models)
    for (Group& g : HeadGroups(counts, *model)) c.groups.push_back(std::move(g));
  Components uf(counts.far.size());
  std::vector<bool> member(counts.far.size(), false);
  for (const Group& g : c.groups) {
    for (int kappa : g.types) {
      member[kappa] = true;
      uf.Union(kappa, g.types.front());
    }
  }
  c.type_root.assign(counts.far.size(), -1);
  for (std::size_t k = 0; k < counts.far.size(); ++k)
    if (member[k]) c.type_root[k] = uf.Find(static_cast<int>(k));
  c.min_mass.assign(counts.far.size(), std::numeric_limits<double>::infinity());
  std::vector<double> component_mass(counts.far.size(), 0.0);
  for (std::size_t k = 0; k < counts.far.size(); ++k)
    if (member[k]) component_mass[c.type_root[k]] += static_cast<double>(counts.far[k]);
  for (const Group& g : c.groups) {
    const int root = g.types.empty() ? -1 : uf.Find(g.types.front());
    c.group_root.push_back(root);
    if (root >= 0 && g.scaled()) c.min_mass[root] = std::min(c.min_mass[root], g.mass);
  }
  for (std::size_t k = 0; k < counts.far.size(); ++k) {
    if (!member[k] || c.type_root[k] != static_cast<int>(k)) continue;
    c.roots.push_back(static_cast<int>(k));
    if (std::isinf(c.min_mass[k])) c.min_mass[k] = component_mass[k];  // only trivial groups
  }
  return c;
}

double Scale(const Coupling& c, int root, double theta) {
  return std::min(1.0, theta / c.min_mass[root]);
}

// c'_κ for the group types at common total Θ (0 for types outside every group).
std::vector<std::uint64_t> GroupCounts(const TypeCounts& counts, const Coupling& c, double theta) {
  std::vector<std::uint64_t> out(counts.far.size(), 0);
  for (std::size_t k = 0; k < counts.far.size(); ++k) {
    if (c.type_root[k] < 0) continue;
    const double lambda = Scale(c, c.type_root[k], theta);
    const double scaled = std::round(lambda * static_cast<double>(counts.far[k]));
    out[k] = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(scaled));
  }
  return out;
}

bool Fits(const TypeCounts& counts, const std::vector<std::uint64_t>& far,
          const std::vector<std::uint64_t>& residue_sizes) {
  for (int r = 0; r < counts.period; ++r) {
    std::uint64_t used = 0;
    for (int s = 0; s < counts.alphabet; ++s) used += far[counts.TypeIndex(s, r)];
    if (used > residue_sizes[r]) return false;
  }
  return true;
}

// The largest Θ whose group counts fit (bisection on log Θ; the counts grow with Θ).
double LargestTheta(const TypeCounts& counts, const Coupling& c,
                    const std::vector<std::uint64_t>& residue_sizes) {
  double lo = 1e-12;
  double hi = 1.0;
  for (int root : c.roots) hi = std::max(hi, c.min_mass[root]);
  if (Fits(counts, GroupCounts(counts, c, hi), residue_sizes)) return hi;
  if (!Fits(counts, GroupCounts(counts, c, lo), residue_sizes)) {
    std::uint64_t widest = 0;
    for (int r = 0; r < counts.period; ++r) {
      std::uint64_t types = 0;
      for (int s = 0; s < counts.alphabet; ++s) types += c.type_root[counts.TypeIndex(s, r)] >= 0;
      widest = std::max(widest, types);
    }
    throw OptionError(
        "length",
        fmt::format("frequency needs at least {} positions to keep every maximal type of x",
                    widest * counts.period + counts.suffix.size()));
  }
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double mid = std::sqrt(lo * hi);
    (Fits(counts, GroupCounts(counts, c, mid), residue_sizes) ? lo : hi) = mid;
  }
  return lo;
}

// Fills each residue class to N_r: with the present types outside every group in
// proportion to their counts, else by padding the largest group type. Returns the padded
// types.
std::vector<bool> Fill(const TypeCounts& counts, const Coupling& c,
                       const std::vector<std::uint64_t>& residue_sizes,
                       std::vector<std::uint64_t>& far) {
  std::vector<bool> padded(counts.far.size(), false);
  for (int r = 0; r < counts.period; ++r) {
    std::uint64_t used = 0;
    std::vector<int> fillers;
    std::vector<double> quotas;
    int largest = -1;
    for (int s = 0; s < counts.alphabet; ++s) {
      const int k = counts.TypeIndex(s, r);
      used += far[k];
      if (counts.far[k] > 0 && c.type_root[k] < 0) {
        fillers.push_back(k);
        quotas.push_back(static_cast<double>(counts.far[k]));
      }
      if (c.type_root[k] >= 0 && (largest < 0 || far[k] > far[largest])) largest = k;
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

bool InHardmaxRegime(const Transformer& model, std::uint64_t x_length, std::uint64_t z_length) {
  const Layer& layer = model.layers.front();
  if (layer.bias_scaling != BiasScaling::kNone) return false;
  if (layer.attention == Attention::kHardmax) return true;
  if (layer.attention != Attention::kFinite) return false;
  const double shortest = static_cast<double>(std::min(x_length, z_length));
  return std::log2(shortest) >= Log2HardmaxLength(model);
}

}  // namespace

FrequencyPlan PlanFrequencyMatching(const TypeCounts& counts,
                                    const std::vector<std::uint64_t>& residue_sizes,
                                    std::uint64_t z_length,
                                    const std::vector<const Transformer*>& models) {
  const Coupling c = Couple(counts, models);
  FrequencyPlan plan;
  plan.theta = LargestTheta(counts, c, residue_sizes);
  plan.far = GroupCounts(counts, c, plan.theta);
  const std::vector<bool> padded = Fill(counts, c, residue_sizes, plan.far);
  plan.components = static_cast<int>(c.roots.size());
  for (int root : c.roots) plan.exact_components += Scale(c, root, plan.theta) == 1.0;
  plan.hardmax_regime = true;
  for (const Transformer* model : models)
    plan.hardmax_regime = plan.hardmax_regime && InHardmaxRegime(*model, counts.length, z_length);
  for (std::size_t h = 0; h < c.groups.size(); ++h) {
    const Group& g = c.groups[h];
    // A one-slot support is the point mass on that slot in x and in z (the slot stays
    // present): its distance is 0 whatever the counts.
    if (c.group_root[h] < 0 || !g.scaled()) continue;
    const double lambda = Scale(c, c.group_root[h], plan.theta);
    double deviation = (1.0 - lambda) * g.fixed;
    double mass_z = 0.0;
    bool group_padded = false;
    for (int kappa : g.types) {
      const double cz = static_cast<double>(plan.far[kappa]);
      deviation += std::abs(cz - lambda * static_cast<double>(counts.far[kappa]));
      mass_z += cz;
      group_padded = group_padded || padded[kappa];
    }
    const double norm = std::max(lambda * (g.mass + g.fixed), mass_z + g.fixed);
    plan.eta = std::max(plan.eta, 2.0 * deviation / norm);
    plan.padded_groups += group_padded;
    if (lambda < 1.0 && !group_padded)
      plan.eta_rate = std::max(plan.eta_rate, 2.0 * (g.types.size() + g.fixed) / plan.theta);
  }
  return plan;
}

namespace {

class FrequencyMatching : public Simulator {
 public:
  std::string name() const override { return "frequency"; }
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
    out.eta = plan.hardmax_regime ? plan.eta : std::numeric_limits<double>::quiet_NaN();
    out.detail = fmt::format(
        "Θ = {:.6g}; {} coupled components ({} copied exactly); {} padded groups; {}", plan.theta,
        plan.components, plan.exact_components, plan.padded_groups,
        plan.hardmax_regime ? fmt::format("η ≤ {:.3g} (hardmax regime)", plan.eta)
                            : std::string("outside the hardmax regime: no η bound claimed"));
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeFrequencyMatching() { return std::make_unique<FrequencyMatching>(); }

}  // namespace ltsim
