// The uniform family: i.i.d. uniform tokens.
#include "gen/input_families.h"


namespace ltsim::inputs {

Runs UniformRuns(const InputSpec& spec, FuzzEngine& engine, std::string& /*variant*/) {
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j)
    AppendRun(runs, UniformToken(spec.alphabet, engine), 1);
  return runs;
}

}  // namespace ltsim::inputs
