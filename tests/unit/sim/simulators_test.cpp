// Unit tests of every registered simulator: structure of z, seeds, and refusals.
#include <gtest/gtest.h>

#include <cmath>

#include "ltsim/check/sandwich.h"
#include "ltsim/construct/kgram.h"
#include "ltsim/construct/tasks.h"
#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

std::vector<Token> Iid(std::uint64_t length, std::uint64_t seed) {
  return ReadAll(*MakeIidSource(length, 2, seed, {0.7, 0.3}), length);
}

TEST(Simulators, RegistryListsEveryMethodAndRefusesUnknownOnes) {
  EXPECT_EQ(SimulatorNames(),
            (std::vector<std::string>{"frequency", "frequency-agnostic", "truncate", "uniform",
                                      "markov", "blocks", "balanced-blocks"}));
  EXPECT_THROW(MakeSimulator("nope"), InputError);
}

// Each method's traits against what its z shows: seeded ⇔ another seed changes z, reads ℓ ⇔
// another ℓ changes z, claims η ⇔ a finite η when z ≠ x, model-free ⇒ z is a subsequence of x
// and relabelling x's tokens relabels z, one-layer only ⇔ a two-layer model is refused.
TEST(Simulators, TraitsMatchWhatTheConstructionDoes) {
  const Transformer m = MakeModPTask(3, 1);
  const Transformer two = MakeKGram({.alphabet = 2, .k = 1});
  const std::vector<Token> x = Iid(20000, 11);
  std::vector<Token> swapped(x);
  for (Token& s : swapped) s = static_cast<Token>(1 - s);
  const auto source = MakeTokenSource(x, "x");
  std::vector<std::string> names = SimulatorNames();
  names.push_back("test-drop-suffix");
  for (const std::string& name : names) {
    const SimulatorTraits t = MakeSimulator(name)->traits();
    auto z = [&](const Source& in, std::uint64_t seed, std::uint64_t block) {
      return RunSimulation({&m}, in, {name, 2000, seed, block});
    };
    const Simulation base = z(*source, 1, 30);
    const std::vector<Token> zt = FromRuns(base.z);
    EXPECT_EQ(t.seeded, zt != FromRuns(z(*source, 2, 30).z)) << name;
    EXPECT_EQ(t.uses_block_length, zt != FromRuns(z(*source, 1, 60).z)) << name;
    EXPECT_EQ(t.claims_eta, !std::isnan(base.eta)) << name;
    if (t.model_free) {
      std::size_t j = 0;  // z is a subsequence of x
      for (Token s : zt) {
        while (j < x.size() && x[j] != s) ++j;
        ASSERT_LT(j, x.size()) << name;
        ++j;
      }
      std::vector<Token> relabelled = FromRuns(z(*MakeTokenSource(swapped, "x'"), 1, 30).z);
      for (Token& s : relabelled) s = static_cast<Token>(1 - s);
      EXPECT_EQ(relabelled, zt) << name;
    }
    bool refused = false;
    try {
      RunSimulation({&two}, *source, {name, 2000, 1});
    } catch (const InputError&) {
      refused = true;
    }
    EXPECT_EQ(t.one_layer_only, refused) << name;
  }
  EXPECT_EQ(SimulatorNamesWith(&SimulatorTraits::block_rate),
            (std::vector<std::string>{"markov", "blocks"}));
  EXPECT_TRUE(SimulatorHas("test-drop-suffix", &SimulatorTraits::one_layer_only));
  EXPECT_FALSE(SimulatorHas("nope", &SimulatorTraits::model_free));
  EXPECT_EQ(JoinNames({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(JoinNames({"a", "b"}, "and"), "a and b");
}

TEST(Simulators, TruncateKeepsTheLastNTokens) {
  const Transformer m = MakeModPTask(3, 1);
  const std::vector<Token> x = Iid(10000, 5);
  const Simulation z = RunSimulation({&m}, *MakeTokenSource(x, "x"), {"truncate", 777, 1});
  EXPECT_EQ(FromRuns(z.z), std::vector<Token>(x.end() - 777, x.end()));
  EXPECT_EQ(z.length, 777u);
}

TEST(Simulators, UniformIsASeededSubsequenceOfLengthN) {
  const Transformer m = MakeModPTask(3, 1);
  const std::vector<Token> x = Iid(5000, 6);
  const auto source = MakeTokenSource(x, "x");
  const std::vector<Token> z = FromRuns(RunSimulation({&m}, *source, {"uniform", 400, 9}).z);
  ASSERT_EQ(z.size(), 400u);
  std::size_t j = 0;  // z is a subsequence of x
  for (Token s : z) {
    while (j < x.size() && x[j] != s) ++j;
    ASSERT_LT(j, x.size());
    ++j;
  }
  EXPECT_EQ(z, FromRuns(RunSimulation({&m}, *source, {"uniform", 400, 9}).z));
  EXPECT_NE(z, FromRuns(RunSimulation({&m}, *source, {"uniform", 400, 10}).z));
}

TEST(Simulators, FrequencyMethodsKeepSuffixAndResidueOfLength) {
  const Transformer f = MakeModPTask(4, 1);
  const Transformer g = MakeModPTask(6, 5);
  const std::vector<Token> x = Iid(30001, 7);
  for (const char* method : {"frequency", "frequency-agnostic"}) {
    const Simulation z = RunSimulation({&f, &g}, *MakeTokenSource(x, "x"), {method, 1000, 1});
    const std::vector<Token> zt = FromRuns(z.z);
    ASSERT_EQ(zt.size(), z.length) << method;
    EXPECT_LE(z.length, 1000u) << method;
    EXPECT_EQ(z.length % 12, x.size() % 12) << method;  // Δ* = lcm(4, 6)
    EXPECT_EQ(zt.back(), x.back()) << method;
    EXPECT_GT(z.length, 1000u - 12) << method;  // the largest |z| ≤ n with that residue
  }
}

TEST(Simulators, ShortStringsAreTheirOwnSimulation) {
  const Transformer m = MakeModPTask(2, 0);
  const std::vector<Token> x = Iid(300, 8);
  for (const char* method :
       {"frequency", "frequency-agnostic", "truncate", "uniform", "markov", "blocks"})
    EXPECT_EQ(FromRuns(RunSimulation({&m}, *MakeTokenSource(x, "x"), {method, 500, 1}).z), x)
        << method;
}

TEST(Simulators, FrequencyRefusesATargetTooShortForTheSuffix) {
  const Transformer m = MakeModPTask(5, 0);
  const std::vector<Token> x = Iid(3000, 9);
  EXPECT_THROW(RunSimulation({&m}, *MakeTokenSource(x, "x"), {"frequency", 3, 1}), InputError);
}

TEST(Simulators, ModelsWithDifferentAlphabetsAreRefused) {
  const Transformer f = MakeModPTask(2, 0);
  Transformer g = MakeModPTask(2, 0);
  g.alphabet = 3;
  g.embedding.conservativeResize(3, g.width);
  g.embedding.row(2).setZero();
  EXPECT_THROW(JointViewOf({&f, &g}), InputError);
}

}  // namespace
}  // namespace ltsim
