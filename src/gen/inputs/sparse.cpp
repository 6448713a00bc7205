// The k-sparse planted-correlation family.
#include "gen/input_families.h"

#include <algorithm>

namespace ltsim::inputs {

// Seed 000's k-sparse planted correlation, with k = `parents`. Position j (1-based) with fewer
// than k earlier positions is uniform. Otherwise, with probability `noise` it is uniform, and
// else x_j = (Σ of its parents' tokens) mod S, the parents being k distinct positions drawn
// uniformly among the previous m = min(j − 1, 64); when k = m they are the whole window (no
// draw). Sum mod S generalises sparse parity and lets a test recompute the planted function.
Runs SparseRuns(const InputSpec& spec, FuzzEngine& engine, std::string& /*variant*/) {
  const int k = spec.parents;
  std::vector<Token> window(kSparseWindow);  // x at 0-based position i sits at window[i % 64]
  Runs runs;
  for (std::uint64_t i = 0; i < spec.length; ++i) {
    const int m = static_cast<int>(std::min<std::uint64_t>(i, kSparseWindow));
    Token token;
    if (m < k || Coin(spec.noise, engine)) {
      token = UniformToken(spec.alphabet, engine);
    } else {
      std::vector<int> back(k);  // distances − 1
      if (k == m) {
        for (int t = 0; t < k; ++t) back[t] = t;
      } else {
        back = SampleDistinct(k, m, engine);
      }
      long long sum = 0;
      for (int b : back) sum += window[(i - 1 - b) % kSparseWindow];
      token = static_cast<Token>(sum % spec.alphabet);
    }
    window[i % kSparseWindow] = token;
    AppendRun(runs, token, 1);
  }
  return runs;
}

}  // namespace ltsim::inputs
