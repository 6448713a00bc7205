// Unit tests of the input generator: replay, each family's law, and the spec's JSON.
#include "ltsim/gen/input_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

std::vector<Token> Tokens(const InputSpec& spec) { return ReadAll(*MakeInput(spec), 1ULL << 30); }

// The message of the InputError `run` throws ("" when it throws nothing).
template <class F>
std::string ErrorOf(F run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

constexpr InputKind kAllKinds[] = {InputKind::kUniform, InputKind::kDirichlet, InputKind::kSparse,
                                   InputKind::kMarkov,  InputKind::kPeriodic,  InputKind::kStress,
                                   InputKind::kRuns,    InputKind::kLongRuns,  InputKind::kStride};

// ---- Inputs ----

TEST(InputGenerator, NamesRoundTrip) {
  for (InputKind kind : kAllKinds) EXPECT_EQ(ParseInputKind(InputKindName(kind)), kind);
  EXPECT_NE(ErrorOf([] { ParseInputKind("gaussian"); }).find("dirichlet"), std::string::npos);
}

TEST(InputGenerator, SameSpecSameStringExactLengthTokensInAlphabet) {
  for (InputKind kind : kAllKinds) {
    for (std::uint64_t length : {1, 2, 7, 65, 1000, 100003}) {
      for (int alphabet : {1, 2, 5, 65535}) {
        InputSpec spec;
        spec.kind = kind;
        spec.length = length;
        spec.alphabet = alphabet;
        spec.seed = length * 31 + alphabet;
        const auto source = MakeInput(spec);
        const std::vector<Token> x = ReadAll(*source, 1 << 20);
        ASSERT_EQ(x.size(), length) << source->name();
        EXPECT_EQ(source->length(), length);
        EXPECT_EQ(ReadAll(*source, 1 << 20), x) << "second pass of " << source->name();
        EXPECT_EQ(Tokens(spec), x) << source->name();
        EXPECT_LT(*std::max_element(x.begin(), x.end()), alphabet) << source->name();
      }
    }
  }
}

TEST(InputGenerator, DifferentSeedsGiveDifferentStrings) {
  for (InputKind kind : kAllKinds) {
    InputSpec spec;
    spec.kind = kind;
    spec.alphabet = 4;
    spec.length = 1000;
    spec.run_length = 500;  // stride: the seed picks the start token and the phase (2000 choices)
    std::set<std::vector<Token>> strings;
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      spec.seed = seed;
      strings.insert(Tokens(spec));
    }
    EXPECT_EQ(strings.size(), 8u) << InputKindName(kind);
  }
}

TEST(InputGenerator, SourceNameIsTheSpec) {
  InputSpec spec;
  spec.kind = InputKind::kSparse;
  spec.length = 10;
  spec.alphabet = 3;
  spec.seed = 9;
  EXPECT_EQ(MakeInput(spec)->name(), "sparse:length=10,alphabet=3,seed=9,parents=2,noise=0.1");
}

// π_s ~ Beta(α, (S−1)α): mean 1/S, variance (1/S)(1 − 1/S)/(Sα + 1) = 0.0375 for S = 4, α = 1.
// Over 400 strings of 2000 tokens the mean frequency has σ ≈ √(0.0375/400) ≈ 0.0097 (tolerance
// 0.04 ≈ 4σ); the variance estimate has relative σ ≈ √((κ − 1)/400) ≈ 0.06 for Beta(1, 3)'s
// kurtosis κ ≈ 2.4 (tolerance 25%), plus the multinomial part 0.19/2000 ≈ 0.0001 (absorbed).
TEST(InputGenerator, DirichletFrequenciesHaveThePriorsMeanAndVariance) {
  const int kStrings = 400;
  std::vector<double> mean(4, 0.0), square(4, 0.0);
  for (int i = 0; i < kStrings; ++i) {
    InputSpec spec{InputKind::kDirichlet, 2000, 4, static_cast<std::uint64_t>(i), 1.0};
    std::vector<int> count(4, 0);
    for (Token t : Tokens(spec)) ++count[t];
    for (int s = 0; s < 4; ++s) {
      const double p = count[s] / 2000.0;
      mean[s] += p / kStrings;
      square[s] += p * p / kStrings;
    }
  }
  for (int s = 0; s < 4; ++s) {
    EXPECT_NEAR(mean[s], 0.25, 0.04);
    EXPECT_NEAR(square[s] - mean[s] * mean[s], 0.0375, 0.25 * 0.0375);
  }
}

