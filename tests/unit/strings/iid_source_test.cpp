// Unit tests for seeded i.i.d. sources: reproducibility, chunking, frequencies, spec parsing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

std::string SpecError(const std::string& spec) {
  try {
    OpenSource(spec);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

std::vector<std::uint64_t> ChunkSizes(const Source& source) {
  std::vector<std::uint64_t> sizes;
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) sizes.push_back(chunk.length());
  return sizes;
}

TEST(IidSourceTest, EveryPassAndEveryConstructionSeesTheSameString) {
  const auto source = MakeIidSource(200001, 5, 42, {});
  const auto first = ReadAll(*source, 1 << 20);
  EXPECT_EQ(first.size(), 200001u);
  EXPECT_EQ(ReadAll(*source, 1 << 20), first);
  EXPECT_EQ(ReadAll(*MakeIidSource(200001, 5, 42, {}), 1 << 20), first);
  EXPECT_EQ(ReadAll(*OpenSource("iid:length=200001,alphabet=5,seed=42"), 1 << 20), first);
  EXPECT_NE(ReadAll(*MakeIidSource(200001, 5, 43, {}), 1 << 20), first);
  for (Token token : first) ASSERT_LT(token, 5);
}

TEST(IidSourceTest, ThreadsSeeTheSameString) {
  const auto source = MakeIidSource(300000, 1000, 7, {});
  const auto serial = ReadAll(*source, 1 << 20);
  std::vector<Token> a, b;
  std::thread first([&] { a = ReadAll(*source, 1 << 20); });
  std::thread second([&] { b = ReadAll(*source, 1 << 20); });
  first.join();
  second.join();
  EXPECT_EQ(a, serial);
  EXPECT_EQ(b, serial);
}

TEST(IidSourceTest, ChunksAre65536TokensAndAPrefixDoesNotDependOnLength) {
  EXPECT_EQ(ChunkSizes(*MakeIidSource(200001, 3, 1, {})),
            (std::vector<std::uint64_t>{65536, 65536, 65536, 3393}));
  EXPECT_EQ(ChunkSizes(*MakeIidSource(65536, 3, 1, {})), (std::vector<std::uint64_t>{65536}));
  EXPECT_EQ(ChunkSizes(*MakeIidSource(1, 3, 1, {})), (std::vector<std::uint64_t>{1}));

  const auto shorter = ReadAll(*MakeIidSource(70000, 9, 5, {}), 70000);
  const auto longer = ReadAll(*MakeIidSource(140000, 9, 5, {}), 140000);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), longer.begin()));
}

// Each count n_a of a 1e6-token string is Binomial(n, p_a); we allow 5 standard deviations,
// sqrt(n p_a (1 - p_a)), so a correct generator fails with probability below 1e-5 per count
// (and the seed is fixed, so the test is deterministic anyway).
void ExpectFrequencies(const Source& source, const std::vector<double>& probs) {
  std::vector<double> counts(probs.size(), 0.0);
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    for (std::size_t k = 0; k < chunk.size; ++k) ++counts.at(chunk.at(k));
  }
  const double n = static_cast<double>(source.length());
  for (std::size_t a = 0; a < probs.size(); ++a) {
    const double sd = std::sqrt(n * probs[a] * (1 - probs[a]));
    EXPECT_LE(std::abs(counts[a] - n * probs[a]), 5 * sd + 1e-9) << "token " << a;
  }
}

TEST(IidSourceTest, FrequenciesMatchTheProbabilities) {
  ExpectFrequencies(*MakeIidSource(1000000, 4, 11, {1, 2, 3, 4}), {0.1, 0.2, 0.3, 0.4});
  ExpectFrequencies(*MakeIidSource(1000000, 7, 12, {}), std::vector<double>(7, 1.0 / 7));
  ExpectFrequencies(*MakeIidSource(1000000, 3, 13, {0, 1, 0}), {0, 1, 0});  // never a 0 or 2
}

// Weights whose sum overflows or whose quotients underflow are scaled by the largest first;
// before, probs=1.7e308/1.7e308/0 fell back to uniform and drew token 2 a third of the time.
TEST(IidSourceTest, ExtremeWeightsAreNormalisedAndZeroWeightsNeverDrawn) {
  ExpectFrequencies(*MakeIidSource(300000, 3, 21, {1.7e308, 1.7e308, 0}), {0.5, 0.5, 0});
  ExpectFrequencies(*MakeIidSource(300000, 3, 22, {1e-320, 2e-320, 0}), {1.0 / 3, 2.0 / 3, 0});
  ExpectFrequencies(*MakeIidSource(300000, 4, 23, {0, 1e300, 3e300, 0}), {0, 0.25, 0.75, 0});
  ExpectFrequencies(*MakeIidSource(300000, 3, 24, {5e-324, 0, 5e-324}), {0.5, 0, 0.5});
  // A positive weight that no double can hold relative to the largest is refused, not dropped.
  const std::string spec = "iid:length=10,alphabet=3,seed=1,probs=1.7e308/5e-324/0";
  EXPECT_NE(SpecError(spec).find("cannot be normalised"), std::string::npos) << SpecError(spec);
}

