// Unit tests of the counting pass: far types, the suffix, coarsening, every chunk kind.
#include "ltsim/eval/type_counts.h"

#include <gtest/gtest.h>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

TEST(TypeCounts, CountsFarTypesByResidueAndKeepsTheSuffix) {
  // Positions 1..7 hold 0 1 1 0 2 1 0; Δ = 2, τ = 1: far positions 1..5.
  const TypeCounts c = CountTypes(std::vector<Token>{0, 1, 1, 0, 2, 1, 0}, 3, 2, 1);
  EXPECT_EQ(c.length, 7u);
  EXPECT_EQ(c.suffix, (std::vector<Token>{1, 0}));
  EXPECT_EQ(c.count(0, 1), 1u);  // position 1
  EXPECT_EQ(c.count(1, 0), 1u);  // position 2
  EXPECT_EQ(c.count(1, 1), 1u);  // position 3
  EXPECT_EQ(c.count(0, 0), 1u);  // position 4
  EXPECT_EQ(c.count(2, 1), 1u);  // position 5
  EXPECT_EQ(c.far_length(), 5u);
}

TEST(TypeCounts, ShortStringsAreAllSuffix) {
  const TypeCounts c = CountTypes(std::vector<Token>{2, 1}, 3, 1, 4);
  EXPECT_EQ(c.suffix, (std::vector<Token>{2, 1}));
  EXPECT_EQ(c.far_length(), 0u);
}

TEST(TypeCounts, EveryChunkKindCountsTheSame) {
  std::vector<Token> x;
  for (int k = 0; k < 5000; ++k) x.push_back(static_cast<Token>((k * k + k / 7) % 5));
  const TypeCounts expected = CountTypes(x, 5, 3, 2);
  const std::vector<std::uint8_t> bytes(x.begin(), x.end());
  for (const auto& source :
       {MakeTokenSource(x, "w"), MakeByteSource(bytes, "b"), MakeRunSource(ToRuns(x), "r")}) {
    const TypeCounts c = CountTypes(*source, 5, 3, 2);
    EXPECT_EQ(c.far, expected.far) << source->name();
    EXPECT_EQ(c.suffix, expected.suffix) << source->name();
  }
}

TEST(TypeCounts, HugeRunsAreCountedWithoutExpansion) {
  const auto x = MakeRunSource({{1, 10'000'000'000ULL}, {0, 3}}, "runs");
  const TypeCounts c = CountTypes(*x, 2, 3, 1);
  EXPECT_EQ(c.length, 10'000'000'003ULL);
  EXPECT_EQ(c.count(1, 0) + c.count(1, 1) + c.count(1, 2), 10'000'000'000ULL);
  EXPECT_EQ(c.count(0, 0) + c.count(0, 1) + c.count(0, 2), 1u);
  EXPECT_EQ(c.suffix, (std::vector<Token>{0, 0}));
}

TEST(TypeCounts, CoarsenEqualsCountingAtTheCoarserView) {
  std::vector<Token> x;
  for (int k = 0; k < 777; ++k) x.push_back(static_cast<Token>((k * 31 + k / 5) % 4));
  const TypeCounts fine = CountTypes(x, 4, 6, 3);
  for (int period : {1, 2, 3, 6}) {
    for (int locality : {0, 1, 3}) {
      const TypeCounts direct = CountTypes(x, 4, period, locality);
      const TypeCounts coarse = Coarsen(fine, period, locality);
      EXPECT_EQ(coarse.far, direct.far) << period << " " << locality;
      EXPECT_EQ(coarse.suffix, direct.suffix) << period << " " << locality;
    }
  }
}

TEST(TypeCounts, TokenOutsideTheAlphabetNamesItsPosition) {
  const std::vector<std::uint8_t> bytes = {0, 1, 0, 7, 1};
  try {
    CountTypes(*MakeByteSource(bytes, "x.u8"), 2, 1, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("token 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x.u8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CountTypes(*MakeRunSource({{0, 4}, {3, 1}}, "r"), 2, 1, 0), InputError);
}

}  // namespace
}  // namespace ltsim
