// The k-gram estimator and the constructed two-layer model that approximates it
// (docs/theory.md §5).
#include "ltsim/construct/kgram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/reference.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// Rounding in the reference forward pass: sums of ≤ 2000 terms of size ≤ 1, and the gate's
// ReLUs of O(k·Λ) terms: a few hundred ulps at most.
constexpr double kRounding = 1e-12;

struct Case {
  int alphabet;
  int k;
};

// The (S, k) the accuracy tests sweep: k = 1..3, S = 2..4, every S^k ≤ 16, so a random
// string of length ≥ 200 has its context occur about T/S^k ≥ 12 times.
const std::vector<Case> kCases = {{2, 1}, {3, 2}, {4, 2}, {2, 3}};

KGramOptions Options(const Case& c, double scale, NoMatchPolicy policy, bool sharpen) {
  KGramOptions options;
  options.alphabet = c.alphabet;
  options.k = c.k;
  options.scale = scale;
  options.no_match = policy;
  options.sharpen = sharpen;
  return options;
}

std::vector<Token> RandomString(boost::random::mt19937_64& engine, int alphabet, int length) {
  boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
  std::vector<Token> x(length);
  for (Token& s : x) s = static_cast<Token>(token(engine));
  return x;
}

// n_P: how many context slots c_t = x_{T−t+1} (t = 1..k) hold a token of the prefix
// x_1..x_k. A key j ≤ k has no full window: all its slots hold tokens of the prefix only, so
// it can match at most n_P slots.
int PrefixSlots(const std::vector<Token>& x, int k) {
  const auto prefix_end = x.begin() + k;
  int slots = 0;
  for (int t = 1; t <= k; ++t)
    slots += std::find(x.begin(), prefix_end, x[x.size() - t]) != prefix_end ? 1 : 0;
  return slots;
}

// δ_i, the mass a first-layer copy at position i > t misses: the key t back weighs i^φ, each
// of the other i − 1 keys 1.
double CopyMiss(double i, double copy_bias) {
  return (i - 1.0) / (std::pow(i, copy_bias) + i - 1.0);
}

// The bound on ‖f(x) − f*(x)‖_∞ derived next to MakeKGram (kgram.cpp), for T > k. With M
// candidates at the maximum m* of matching slots, weights normalised by e^(β·m*):
//  - unsharpened copies shift a slot's contribution by at most ε_j = δ_j + δ_T, so keys of the
//    maximal set A weigh within [e^(−βkε_j), 1] (U = Σ_A min(1, βkε_j)) and another candidate
//    at most e^(−β(k − m_j)(1 − ε_j)); this needs m* = k (checked by the callers);
//  - sharpened copies are exact (ε = 0) and the bound holds for any m*;
//  - the k keys j ≤ k weigh at most e^(β(n_P − m*)) (sharpened) or e^(−β(k − n_P)(1 − δ_T));
//  ‖f − f*‖ ≤ U/(M − U) + R/(M − U + R), R the total weight outside A.
// The uniform policy's gate adds 2k·(ρ + D + δ_T), ρ ≤ R/(M − U + R) the attention mass
// outside A and D = Σ_A δ_j/(M − U) the copies' deficit inside it (kgram.cpp, GateMlp).
double ErrorBound(const std::vector<Token>& x, const KGramOptions& o) {
  const std::vector<int> matches = KGramSlotMatches(x, o.k);
  const int best = *std::max_element(matches.begin(), matches.end());
  const double beta = o.scale;
  const double k = o.k;
  const double delta_query = o.sharpen ? 0.0 : CopyMiss(static_cast<double>(x.size()), o.copy_bias);
  double count = 0.0, reweight = 0.0, outside = 0.0, deficit = 0.0;
  for (std::size_t p = 0; p < matches.size(); ++p) {
    const double position = static_cast<double>(p) + o.k + 1;
    const double delta = o.sharpen ? 0.0 : CopyMiss(position, o.copy_bias);
    const double eps = o.sharpen ? 0.0 : delta + delta_query;
    if (matches[p] == best) {
      count += 1.0;
      reweight += std::min(1.0, beta * k * eps);
      deficit += delta;
    } else {
      outside += std::exp(-beta * (best - matches[p]) * (1.0 - eps));
    }
  }
  const int prefix_slots = PrefixSlots(x, o.k);
  outside += k * (o.sharpen ? std::exp(beta * (prefix_slots - best))
                            : std::exp(-beta * (k - prefix_slots) * (1.0 - delta_query)));
  const double inside = count - reweight;
  const double leaked = outside / (inside + outside);
  double bound = reweight / inside + leaked;
  if (o.no_match == NoMatchPolicy::kUniform)
    bound += 2.0 * k * (leaked + deficit / inside + delta_query);
  return bound + kRounding;
}

