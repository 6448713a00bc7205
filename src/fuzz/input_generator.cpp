// Seeded input strings for fuzzing (uniform, Dirichlet, k-sparse planted, Markov, periodic,
// stress), built in memory as runs with Boost.Random engines and distributions only.
#include "ltsim/fuzz/input_generator.h"

#include <algorithm>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/fuzz/model_generator.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr int kSparseWindow = 64;      // sparse parents lie among the previous 64 positions
constexpr int kMarkovSupport = 16;     // a Markov row is supported on at most 16 tokens
constexpr int kStressRareTokens = 32;  // stress strings sprinkle at most 32 rare tokens
constexpr int kStressMaxSuffix = 4;    // suffix ties cover the last 1..4 tokens (τ + 1 ≤ 4)
constexpr std::uint64_t kMaxLength = 1000000000;

using Runs = std::vector<Run>;
using TokenLaw = boost::random::discrete_distribution<int, double>;

Token UniformToken(int alphabet, FuzzEngine& engine) {
  return static_cast<Token>(boost::random::uniform_int_distribution<int>(0, alphabet - 1)(engine));
}

bool Coin(double probability, FuzzEngine& engine) {
  return boost::random::bernoulli_distribution<double>(probability)(engine);
}

// k distinct values of {0, …, n − 1} in uniformly random order (Floyd's sample, then a
// Fisher–Yates shuffle). For small k: membership is a linear scan.
std::vector<int> SampleDistinct(int k, int n, FuzzEngine& engine) {
  std::vector<int> chosen;
  for (int i = n - k; i < n; ++i) {
    const int t = boost::random::uniform_int_distribution<int>(0, i)(engine);
    const bool seen = std::find(chosen.begin(), chosen.end(), t) != chosen.end();
    chosen.push_back(seen ? i : t);
  }
  for (int i = k - 1; i > 0; --i)
    std::swap(chosen[i], chosen[boost::random::uniform_int_distribution<int>(0, i)(engine)]);
  return chosen;
}

// π ~ Dir(α, …, α) on n entries as normalised Gamma(α, 1) draws (Theorem 4.2's prior). When
// every draw underflows to 0 (very small α) π is the point mass on a uniform entry, the α → 0
// limit of the prior.
std::vector<double> DrawDirichlet(int n, double alpha, FuzzEngine& engine) {
  boost::random::gamma_distribution<double> gamma(alpha, 1.0);
  std::vector<double> pi(n);
  double total = 0.0;
  for (double& p : pi) total += (p = gamma(engine));
  if (!(total > 0.0)) {
    std::fill(pi.begin(), pi.end(), 0.0);
    pi[UniformToken(n, engine)] = total = 1.0;
  }
  for (double& p : pi) p /= total;
  return pi;
}

Runs UniformRuns(const InputSpec& spec, FuzzEngine& engine) {
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j)
    AppendRun(runs, UniformToken(spec.alphabet, engine), 1);
  return runs;
}

// π ~ Dir(α) once per string, then x_j i.i.d. from π.
Runs DirichletRuns(const InputSpec& spec, FuzzEngine& engine) {
  const std::vector<double> pi = DrawDirichlet(spec.alphabet, spec.alpha, engine);
  TokenLaw law(pi.begin(), pi.end());
  Runs runs;
  for (std::uint64_t j = 0; j < spec.length; ++j)
    AppendRun(runs, static_cast<Token>(law(engine)), 1);
  return runs;
}

