// `test-drop-suffix`: a deliberately broken simulator, so tests can check that campaigns catch one.
#include "sim/simulators.h"

namespace ltsim {
namespace {

// Frequency matching whose z loses x's last τ*+1 tokens (replaced by copies of the first far
// token) while the claimed η stays: requirement (a) of docs/theory.md §2.4 fails, so sim ≤ L·η can.
class TestDropSuffix : public Simulator {
 public:
  std::string name() const override { return "test-drop-suffix"; }
  SimulatorTraits traits() const override {
    return {.model_aware = true, .one_layer_only = true, .claims_eta = true};
  }
  Simulation Simulate(const SimulationInput& in) const override {
    Simulation out = MakeFrequencyMatching()->Simulate(in);
    if (out.z.empty()) return out;
    const Token filler = out.z.front().token;
    std::uint64_t drop = in.counts.suffix.size();
    while (drop > 0 && !out.z.empty()) {
      const std::uint64_t take = std::min(drop, out.z.back().count);
      out.z.back().count -= take;
      if (out.z.back().count == 0) out.z.pop_back();
      drop -= take;
    }
    AppendRun(out.z, filler, in.counts.suffix.size());
    out.detail = "deliberately broken: frequency matching without x's suffix";
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeTestDropSuffix() { return std::make_unique<TestDropSuffix>(); }

}  // namespace ltsim