bool FullMatch(const std::vector<Token>& x, int k) {
  const std::vector<int> m = KGramSlotMatches(x, k);
  return std::find(m.begin(), m.end(), k) != m.end();
}

double Error(const Transformer& model, const std::vector<Token>& x, const KGramOptions& o) {
  const Vector estimate = KGramEstimate(x, o.alphabet, o.k, o.no_match);
  return (EvaluateReference(model, x) - estimate).cwiseAbs().maxCoeff();
}

// ---------------------------------------------------------------------------------------
// The exact estimator.

Vector Vec(std::initializer_list<double> values) {
  Vector v(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (double value : values) v(i++) = value;
  return v;
}

// x = 0 1 0 1 0: the context 0 (k = 1) occurred before t = 2 and t = 4, both followed by 1;
// the context (1, 0) (k = 2) before t = 4 only.
TEST(KGramEstimate, CountsTheTokensThatFollowedTheContext) {
  const std::vector<Token> x = {0, 1, 0, 1, 0};
  for (NoMatchPolicy policy : {NoMatchPolicy::kUniform, NoMatchPolicy::kMostMatches}) {
    EXPECT_EQ(KGramEstimate(x, 2, 1, policy), Vec({0, 1}));
    EXPECT_EQ(KGramEstimate(x, 2, 2, policy), Vec({0, 1}));
    EXPECT_EQ(KGramEstimate(x, 3, 1, policy), Vec({0, 1, 0}));
  }
  // Context 1 after 0 1 1 2 1: followed by 1 (t = 3) and 2 (t = 4).
  EXPECT_TRUE(
      KGramEstimate({0, 1, 1, 2, 1}, 3, 1, NoMatchPolicy::kUniform).isApprox(Vec({0, 0.5, 0.5})));
  // The candidate t = T counts too: 1 1 1 has matches at t = 2 and t = 3.
  EXPECT_EQ(KGramEstimate({1, 1, 1}, 2, 1, NoMatchPolicy::kUniform), Vec({0, 1}));
}

// x = 0 1 2 1 1 2 2 with k = 2: context (2, 2) never occurred; the slot matches of t = 3..7 are
// 0 1 1 0 1, so most-matches averages x_4, x_5, x_7 = 1, 1, 2.
TEST(KGramEstimate, NoMatchPolicies) {
  const std::vector<Token> x = {0, 1, 2, 1, 1, 2, 2};
  EXPECT_EQ(KGramSlotMatches(x, 2), (std::vector<int>{0, 1, 1, 0, 1}));
  EXPECT_TRUE(
      KGramEstimate(x, 3, 2, NoMatchPolicy::kMostMatches).isApprox(Vec({0, 2.0 / 3, 1.0 / 3})));
  EXPECT_TRUE(
      KGramEstimate(x, 3, 2, NoMatchPolicy::kUniform).isApprox(Vec({1.0 / 3, 1.0 / 3, 1.0 / 3})));
  // k = 1, context 1 never seen: most-matches is the unigram distribution of x_2..x_T.
  EXPECT_TRUE(KGramEstimate({0, 0, 0, 1}, 2, 1, NoMatchPolicy::kMostMatches)
                  .isApprox(Vec({2.0 / 3, 1.0 / 3})));
  // T ≤ k: no candidate position at all, every policy is uniform.
  for (NoMatchPolicy policy : {NoMatchPolicy::kUniform, NoMatchPolicy::kMostMatches}) {
    EXPECT_TRUE(KGramSlotMatches({0, 1}, 2).empty());
    EXPECT_EQ(KGramEstimate({0, 1}, 4, 2, policy), Vector::Constant(4, 0.25));
  }
}

TEST(KGramEstimate, PolicyNames) {
  for (NoMatchPolicy policy : {NoMatchPolicy::kUniform, NoMatchPolicy::kMostMatches})
    EXPECT_EQ(ParseNoMatchPolicy(NoMatchPolicyName(policy)), policy);
  EXPECT_THROW(ParseNoMatchPolicy("backoff"), InputError);
}

// ---------------------------------------------------------------------------------------
// The model's structure.

// Valid, two layers as docs/theory.md §5 describes them, γ_pos = φ − 1 (1 for the default φ = 2),
// every first-layer head position-dominated, and an exact round trip through the file format.
TEST(MakeKGram, StructureMarginsAndRoundTrip) {
  for (const Case& c : kCases) {
    for (NoMatchPolicy policy : {NoMatchPolicy::kUniform, NoMatchPolicy::kMostMatches}) {
      for (bool sharpen : {false, true}) {
        const KGramOptions o = Options(c, 8.0, policy, sharpen);
        const Transformer m = MakeKGram(o);
        SCOPED_TRACE(m.name);
        EXPECT_NO_THROW(ValidateTransformer(m, "kgram"));
        ASSERT_EQ(m.layers.size(), 2u);
        EXPECT_EQ(m.period, 1);
        EXPECT_EQ(m.locality, c.k);
        EXPECT_EQ(m.width, KGramWidth(o));
        EXPECT_EQ(m.outputs(), c.alphabet);
        EXPECT_EQ(m.layers[0].heads.size(), static_cast<std::size_t>(c.k));
        EXPECT_EQ(m.layers[0].bias_scaling, BiasScaling::kLog);
        EXPECT_EQ(m.layers[0].mlp.has_value(), sharpen);
        EXPECT_EQ(m.layers[1].mlp.has_value(), policy == NoMatchPolicy::kUniform);
        EXPECT_DOUBLE_EQ(SpectralNorm(m.layers[1].heads[0].qk), o.scale);
        EXPECT_EQ(PositionalMargin(m), 1.0);
        for (HeadRegime regime : HeadRegimes(m)) EXPECT_EQ(regime, HeadRegime::kPositionDominated);
        const std::string json = ModelToJson(m);
        EXPECT_EQ(ModelToJson(ParseModel(json, "kgram")), json);
        EXPECT_EQ(nlohmann::json::parse(m.meta_json)["task"], "kgram");
      }
    }
  }
  KGramOptions steep = Options({3, 2}, 8.0, NoMatchPolicy::kMostMatches, false);
  steep.copy_bias = 3.0;
  EXPECT_EQ(PositionalMargin(MakeKGram(steep)), 2.0);
}

TEST(MakeKGram, RefusesBadOptions) {
  const KGramOptions good = Options({3, 2}, 8.0, NoMatchPolicy::kUniform, false);
  EXPECT_NO_THROW(ValidateKGramOptions(good));
  auto refused = [&](auto&& change) {
    KGramOptions o = good;
    change(o);
    return [o] { MakeKGram(o); };
  };
  EXPECT_THROW(refused([](KGramOptions& o) { o.alphabet = 0; })(), InputError);
  EXPECT_THROW(refused([](KGramOptions& o) { o.k = 0; })(), InputError);
  EXPECT_THROW(refused([](KGramOptions& o) { o.scale = 0.0; })(), InputError);
  EXPECT_THROW(refused([](KGramOptions& o) { o.scale = std::nan(""); })(), InputError);
  EXPECT_THROW(refused([](KGramOptions& o) { o.copy_bias = 1.0; })(), InputError);
  EXPECT_THROW(refused([](KGramOptions& o) { o.alphabet = 300; })(), InputError);          // width
  EXPECT_THROW(refused([](KGramOptions& o) { o.alphabet = 10, o.k = 6; })(), InputError);  // MLP
  EXPECT_NO_THROW(refused([](KGramOptions& o) {
    o.alphabet = 10, o.k = 6, o.no_match = NoMatchPolicy::kMostMatches;
  })());
}

// ---------------------------------------------------------------------------------------
// Accuracy against the exact estimator (reference evaluator, the oracle).

// Random strings of lengths 200 and 1000 (every context occurs; checked): the error stays
// within the derived bound for every (S, k), policy, copy mode and β. The bound is worst case
// over the tokens that follow the matches (it cannot use that they are i.i.d. here) and counts
// the k keys without a full window as full matches whenever they could be, so it is 3× to
// 10^6× above the measured error; at β = 8 we also assert the measured error is below 0.1
// (observed ≤ 0.055, the plain uniform-policy model at T = 200).
TEST(MakeKGram, AccuracyWithinTheDerivedBound) {
  boost::random::mt19937_64 engine(51);
  for (const Case& c : kCases) {
    for (int length : {200, 1000}) {
      const std::vector<Token> x = RandomString(engine, c.alphabet, length);
      ASSERT_TRUE(FullMatch(x, c.k));
      for (NoMatchPolicy policy : {NoMatchPolicy::kMostMatches, NoMatchPolicy::kUniform}) {
        for (bool sharpen : {false, true}) {
          for (double beta : {4.0, 8.0, 16.0}) {
            const KGramOptions o = Options(c, beta, policy, sharpen);
            const Transformer m = MakeKGram(o);
            const double error = Error(m, x, o);
            const double bound = ErrorBound(x, o);
            EXPECT_LE(error, bound) << m.name << " T=" << length;
            if (beta == 8.0) {
              EXPECT_LT(error, 0.1) << m.name << " T=" << length;
            }
          }
        }
      }
    }
  }
}

// The error falls as β grows while the softmax leakage e^(−β) to keys one slot short
// dominates. Sharpened copies leave no other term on strings whose context has a token outside
// the prefix x_1..x_k (so the k keys without a full window cannot match), and the mean error
// over four strings of length 1000 falls strictly at every step β = 1, 2, 4, 8, 16. Plain
// copies add the term U ≈ βk·ln T/T, which takes over near β ≈ ln T: we assert only the fall
// from β = 1 to β = 4 (by a factor > 2; sweeps: 4–8×).
TEST(MakeKGram, ErrorShrinksAsScaleGrows) {
  boost::random::mt19937_64 engine(52);
  for (const Case& c : {Case{2, 1}, Case{3, 2}, Case{2, 3}}) {
    std::vector<std::vector<Token>> strings;
    while (strings.size() < 4) {
      std::vector<Token> x = RandomString(engine, c.alphabet, 1000);
      if (PrefixSlots(x, c.k) < c.k && FullMatch(x, c.k)) strings.push_back(std::move(x));
    }
    for (bool sharpen : {true, false}) {
      double previous = std::numeric_limits<double>::infinity();
      double at_one = 0.0;
      for (double beta : {1.0, 2.0, 4.0, 8.0, 16.0}) {
        if (!sharpen && beta > 4.0) break;
        const KGramOptions o = Options(c, beta, NoMatchPolicy::kMostMatches, sharpen);
        const Transformer m = MakeKGram(o);
        double mean = 0.0;
        for (const std::vector<Token>& x : strings) {
          const double error = Error(m, x, o);
          EXPECT_LE(error, ErrorBound(x, o)) << m.name;
          mean += error / strings.size();
        }
        if (beta == 1.0) at_one = mean;
        if (sharpen) {
          EXPECT_LT(mean, previous) << m.name;
        } else if (beta == 4.0) {
          EXPECT_LT(2.0 * mean, at_one) << m.name;
        }
        previous = mean;
      }
    }
  }
}

// Longer strings through ltsim::Evaluate (the exact two-layer path, differential-tested
// against the reference in unit_eval). With plain copies at β = 8 both error terms shrink with
// T: the copy term U/M ~ βk·ln T/T, and the leaked mass ~ k(S − 1)e^(−β) moves the output by
// the gap between two empirical next-token distributions, ~ (S^k/T)^(1/2). So the mean error
// over three strings falls by more than 2× from T = 2000 to 20000 (sweeps over 40 strings:
// 6–13×), and stays within the bound.
TEST(MakeKGram, ErrorShrinksWithLength) {
  boost::random::mt19937_64 engine(55);
  for (const Case& c : kCases) {
    const KGramOptions o = Options(c, 8.0, NoMatchPolicy::kMostMatches, false);
    const Transformer m = MakeKGram(o);
    double mean[2] = {0.0, 0.0};
    for (int i = 0; i < 2; ++i) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::vector<Token> x = RandomString(engine, c.alphabet, i == 0 ? 2000 : 20000);
        const Vector estimate = KGramEstimate(x, c.alphabet, c.k, o.no_match);
        const double error = SupDistance(Evaluate(m, *MakeTokenSource(x, "x")), estimate);
        EXPECT_LE(error, ErrorBound(x, o)) << m.name << " T=" << x.size();
        mean[i] += error / 3.0;
      }
    }
    EXPECT_LT(2.0 * mean[1], mean[0]) << m.name;
  }
}