// Seed 000's k-sparse planted correlation, with k = `parents`. Position j (1-based) with fewer
// than k earlier positions is uniform. Otherwise, with probability `noise` it is uniform, and
// else x_j = (Σ of its parents' tokens) mod S, the parents being k distinct positions drawn
// uniformly among the previous m = min(j − 1, 64); when k = m they are the whole window (no
// draw). Sum mod S generalises sparse parity and lets a test recompute the planted function.
Runs SparseRuns(const InputSpec& spec, FuzzEngine& engine) {
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

// An order-1 Markov chain: x_1 uniform, x_{j+1} from row x_j.
Runs MarkovRuns(const InputSpec& spec, FuzzEngine& engine) {
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

// A uniform pattern of `pattern` tokens repeated; each position is replaced by a uniform token
// with probability `noise`.
Runs PeriodicRuns(const InputSpec& spec, FuzzEngine& engine) {
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

// ---- Stress strings (theory.md §2's pitfalls): one variant per string, drawn uniformly. ----

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

Runs StressRuns(const InputSpec& spec, StressVariant variant, FuzzEngine& engine) {
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

// ---- Spec checks, names and JSON. ----

[[noreturn]] void Fail(const std::string& where, const std::string& key, const std::string& rule) {
  throw InputError(where + ": " + key + ": " + rule);
}

void CheckInteger(long long value, long long min, long long max, const std::string& where,
                  const std::string& key) {
  if (value < min || value > max) {
    Fail(where, key,
         "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
             std::to_string(value));
  }
}

std::string NumberText(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void CheckReal(double value, double min, double max, bool open_min, const std::string& where,
               const std::string& key) {
  const bool above = open_min ? value > min : value >= min;
  if (!std::isfinite(value) || !above || value > max) {
    Fail(where, key,
         std::string("must be finite, ") + (open_min ? "> " : ">= ") + NumberText(min) +
             " and <= " + NumberText(max) + ", got " + NumberText(value));
  }
}

// Every field is checked whatever the kind, so a spec is valid or not on its own.
void ValidateInputSpec(const InputSpec& spec, const std::string& where) {
  CheckInteger(static_cast<long long>(std::min<std::uint64_t>(spec.length, kMaxLength + 1)), 1,
               kMaxLength, where, "length");
  CheckInteger(spec.alphabet, 1, kMaxAlphabet, where, "alphabet");
  CheckReal(spec.alpha, 0.0, 1e6, /*open_min=*/true, where, "alpha");
  CheckInteger(spec.parents, 1, kSparseWindow, where, "parents");
  CheckReal(spec.noise, 0.0, 1.0, /*open_min=*/false, where, "noise");
  CheckInteger(spec.pattern, 1, 1 << 20, where, "pattern");
}

// "kind:length=…,alphabet=…,seed=…" plus the parameters the kind uses.
std::string SourceName(const InputSpec& spec, const char* variant) {
  std::string name =
      std::string(InputKindName(spec.kind)) + ":length=" + std::to_string(spec.length) +
      ",alphabet=" + std::to_string(spec.alphabet) + ",seed=" + std::to_string(spec.seed);
  if (spec.kind == InputKind::kDirichlet || spec.kind == InputKind::kMarkov)
    name += ",alpha=" + NumberText(spec.alpha);
  if (spec.kind == InputKind::kSparse) name += ",parents=" + std::to_string(spec.parents);
  if (spec.kind == InputKind::kPeriodic) name += ",pattern=" + std::to_string(spec.pattern);
  if (spec.kind == InputKind::kSparse || spec.kind == InputKind::kPeriodic)
    name += ",noise=" + NumberText(spec.noise);
  if (variant != nullptr) name += std::string(",variant=") + variant;
  return name;
}

constexpr const char* kKeys[] = {"kind",  "length",  "alphabet", "seed",
                                 "alpha", "parents", "noise",    "pattern"};

const nlohmann::json& Field(const nlohmann::json& json, const char* key, const std::string& where) {
  const auto it = json.find(key);
  if (it == json.end()) Fail(where, key, "missing key");
  return *it;
}

long long IntegerField(const nlohmann::json& json, const char* key, const std::string& where) {
  const nlohmann::json& value = Field(json, key, where);
  if (!value.is_number_integer()) Fail(where, key, "must be an integer");
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > (1ULL << 62))
    Fail(where, key, "is out of range");
  return value.get<long long>();
}

std::uint64_t SeedField(const nlohmann::json& json, const std::string& where) {
  const nlohmann::json& value = Field(json, "seed", where);
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<long long>() >= 0)
    return static_cast<std::uint64_t>(value.get<long long>());
  Fail(where, "seed", "must be an integer between 0 and 2^64 - 1");
}

double RealField(const nlohmann::json& json, const char* key, const std::string& where) {
  const nlohmann::json& value = Field(json, key, where);
  if (!value.is_number()) Fail(where, key, "must be a number");
  return value.get<double>();
}

InputKind KindField(const nlohmann::json& json, const std::string& where) {
  const nlohmann::json& value = Field(json, "kind", where);
  if (!value.is_string()) Fail(where, "kind", "must be a string");
  try {
    return ParseInputKind(value.get<std::string>());
  } catch (const InputError& error) {
    Fail(where, "kind", error.what());
  }
}

void CheckKeys(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw InputError(where + ": must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      Fail(where, key,
           "unknown key (expected kind, length, alphabet, seed, alpha, parents, noise, pattern)");
    }
  }
}

}  // namespace

