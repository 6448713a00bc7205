// `uniform`: a uniformly random n-subset of x's positions, in order (seeded baseline).
#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_01.hpp>

#include "ltsim/core/seed.h"
#include "sim/simulators.h"

namespace ltsim {
namespace {

// Selection sampling (Knuth's Algorithm S): position j is kept with probability
// (n − kept)/(T − j), which makes every n-subset equally likely, in one streaming pass.
class UniformSubsequence : public Simulator {
 public:
  std::string name() const override { return "uniform"; }
  SimulatorTraits traits() const override { return {.model_free = true, .seeded = true}; }
  Simulation Simulate(const SimulationInput& in) const override {
    const std::uint64_t total = in.counts.length;
    const std::uint64_t n = std::min(in.target_length, total);
    boost::random::mt19937_64 engine(StreamSeed(in.seed, "simulate/uniform"));
    boost::random::uniform_01<double> unit;
    Simulation out;
    std::uint64_t seen = 0;
    std::uint64_t kept = 0;
    auto reader = in.x.Open();
    Chunk chunk;
    while (kept < n && reader->Next(chunk)) {
      for (std::uint64_t k = 0; k < chunk.length() && kept < n; ++k, ++seen) {
        const double keep = static_cast<double>(n - kept) / static_cast<double>(total - seen);
        if (unit(engine) >= keep) continue;
        AppendRun(out.z, chunk.at(k), 1);
        ++kept;
      }
    }
    out.length = kept;
    out.detail = "uniform random subsequence of x (selection sampling); no η bound claimed";
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeUniformSubsequence() {
  return std::make_unique<UniformSubsequence>();
}

}  // namespace ltsim