// Strings whose last token S − 1 occurs nowhere before: the context never occurred. The
// uniform policy's gate then sees attended windows that all miss slot 1 (μ* ≥ 1 − δ_T > 1/Λ)
// and outputs exactly 1/S; most-matches (sharpened, so the bound holds for m* < k) stays
// within the bound around the average over the maximal set.
TEST(MakeKGram, NoMatchPolicies) {
  boost::random::mt19937_64 engine(53);
  for (const Case& c : kCases) {
    for (int length : {50, 300}) {
      std::vector<Token> x = RandomString(engine, c.alphabet - 1, length);
      x.back() = static_cast<Token>(c.alphabet - 1);
      ASSERT_FALSE(FullMatch(x, c.k));
      for (bool sharpen : {false, true}) {
        const KGramOptions uniform = Options(c, 8.0, NoMatchPolicy::kUniform, sharpen);
        EXPECT_LE(Error(MakeKGram(uniform), x, uniform), kRounding);
      }
      const KGramOptions most = Options(c, 8.0, NoMatchPolicy::kMostMatches, true);
      const Transformer m = MakeKGram(most);
      EXPECT_LE(Error(m, x, most), ErrorBound(x, most)) << m.name << " T=" << length;
    }
  }
}

// ---------------------------------------------------------------------------------------
// The bundled models: every corpus/models/kgram_*.json is what MakeKGram writes for the
// options its `meta` records (the command `ltsim construct kgram` wrote them), and is accurate.

