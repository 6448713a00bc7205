// The periodic family: a random pattern repeated, with rare substitutions.
#include "gen/input_families.h"


namespace ltsim::inputs {

// A uniform pattern of `pattern` tokens repeated; each position is replaced by a uniform token
// with probability `noise`.
Runs PeriodicRuns(const InputSpec& spec, FuzzEngine& engine, std::string& /*variant*/) {
  std::vector<Token> pattern(spec.pattern);
  for (Token& t : pattern) t = UniformToken(spec.alphabet, engine);
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j) {
    const Token token = Coin(spec.noise, engine) ? UniformToken(spec.alphabet, engine)
                                                 : pattern[j % pattern.size()];
    AppendRun(runs, token, 1);
  }
  return runs;
}

}  // namespace ltsim::inputs