// With α = 0.01 a Dir(α) draw puts almost all mass on one token: E[max_s π_s] > 0.95 for S = 4.
TEST(InputGenerator, SmallAlphaConcentratesTheDirichletString) {
  double top = 0.0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    InputSpec spec{InputKind::kDirichlet, 1000, 4, seed, 0.01};
    std::vector<int> count(4, 0);
    for (Token t : Tokens(spec)) ++count[t];
    top += *std::max_element(count.begin(), count.end()) / 1000.0 / 100;
  }
  EXPECT_GT(top, 0.9);
}

// With k = 64 parents every position past 64 has the whole window as parents, so the planted
// function is x_j = (Σ_{t=1..64} x_{j−t}) mod S; it holds at rate (1 − ν) + ν/S. Over
// 200,000 − 64 positions σ ≈ 0.0008; tolerance 0.005 ≈ 6σ.
TEST(InputGenerator, SparseCopiesItsPlantedFunctionAtRateOneMinusNoise) {
  for (double noise : {0.0, 0.2}) {
    const InputSpec spec{InputKind::kSparse, 200000, 5, 21, 1.0, 64, noise};
    const std::vector<Token> x = Tokens(spec);
    long long sum = 0;
    int hits = 0;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (j >= 64) hits += x[j] == sum % 5;
      sum += x[j];
      if (j >= 64) sum -= x[j - 64];
    }
    const double rate = hits / (x.size() - 64.0);
    EXPECT_NEAR(rate, 1 - noise + noise / 5, noise == 0 ? 0.0 : 0.005);
  }
}

// k = 1 and 2 among the previous 64 positions, S = 65535: a copy always has a witness pair in
// the window; a uniform token has one with probability at most C(64, k)/S ≤ 0.031, so the
// witnessed rate lies in [1 − ν, 1 − ν + 0.031ν] up to sampling error (σ ≈ 0.003 over 20,000
// positions; tolerance 0.02).
TEST(InputGenerator, SparseParentsLieInTheWindow) {
  const int kS = 65535;
  const double noise = 0.3;
  for (int k : {1, 2}) {
    const InputSpec spec{InputKind::kSparse, 20000, kS, 22, 1.0, k, noise};
    const std::vector<Token> x = Tokens(spec);
    int hits = 0;
    for (std::size_t j = 64; j < x.size(); ++j) {
      bool found = false;
      for (std::size_t a = j - 64; a < j && !found; ++a) {
        if (k == 1) found = x[a] == x[j];
        for (std::size_t b = a + 1; k == 2 && b < j && !found; ++b)
          found = (x[a] + x[b]) % kS == x[j];
      }
      hits += found;
    }
    const double rate = hits / (x.size() - 64.0);
    EXPECT_GE(rate, 1 - noise - 0.02) << k;
    EXPECT_LE(rate, 1 - noise + 0.031 * noise + 0.02) << k;
  }
}

// Rows are supported on at most 16 tokens when S > 16.
TEST(InputGenerator, MarkovRowsAreSparseOnLargeAlphabets) {
  const InputSpec spec{InputKind::kMarkov, 200000, 1000, 31};
  const std::vector<Token> x = Tokens(spec);
  std::map<Token, std::set<Token>> next;
  for (std::size_t j = 0; j + 1 < x.size(); ++j) next[x[j]].insert(x[j + 1]);
  for (const auto& [state, successors] : next) EXPECT_LE(successors.size(), 16u) << state;
}

// A time-homogeneous chain: each well-visited state's transition frequencies agree between
// the two halves of the string. With ≥ 5000 visits per half, σ ≤ √(0.25/5000) ≈ 0.007 per
// half; tolerance 0.05 ≈ 5σ of the difference.
TEST(InputGenerator, MarkovTransitionsAreStationary) {
  const InputSpec spec{InputKind::kMarkov, 200000, 3, 32};
  const std::vector<Token> x = Tokens(spec);
  double count[2][3][3] = {};
  for (std::size_t j = 0; j + 1 < x.size(); ++j) count[j * 2 / x.size()][x[j]][x[j + 1]] += 1;
  int checked = 0;
  for (int a = 0; a < 3; ++a) {
    const double n0 = count[0][a][0] + count[0][a][1] + count[0][a][2];
    const double n1 = count[1][a][0] + count[1][a][1] + count[1][a][2];
    if (n0 < 5000 || n1 < 5000) continue;
    ++checked;
    for (int b = 0; b < 3; ++b) EXPECT_NEAR(count[0][a][b] / n0, count[1][a][b] / n1, 0.05);
  }
  EXPECT_GE(checked, 1);
}

