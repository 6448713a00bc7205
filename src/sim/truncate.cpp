// `truncate`: the last n tokens of x (a baseline that forgets the far region's frequencies).
#include <algorithm>

#include "sim/simulators.h"

namespace ltsim {
namespace {

class Truncate : public Simulator {
 public:
  std::string name() const override { return "truncate"; }
  SimulatorTraits traits() const override { return {.model_free = true}; }
  Simulation Simulate(const SimulationInput& in) const override {
    const std::uint64_t n = std::min(in.target_length, in.counts.length);
    const std::uint64_t skip = in.counts.length - n;
    Simulation out;
    std::uint64_t seen = 0;
    auto reader = in.x.Open();
    Chunk chunk;
    while (reader->Next(chunk)) {
      const std::uint64_t len = chunk.length();
      const std::uint64_t from = seen >= skip ? 0 : std::min(len, skip - seen);
      seen += len;
      if (from == len) continue;
      if (chunk.kind == Chunk::Kind::kRun) {
        AppendRun(out.z, chunk.run.token, len - from);
      } else {
        for (std::uint64_t k = from; k < len; ++k) AppendRun(out.z, chunk.at(k), 1);
      }
    }
    out.length = n;
    out.detail = "the last n tokens of x; no η bound claimed";
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeTruncate() { return std::make_unique<Truncate>(); }

}  // namespace ltsim