const char* InputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kUniform:
      return "uniform";
    case InputKind::kDirichlet:
      return "dirichlet";
    case InputKind::kSparse:
      return "sparse";
    case InputKind::kMarkov:
      return "markov";
    case InputKind::kPeriodic:
      return "periodic";
    case InputKind::kStress:
      return "stress";
  }
  return "?";
}

InputKind ParseInputKind(const std::string& name) {
  for (InputKind kind : {InputKind::kUniform, InputKind::kDirichlet, InputKind::kSparse,
                         InputKind::kMarkov, InputKind::kPeriodic, InputKind::kStress}) {
    if (name == InputKindName(kind)) return kind;
  }
  throw InputError("unknown input kind '" + name +
                   "' (expected uniform, dirichlet, sparse, markov, periodic or stress)");
}

// The engine is seeded by StreamSeed(seed, kind name), so kinds sharing a seed are independent.
// The source's name is SourceName's "kind:length=…,…", ending in ",variant=V" for stress
// strings (V = rare-types, suffix-ties, mixed-scale or long-runs).
std::unique_ptr<Source> MakeInput(const InputSpec& spec) {
  ValidateInputSpec(spec, "input spec");
  FuzzEngine engine(StreamSeed(spec.seed, InputKindName(spec.kind)));
  switch (spec.kind) {
    case InputKind::kUniform:
      return MakeRunSource(UniformRuns(spec, engine), SourceName(spec, nullptr));
    case InputKind::kDirichlet:
      return MakeRunSource(DirichletRuns(spec, engine), SourceName(spec, nullptr));
    case InputKind::kSparse:
      return MakeRunSource(SparseRuns(spec, engine), SourceName(spec, nullptr));
    case InputKind::kMarkov:
      return MakeRunSource(MarkovRuns(spec, engine), SourceName(spec, nullptr));
    case InputKind::kPeriodic:
      return MakeRunSource(PeriodicRuns(spec, engine), SourceName(spec, nullptr));
    case InputKind::kStress: {
      const auto variant =
          static_cast<StressVariant>(boost::random::uniform_int_distribution<int>(0, 3)(engine));
      Runs runs = StressRuns(spec, variant, engine);
      return MakeRunSource(std::move(runs), SourceName(spec, StressVariantName(variant)));
    }
  }
  CheckFailed(__FILE__, __LINE__, "unknown input kind");
}

nlohmann::json InputSpecToJson(const InputSpec& spec) {
  return {{"kind", InputKindName(spec.kind)},
          {"length", spec.length},
          {"alphabet", spec.alphabet},
          {"seed", spec.seed},
          {"alpha", spec.alpha},
          {"parents", spec.parents},
          {"noise", spec.noise},
          {"pattern", spec.pattern}};
}

InputSpec InputSpecFromJson(const nlohmann::json& json, const std::string& where) {
  CheckKeys(json, where);
  InputSpec spec;
  spec.kind = KindField(json, where);
  const long long length = IntegerField(json, "length", where);
  CheckInteger(length, 1, kMaxLength, where, "length");
  spec.length = static_cast<std::uint64_t>(length);
  const long long alphabet = IntegerField(json, "alphabet", where);
  CheckInteger(alphabet, 1, kMaxAlphabet, where, "alphabet");
  spec.alphabet = static_cast<int>(alphabet);
  spec.seed = SeedField(json, where);
  spec.alpha = RealField(json, "alpha", where);
  const long long parents = IntegerField(json, "parents", where);
  CheckInteger(parents, 1, kSparseWindow, where, "parents");
  spec.parents = static_cast<int>(parents);
  spec.noise = RealField(json, "noise", where);
  const long long pattern = IntegerField(json, "pattern", where);
  CheckInteger(pattern, 1, 1 << 20, where, "pattern");
  spec.pattern = static_cast<int>(pattern);
  ValidateInputSpec(spec, where);
  return spec;
}

}  // namespace ltsim