TEST(InputGenerator, PeriodicRepeatsItsPattern) {
  const InputSpec exact{InputKind::kPeriodic, 10000, 10, 41, 1.0, 2, 0.0, 7};
  const std::vector<Token> x = Tokens(exact);
  for (std::size_t j = 7; j < x.size(); ++j) ASSERT_EQ(x[j], x[j - 7]) << j;
}

// Substitutions at rate ν change the token with probability ν(1 − 1/S) = 0.09. The pattern is
// recovered by a majority vote per residue; over 100,000 positions σ ≈ 0.0009 (tolerance
// 0.005).
TEST(InputGenerator, PeriodicSubstitutesAtRateNoise) {
  const InputSpec spec{InputKind::kPeriodic, 100000, 10, 42, 1.0, 2, 0.1, 7};
  const std::vector<Token> x = Tokens(spec);
  int count[7][10] = {};
  for (std::size_t j = 0; j < x.size(); ++j) ++count[j % 7][x[j]];
  int changed = 0;
  for (int r = 0; r < 7; ++r) {
    int total = 0;
    for (int s = 0; s < 10; ++s) total += count[r][s];
    changed += total - *std::max_element(count[r], count[r] + 10);
  }
  EXPECT_NEAR(changed / 100000.0, 0.09, 0.005);
}

std::string VariantOf(const Source& source) {
  const std::string name = source.name();
  return name.substr(name.rfind("variant=") + 8);
}

std::map<Token, std::uint64_t> Counts(const std::vector<Token>& x) {
  std::map<Token, std::uint64_t> counts;
  for (Token t : x) ++counts[t];
  return counts;
}

std::uint64_t LongestRun(const std::vector<Token>& x) {
  std::uint64_t longest = 0, run = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    run = j > 0 && x[j] == x[j - 1] ? run + 1 : 1;
    longest = std::max(longest, run);
  }
  return longest;
}

// Each stress variant is drawn by some seed and has the property it is named after.
TEST(InputGenerator, StressVariantsDoWhatTheirNamesSay) {
  const std::uint64_t kT = 100000;
  std::map<std::string, int> seen;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const InputSpec spec{InputKind::kStress, kT, 6, seed};
    const auto source = MakeInput(spec);
    const std::string variant = VariantOf(*source);
    const std::vector<Token> x = ReadAll(*source, kT);
    const auto counts = Counts(x);
    std::uint64_t top = 0, bottom = kT;
    for (const auto& [token, c] : counts) top = std::max(top, c), bottom = std::min(bottom, c);
    ++seen[variant];
    if (variant == "rare-types") {
      EXPECT_LE(bottom, 3u);
      EXPECT_GE(top, kT / 4);
    } else if (variant == "suffix-ties") {
      const Token last = x.back();
      EXPECT_LE(counts.at(last), 3u + 4u);
      EXPECT_NE(std::find(x.begin(), x.begin() + kT / 2, last), x.begin() + kT / 2);
      EXPECT_GE(top, kT / 4);
    } else if (variant == "mixed-scale") {
      EXPECT_GE(top / bottom, 50u);
    } else {
      EXPECT_EQ(variant, "long-runs");
      EXPECT_GE(LongestRun(x), kT / 100);
    }
  }
  EXPECT_EQ(seen.size(), 4u);
}

// ---- Spec JSON ----

TEST(InputSpecJson, RoundTripsThroughText) {
  const InputSpec spec{InputKind::kPeriodic, 123456, 65535, ~0ULL, 0.25, 64, 0.5, 9};
  const nlohmann::json json = nlohmann::json::parse(InputSpecToJson(spec).dump());
  EXPECT_EQ(json.size(), 8u);
  const InputSpec back = InputSpecFromJson(json, "w.json: input");
  EXPECT_EQ(back.kind, spec.kind);
  EXPECT_EQ(back.length, spec.length);
  EXPECT_EQ(back.alphabet, spec.alphabet);
  EXPECT_EQ(back.seed, spec.seed);
  EXPECT_EQ(back.alpha, spec.alpha);
  EXPECT_EQ(back.parents, spec.parents);
  EXPECT_EQ(back.noise, spec.noise);
  EXPECT_EQ(back.pattern, spec.pattern);
  EXPECT_EQ(Tokens(back), Tokens(spec));
}

