// `frequency-agnostic`: per-residue largest-remainder apportionment of every type (a baseline,
// docs/theory.md §2.5).
#include <fmt/format.h>

#include <algorithm>

#include "ltsim/core/error.h"
#include "sim/simulators.h"

namespace ltsim {
namespace {

// Apportions N_r positions of residue r among x's present types of residue r in proportion
// to their counts, keeping each at least once. Knows only Δ* and τ* of the models: it is
// the single-global-scale construction whose pitfalls docs/theory.md §2.4 describes.
std::vector<std::uint64_t> Apportion(const TypeCounts& counts,
                                     const std::vector<std::uint64_t>& residue_sizes) {
  std::vector<std::uint64_t> far(counts.far.size(), 0);
  for (int r = 0; r < counts.period; ++r) {
    std::vector<int> present;
    std::vector<double> quotas;
    for (int s = 0; s < counts.alphabet; ++s) {
      const int k = counts.TypeIndex(s, r);
      if (counts.far[k] == 0) continue;
      present.push_back(k);
      quotas.push_back(static_cast<double>(counts.far[k]));
    }
    if (present.size() > residue_sizes[r])
      throw OptionError(
          "length",
          fmt::format("frequency-agnostic needs at least {} positions to keep every present type",
                      present.size() * counts.period + counts.suffix.size()));
    // One copy of every present type, the rest by largest remainder of the counts.
    const std::vector<std::uint64_t> rest =
        LargestRemainder(quotas, residue_sizes[r] - present.size());
    for (std::size_t i = 0; i < present.size(); ++i) far[present[i]] = 1 + rest[i];
  }
  return far;
}

class FrequencyAgnostic : public Simulator {
 public:
  std::string name() const override { return "frequency-agnostic"; }
  SimulatorTraits traits() const override { return {}; }
  Simulation Simulate(const SimulationInput& in) const override {
    Simulation out;
    if (SimulateShortString(in, out)) return out;
    const FarRegion region = PlanFarRegion(in.counts, in.target_length, "frequency-agnostic");
    out.z = LayOut(in.counts, region, Apportion(in.counts, region.residue_sizes));
    out.length = region.length + in.counts.suffix.size();
    out.detail = "every present type kept, counts apportioned per residue; no η bound claimed";
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeFrequencyAgnostic() { return std::make_unique<FrequencyAgnostic>(); }

}  // namespace ltsim
