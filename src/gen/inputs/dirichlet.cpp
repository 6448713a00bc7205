// The Dirichlet family (Theorem 4.2's prior, docs/theory.md).
#include "gen/input_families.h"


namespace ltsim::inputs {

// π ~ Dir(α) once per string, then x_j i.i.d. from π.
Runs DirichletRuns(const InputSpec& spec, FuzzEngine& engine, std::string& /*variant*/) {
  const std::vector<double> pi = DrawDirichlet(spec.alphabet, spec.alpha, engine);
  TokenLaw law(pi.begin(), pi.end());
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j)
    AppendRun(runs, static_cast<Token>(law(engine)), 1);
  return runs;
}

}  // namespace ltsim::inputs
