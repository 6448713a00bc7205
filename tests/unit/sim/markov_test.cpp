// Unit tests of the block methods `markov` and `blocks` (docs/theory.md §4.5–§4.6): exact small
// layouts.
#include <gtest/gtest.h>

#include <numeric>

#include "ltsim/core/error.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// x = 0, 1, …, T−1: z's tokens are the kept positions (0-based).
std::vector<Token> Positions(int length) {
  std::vector<Token> x(length);
  std::iota(x.begin(), x.end(), Token{0});
  return x;
}

// z of `method` for x = 0..T−1 seen with locality τ (period 1, no models).
Simulation SimulateOn(const char* method, int length, int locality, std::uint64_t n,
                      std::uint64_t block_length, std::uint64_t seed) {
  const std::vector<Token> x = Positions(length);
  const TypeCounts counts = CountTypes(x, length, 1, locality);
  const auto source = MakeTokenSource(x, "x");
  return MakeSimulator(method)->Simulate({*source, counts, {}, n, seed, block_length});
}

TEST(Markov, BlockLengthOneNeverKeepsTwoNeighboursBeforeTheSuffix) {
  // ℓ = 1: keep → drop with probability 1, so far kept positions are isolated.
  const Simulation z = SimulateOn("markov", 5000, 2, 1000, 1, 3);
  const std::vector<Token> kept = FromRuns(z.z);
  ASSERT_EQ(kept.size(), z.length);
  ASSERT_GE(kept.size(), 3u);
  EXPECT_EQ(std::vector<Token>(kept.end() - 3, kept.end()), (std::vector<Token>{4997, 4998, 4999}));
  for (std::size_t k = 1; k + 3 < kept.size(); ++k) EXPECT_GE(kept[k] - kept[k - 1], 2) << k;
  EXPECT_NE(z.detail.find("ℓ = 1,"), std::string::npos) << z.detail;
}

TEST(Markov, AHugeBlockLengthKeepsAllOrOnlyTheSuffix) {
  // ℓ = 10^12 on T = 1000: the chain almost surely never leaves its first state, which is
  // "keep" with probability ρ = 1/2 — z is x or x's last τ+1 tokens.
  int whole = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<Token> z =
        FromRuns(SimulateOn("markov", 1000, 1, 500, 1'000'000'000'000, seed).z);
    if (z.size() == 1000) {
      EXPECT_EQ(z, Positions(1000));
      ++whole;
    } else {
      EXPECT_EQ(z, (std::vector<Token>{998, 999}));
    }
  }
  EXPECT_GT(whole, 5);  // P(whole ≤ 5 | Bin(40, 1/2)) < 1e-6; fixed seeds make it exact
  EXPECT_LT(whole, 35);
}

TEST(Markov, IsSeededAndStreamsOnlyThroughTheKeptPositions) {
  const std::vector<Token> a = FromRuns(SimulateOn("markov", 20000, 0, 2000, 0, 5).z);
  EXPECT_EQ(a, FromRuns(SimulateOn("markov", 20000, 0, 2000, 0, 5).z));
  EXPECT_NE(a, FromRuns(SimulateOn("markov", 20000, 0, 2000, 0, 6).z));
  for (std::size_t k = 1; k < a.size(); ++k) ASSERT_LT(a[k - 1], a[k]);  // a subsequence
}

TEST(Markov, AKeepRateAboveTheBlockShareRaisesTheBlockLength) {
  // ρ = 0.99 > ℓ/(ℓ+1) = 2/3 for ℓ = 2: ℓ becomes ρ/(1−ρ) = 99 so that q = 1.
  const Simulation z = SimulateOn("markov", 10000, 0, 9900, 2, 1);
  EXPECT_NE(z.detail.find("ℓ = 99,"), std::string::npos) << z.detail;
  // E|z| = n + (1 − ρ) ≈ 9900, σ ≈ √(Tρ(1−ρ)(2ℓ(1−ρ) − 1)) ≈ 9.8: allow 10σ.
  EXPECT_NEAR(static_cast<double>(z.length), 9900.0, 100.0);
}

