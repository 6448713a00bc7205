// The order-1 Markov-chain family.
#include "gen/input_families.h"

#include <algorithm>
#include <optional>

#include "ltsim/core/seed.h"

namespace ltsim::inputs {

namespace {

// Row s of a Markov chain: min(S, 16) distinct successor tokens (all of Σ when S ≤ 16) with
// weights ~ Dir(α). A pure function of (seed, s), so rows are drawn only for visited states.
struct MarkovRow {
  std::vector<int> next;
  TokenLaw law;
};

MarkovRow DrawMarkovRow(const InputSpec& spec, Token state) {
  FuzzEngine engine(StreamSeed(spec.seed, "markov-row", state));
  const int support = std::min(spec.alphabet, kMarkovSupport);
  MarkovRow row;
  row.next = SampleDistinct(support, spec.alphabet, engine);
  const std::vector<double> weights = DrawDirichlet(support, spec.alpha, engine);
  row.law = TokenLaw(weights.begin(), weights.end());
  return row;
}

}  // namespace

// An order-1 Markov chain: x_1 uniform, x_{j+1} from row x_j.
Runs MarkovRuns(const InputSpec& spec, FuzzEngine& engine, std::string& /*variant*/) {
  std::vector<std::optional<MarkovRow>> rows(spec.alphabet);
  Token token = UniformToken(spec.alphabet, engine);
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j) {
    AppendRun(runs, token, 1);
    if (!rows[token]) rows[token] = DrawMarkovRow(spec, token);
    token = static_cast<Token>(rows[token]->next[rows[token]->law(engine)]);
  }
  return runs;
}

}  // namespace ltsim::inputs
