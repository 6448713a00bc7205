// The stress family: strings built to stress simulators (the pitfalls of docs/theory.md §2):
// rare maximal types, suffix ties, mixed-scale counts and long runs.
#include "gen/input_families.h"

#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <utility>

namespace ltsim::inputs {

namespace {

enum class StressVariant { kRareTypes, kSuffixTies, kMixedScale, kLongRuns };

const char* StressVariantName(StressVariant variant) {
  switch (variant) {
    case StressVariant::kRareTypes:
      return "rare-types";
    case StressVariant::kSuffixTies:
      return "suffix-ties";
    case StressVariant::kMixedScale:
      return "mixed-scale";
    case StressVariant::kLongRuns:
      return "long-runs";
  }
  return "?";
}

// The alphabet split into 1–2 common tokens (at most S − 1 of them when S ≥ 2) and up to 32
// rare ones: under a random model the maximal type is then often a rare one.
struct Split {
  std::vector<Token> common;
  std::vector<Token> rare;
};

Split DrawSplit(int alphabet, FuzzEngine& engine) {
  const int common = std::min(boost::random::uniform_int_distribution<int>(1, 2)(engine),
                              std::max(1, alphabet - 1));
  const int rare = std::min(alphabet - common, kStressRareTokens);
  const std::vector<int> tokens = SampleDistinct(common + rare, alphabet, engine);
  Split split;
  split.common.assign(tokens.begin(), tokens.begin() + common);
  split.rare.assign(tokens.begin() + common, tokens.end());
  return split;
}

// Each rare token at 1–3 uniform positions of [0, end); sorted, one token per position.
std::vector<std::pair<std::uint64_t, Token>> DrawRareEvents(const Split& split, std::uint64_t end,
                                                            FuzzEngine& engine) {
  std::vector<std::pair<std::uint64_t, Token>> events;
  if (end == 0) return events;
  for (Token token : split.rare) {
    const int count = boost::random::uniform_int_distribution<int>(1, 3)(engine);
    for (int c = 0; c < count; ++c)
      events.emplace_back(
          boost::random::uniform_int_distribution<std::uint64_t>(0, end - 1)(engine), token);
  }
  std::sort(events.begin(), events.end());
  auto same_position = [](const auto& a, const auto& b) { return a.first == b.first; };
  events.erase(std::unique(events.begin(), events.end(), same_position), events.end());
  return events;
}

// `count` positions of i.i.d. common tokens.
void AppendBackground(Runs& runs, const Split& split, std::uint64_t count, FuzzEngine& engine) {
  if (split.common.size() == 1) {
    if (count > 0) AppendRun(runs, split.common.front(), count);
    return;
  }
  boost::random::uniform_int_distribution<int> pick(0, static_cast<int>(split.common.size()) - 1);
  for (std::uint64_t j = 0; j < count; ++j) AppendRun(runs, split.common[pick(engine)], 1);
}

// Common background with the rare events in [0, far_end), up to position `far_end`.
void AppendSprinkled(Runs& runs, const Split& split, std::uint64_t rare_end, std::uint64_t far_end,
                     FuzzEngine& engine) {
  std::uint64_t at = 0;
  for (const auto& [position, token] : DrawRareEvents(split, rare_end, engine)) {
    AppendBackground(runs, split, position - at, engine);
    AppendRun(runs, token, 1);
    at = position + 1;
  }
  AppendBackground(runs, split, far_end - at, engine);
}

// Rare maximal types: a background of 1–2 common tokens with every rare token 1–3 times.
Runs RareTypeRuns(const InputSpec& spec, FuzzEngine& engine) {
  const Split split = DrawSplit(spec.alphabet, engine);
  Runs runs;
  AppendSprinkled(runs, split, spec.length, spec.length, engine);
  return runs;
}

// Suffix ties: the last 1–4 tokens are rare tokens (one repeated, or each drawn anew) that
// also occur 1–3 times far away, in the first half of the string before that suffix.
Runs SuffixTieRuns(const InputSpec& spec, FuzzEngine& engine) {
  const Split split = DrawSplit(spec.alphabet, engine);
  const std::uint64_t suffix = std::min<std::uint64_t>(
      spec.length, boost::random::uniform_int_distribution<int>(1, kStressMaxSuffix)(engine));
  const std::uint64_t far_end = spec.length - suffix;
  Runs runs;
  AppendSprinkled(runs, split, (far_end + 1) / 2, far_end, engine);
  const std::vector<Token>& pool = split.rare.empty() ? split.common : split.rare;
  boost::random::uniform_int_distribution<int> pick(0, static_cast<int>(pool.size()) - 1);
  const bool repeated = Coin(0.5, engine);
  const Token first = pool[pick(engine)];
  for (std::uint64_t j = 0; j < suffix; ++j)
    AppendRun(runs, repeated ? first : pool[pick(engine)], 1);
  return runs;
}

// Mixed-scale counts: 3–8 tokens (at most S) i.i.d. with probabilities ∝ b^−i, b ∈ {10, 100},
// so the expected counts span several orders of magnitude (and the rarest may be absent).
Runs MixedScaleRuns(const InputSpec& spec, FuzzEngine& engine) {
  const int used =
      std::min(spec.alphabet, boost::random::uniform_int_distribution<int>(3, 8)(engine));
  const double base = Coin(0.5, engine) ? 100.0 : 10.0;
  const std::vector<int> tokens = SampleDistinct(used, spec.alphabet, engine);
  std::vector<double> weights(used, 1.0);  // b^−i by division: correctly rounded everywhere
  for (int i = 1; i < used; ++i) weights[i] = weights[i - 1] / base;
  TokenLaw law(weights.begin(), weights.end());
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j)
    AppendRun(runs, static_cast<Token>(tokens[law(engine)]), 1);
  return runs;
}

// Long runs: runs of uniform tokens with log-uniform lengths in [1, T/4 + 1]: an octave
// e ∈ {0, …, ⌊log₂(T/4 + 1)⌋} uniformly, then a length uniform in [2^e, 2^(e+1)) (capped),
// in integers only so that no libm rounding can change the string.
Runs LongRunRuns(const InputSpec& spec, FuzzEngine& engine) {
  const std::uint64_t longest = spec.length / 4 + 1;
  int octaves = 0;
  while ((2ULL << octaves) <= longest) ++octaves;
  Runs runs;
  for (std::uint64_t left = spec.length; left > 0;) {
    const int e = boost::random::uniform_int_distribution<int>(0, octaves)(engine);
    const std::uint64_t low = 1ULL << e;
    const std::uint64_t high = std::min(longest, (low << 1) - 1);
    const std::uint64_t length =
        boost::random::uniform_int_distribution<std::uint64_t>(low, high)(engine);
    const std::uint64_t count = std::min(length, left);
    AppendRun(runs, UniformToken(spec.alphabet, engine), count);
    left -= count;
  }
  return runs;
}

Runs VariantRuns(const InputSpec& spec, StressVariant variant, FuzzEngine& engine) {
  switch (variant) {
    case StressVariant::kRareTypes:
      return RareTypeRuns(spec, engine);
    case StressVariant::kSuffixTies:
      return SuffixTieRuns(spec, engine);
    case StressVariant::kMixedScale:
      return MixedScaleRuns(spec, engine);
    case StressVariant::kLongRuns:
      return LongRunRuns(spec, engine);
  }
  return {};
}

}  // namespace

// One variant per string, drawn uniformly from the engine before the string itself.
Runs StressRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant) {
  const auto drawn =
      static_cast<StressVariant>(boost::random::uniform_int_distribution<int>(0, 3)(engine));
  variant = StressVariantName(drawn);
  return VariantRuns(spec, drawn, engine);
}

}  // namespace ltsim::inputs