TEST(InputSpecJson, ErrorsNameWhereAndTheKey) {
  const nlohmann::json good = InputSpecToJson(InputSpec{});
  const auto error = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json json = good;
    if (value.is_discarded())
      json.erase(key);
    else
      json[key] = value;
    const std::string message = ErrorOf([&] { InputSpecFromJson(json, "w.json: input"); });
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("w.json: input: " + key + ": ", 0), 0u) << message;
    return message;
  };
  const nlohmann::json missing = nlohmann::json(nlohmann::json::value_t::discarded);
  for (const char* key :
       {"kind", "length", "alphabet", "seed", "alpha", "parents", "noise", "pattern"}) {
    EXPECT_NE(error(key, missing).find("missing key"), std::string::npos);
  }
  EXPECT_NE(error("extra", 1).find("unknown key"), std::string::npos);
  EXPECT_NE(error("kind", "gauss").find("unknown input kind 'gauss'"), std::string::npos);
  error("kind", 3);
  error("length", 1.5);
  error("length", 0);
  error("length", -4);
  error("alphabet", 65536);
  error("seed", -1);
  error("seed", "7");
  error("alpha", 0.0);
  error("alpha", "1");
  error("parents", 65);
  error("noise", 1.5);
  error("pattern", 0);
  EXPECT_EQ(ErrorOf([] { InputSpecFromJson(nlohmann::json::array(), "w.json"); }),
            "w.json: must be a JSON object");
}

TEST(InputSpecJson, MakeInputRejectsBadSpecs) {
  InputSpec spec;
  spec.noise = -0.5;
  EXPECT_EQ(ErrorOf([&] { MakeInput(spec); }).rfind("input spec: noise: ", 0), 0u);
  spec = InputSpec{};
  spec.length = 0;
  EXPECT_EQ(ErrorOf([&] { MakeInput(spec); }).rfind("input spec: length: ", 0), 0u);
}

}  // namespace
}  // namespace ltsim

namespace ltsim {
namespace {

// The run families of Lemma 5.3 (docs/lemma53.md §2): streamed (any length, the same string on
// every pass), runs with the mean run length asked for (geometric) or exactly it (stride,
// cycling through the alphabet), and run_length round-trips through JSON (absent for the other
// kinds, and optional when read).
TEST(InputGenerator, RunFamiliesHaveTheirRunLengths) {
  for (std::uint64_t mean : {1, 3, 40}) {
    InputSpec spec;
    spec.kind = InputKind::kRuns;
    spec.length = 400000;
    spec.alphabet = 3;
    spec.run_length = mean;
    spec.seed = mean;
    const std::vector<ltsim::Run> runs = ToRuns(Tokens(spec));
    // Adjacent runs have different tokens, so the merged runs are the generator's runs.
    const double average = 400000.0 / static_cast<double>(runs.size());
    EXPECT_NEAR(average, static_cast<double>(mean), 0.03 * static_cast<double>(mean) + 0.01)
        << mean;
    spec.kind = InputKind::kStride;
    const std::vector<ltsim::Run> stride = ToRuns(Tokens(spec));
    for (std::size_t k = 1; k + 1 < stride.size(); ++k) {
      EXPECT_EQ(stride[k].count, mean);
      EXPECT_EQ(stride[k].token, (stride[k - 1].token + 1) % 3);
    }
    const nlohmann::json json = InputSpecToJson(spec);
    EXPECT_EQ(json.at("run_length"), mean);
    EXPECT_EQ(InputSpecFromJson(json, "spec").run_length, mean);
  }
  InputSpec uniform;
  EXPECT_FALSE(InputSpecToJson(uniform).contains("run_length"));
  // A spec of |x| = 10^9 is streamed: opening it allocates nothing of that size.
  InputSpec huge;
  huge.kind = InputKind::kLongRuns;
  huge.length = 1'000'000'000;
  huge.run_length = 1000;
  const auto source = MakeInput(huge);
  EXPECT_EQ(source->length(), 1'000'000'000u);
  auto reader = source->Open();
  Chunk chunk;
  ASSERT_TRUE(reader->Next(chunk));
  EXPECT_EQ(chunk.kind, Chunk::Kind::kRun);
}

}  // namespace
}  // namespace ltsim