KGramOptions OptionsFromMeta(const std::string& meta_json) {
  const nlohmann::json meta = nlohmann::json::parse(meta_json);
  KGramOptions o;
  o.alphabet = meta.at("alphabet").get<int>();
  o.k = meta.at("k").get<int>();
  o.scale = meta.at("scale").get<double>();
  o.no_match = ParseNoMatchPolicy(meta.at("no_match").get<std::string>());
  o.copy_bias = meta.at("copy_bias").get<double>();
  o.sharpen = meta.at("sharpen").get<bool>();
  return o;
}

TEST(MakeKGram, CorpusFilesAreWhatTheConstructorWrites) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(std::string(LTSIM_SOURCE_DIR) + "/corpus/models"))
    if (entry.path().filename().string().rfind("kgram_", 0) == 0) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u);
  boost::random::mt19937_64 engine(54);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const Transformer m = ReadModel(file.string());
    const KGramOptions o = OptionsFromMeta(m.meta_json);
    EXPECT_EQ(ModelToJson(m), ModelToJson(MakeKGram(o)));
    const std::vector<Token> x = RandomString(engine, o.alphabet, 500);
    ASSERT_TRUE(FullMatch(x, o.k));
    EXPECT_LE(Error(m, x, o), ErrorBound(x, o));
  }
}

}  // namespace
}  // namespace ltsim