// Zero-weight tokens are left out of the law itself: among many tokens of weight 0 and a few
// positive ones of very different sizes, no draw of 2·10^5 is ever a zero-weight token.
TEST(IidSourceTest, ZeroWeightTokensAreNeverDrawnAmongMany) {
  std::vector<double> probs(64, 0.0);
  // Extreme weights whose ratios to the largest are still doubles (≥ 2.2e-308): a smaller ratio
  // is refused (IidSourceTest.ExtremeWeightsAreNormalisedAndZeroWeightsNeverDrawn).
  probs[3] = 1e-100;
  probs[17] = 1.0;
  probs[40] = 1e200;
  probs[63] = 3e-105;
  const std::vector<Token> x = ReadAll(*MakeIidSource(200000, 64, 25, probs), 200000);
  for (Token t : x) ASSERT_GT(probs[t], 0.0) << "drew token " << t;
}

TEST(IidSourceTest, NameIsTheSpecAndReopens) {
  EXPECT_EQ(MakeIidSource(100, 3, 7, {})->name(), "iid:length=100,alphabet=3,seed=7");
  const auto weighted = MakeIidSource(1000, 2, 9, {0.25, 0.75});
  EXPECT_EQ(weighted->name(), "iid:length=1000,alphabet=2,seed=9,probs=0.25/0.75");
  EXPECT_EQ(ReadAll(*OpenSource(weighted->name()), 1000), ReadAll(*weighted, 1000));
  EXPECT_EQ(weighted->Locate(4), weighted->name() + ": token 5");
}

TEST(IidSourceTest, SpecAcceptsFloatingLengthsAndAnyKeyOrder) {
  const auto source = OpenSource("iid:seed=3,alphabet=65535,length=1e8");
  EXPECT_EQ(source->length(), 100000000u);
  EXPECT_EQ(source->name(), "iid:length=100000000,alphabet=65535,seed=3");
  EXPECT_EQ(OpenSource("iid:length=2.5e1,alphabet=1,seed=0")->length(), 25u);
  EXPECT_EQ(
      OpenSource("iid:length=18446744073709551615,alphabet=2,seed=18446744073709551615")->length(),
      18446744073709551615u);
  EXPECT_EQ(OpenSource("iid:length=4,alphabet=3,seed=1,probs=1/0/1e-3")->length(), 4u);
}

TEST(IidSourceTest, SpecErrorsNameTheKey) {
  const std::string base = "iid:length=10,alphabet=3,seed=1";
  EXPECT_EQ(SpecError("iid:length=10,alphabet=3"), "iid:length=10,alphabet=3: missing key 'seed'");
  EXPECT_EQ(SpecError("iid:"), "iid:: missing key 'length'");
  EXPECT_EQ(
      SpecError(base + ",colour=red"),
      base + ",colour=red: unknown key 'colour' (the keys are length, alphabet, seed, probs)");
  EXPECT_EQ(SpecError(base + ",seed=2"), base + ",seed=2: key 'seed' is given twice");
  EXPECT_EQ(SpecError(base + ",probs"), base + ",probs: expected key=value, got 'probs'");
  // A trailing or doubled comma is refused.
  EXPECT_EQ(SpecError(base + ","), base + ",: empty item (a stray ',')");
  EXPECT_EQ(SpecError("iid:length=10,,alphabet=3,seed=1"),
            "iid:length=10,,alphabet=3,seed=1: empty item (a stray ',')");
  EXPECT_EQ(SpecError("iid:length=0,alphabet=3,seed=1"),
            "iid:length=0,alphabet=3,seed=1: key 'length' must be an integer at least 1, got '0'");
  for (const char* length : {"1.5", "-1", "x", "", "1e20", "inf", "nan"}) {
    const std::string spec = std::string("iid:length=") + length + ",alphabet=3,seed=1";
    EXPECT_NE(SpecError(spec).find("key 'length' must be an integer"), std::string::npos) << spec;
  }
  for (const char* alphabet : {"0", "65536", "2.0", "-3"}) {
    const std::string spec = std::string("iid:length=5,alphabet=") + alphabet + ",seed=1";
    EXPECT_NE(SpecError(spec).find("key 'alphabet' must be an integer from 1 to 65535"),
              std::string::npos)
        << spec;
  }
  EXPECT_NE(SpecError("iid:length=5,alphabet=2,seed=-1").find("key 'seed'"), std::string::npos);
  EXPECT_EQ(SpecError(base + ",probs=1/2"),
            base + ",probs=1/2: key 'probs' has 2 values but the alphabet has 3");
  EXPECT_EQ(SpecError(base + ",probs=1/-2/3"),
            base + ",probs=1/-2/3: key 'probs' must be finite and non-negative");
  EXPECT_EQ(SpecError(base + ",probs=0/0/0"),
            base + ",probs=0/0/0: key 'probs' must have a positive sum");
  EXPECT_EQ(SpecError(base + ",probs=1/a/1"),
            base + ",probs=1/a/1: key 'probs' must be numbers separated by '/', got '1/a/1'");
  EXPECT_NE(SpecError(base + ",probs=1/inf/1").find("key 'probs'"), std::string::npos);
}

TEST(IidSourceTest, MakeIidSourceValidates) {
  EXPECT_THROW(MakeIidSource(0, 3, 1, {}), InputError);
  EXPECT_THROW(MakeIidSource(5, 0, 1, {}), InputError);
  EXPECT_THROW(MakeIidSource(5, 65536, 1, {}), InputError);
  EXPECT_THROW(MakeIidSource(5, 2, 1, {1.0}), InputError);
  EXPECT_THROW(MakeIidSource(5, 2, 1, {0.0, 0.0}), InputError);
}

}  // namespace
}  // namespace ltsim