TEST(Markov, ShortStringsAreTheirOwnSimulation) {
  EXPECT_EQ(FromRuns(SimulateOn("markov", 300, 1, 300, 0, 1).z), Positions(300));
  EXPECT_EQ(FromRuns(SimulateOn("blocks", 300, 1, 301, 0, 1).z), Positions(300));
}

TEST(Blocks, LayoutIsTheMidpointRuleByHand) {
  // T = 20, τ = 1 (m = 2), n = 8, ℓ = 3: F = 18, N = 6, k = 2, G = 12. Block i takes z's far
  // positions [3i, 3i+3) from x starting at 3i + ⌊(2i+1)·12/4⌋ = 3, 12 — the middles of the
  // halves [0, 9) and [9, 18) — then the suffix 18, 19.
  const Simulation z = SimulateOn("blocks", 20, 1, 8, 3, 1);
  EXPECT_EQ(FromRuns(z.z), (std::vector<Token>{3, 4, 5, 12, 13, 14, 18, 19}));
  EXPECT_EQ(z.length, 8u);
}

TEST(Blocks, UnevenBlocksDifferByOneAndTouchWhenFewAreDropped) {
  // T = 12, τ = 0, n = 10, ℓ = 4: N = 9, k = 3 blocks of 3, G = 2 dropped: gaps at
  // ⌊2/6⌋ = 0, ⌊6/6⌋ = 1, ⌊10/6⌋ = 1 → blocks at 0, 4, 7; the suffix is position 11.
  EXPECT_EQ(FromRuns(SimulateOn("blocks", 12, 0, 10, 4, 1).z),
            (std::vector<Token>{0, 1, 2, 4, 5, 6, 7, 8, 9, 11}));
}

TEST(Blocks, IsDeterministicWithLengthExactlyN) {
  for (std::uint64_t n : {5u, 77u, 1000u, 4999u}) {
    const Simulation a = SimulateOn("blocks", 5000, 3, n, 0, 1);
    EXPECT_EQ(a.length, n);
    EXPECT_EQ(FromRuns(a.z),
              FromRuns(SimulateOn("blocks", 5000, 3, n, 0, 99).z));  // the seed is unused
    const std::vector<Token> z = FromRuns(a.z);
    ASSERT_EQ(z.size(), n);
    for (std::size_t k = 1; k < z.size(); ++k) ASSERT_LT(z[k - 1], z[k]);
    EXPECT_EQ(std::vector<Token>(z.end() - 4, z.end()),
              (std::vector<Token>{4996, 4997, 4998, 4999}));
  }
}

TEST(Blocks, RefusesATargetWithNoRoomForABlock) {
  EXPECT_THROW(SimulateOn("blocks", 5000, 3, 4, 0, 1), InputError);
  EXPECT_NO_THROW(SimulateOn("blocks", 5000, 3, 5, 0, 1));
}

TEST(Blocks, CopiesFromRunSourcesAcrossRunBoundaries) {
  // x = 0^7 1^5 2^8 as runs: the layout must cut runs exactly.
  std::vector<Token> tokens;
  for (auto [s, c] : {std::pair{0, 7}, {1, 5}, {2, 8}}) tokens.insert(tokens.end(), c, Token(s));
  const TypeCounts counts = CountTypes(tokens, 3, 1, 1);
  const auto x = MakeRunSource(ToRuns(tokens), "x");
  const Simulation z = MakeSimulator("blocks")->Simulate({*x, counts, {}, 8, 1, 3});
  // Positions 3, 4, 5, 12, 13, 14, 18, 19 as in LayoutIsTheMidpointRuleByHand.
  EXPECT_EQ(FromRuns(z.z), (std::vector<Token>{0, 0, 0, 2, 2, 2, 2, 2}));
}

}  // namespace
}  // namespace ltsim
