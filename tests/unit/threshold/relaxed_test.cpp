// The pruned threshold at D* = 6 on the benchmark's pairs (docs/theory.md §11.6–§11.7), where
// the relaxed bounds decide: the same answers as full enumeration, and certified lengths far
// beyond it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ltsim/threshold/threshold.h"
#include "ltsim_test/residue_share_pairs.h"

namespace ltsim {
namespace {

using test::Kind;

ThresholdResult Search(Kind kind, double epsilon, std::uint64_t max_length, bool prune) {
  const Transformer f = test::ResidueShareModel(3, false, kind);
  const Transformer g = test::ResidueShareModel(3, true, kind);
  ThresholdOptions o;
  o.epsilon = epsilon;
  o.max_length = max_length;
  o.prune = prune;
  o.threads = 1;
  o.full_statistics = 0;  // cells from the first length with far positions
  o.count_pruned = prune && max_length <= 100;
  return FindThreshold(f, g, o);
}

// ε just below the bump's height 0.3 (a first disagreement at T* = 1 … 31 up to N = 45, the later
// ones where a statistic puts the bump's input within w·(1 − ε/0.3) of its centre) and ε = 0.5
// (none: |g − f| ≤ 0.3 plus the differences of the heads' readings): both searches give the
// same first disagreement, checked length and largest gap at T*, and every statistic the
// pruned search did not evaluate lies in a pruned cell (counted one by one). Full enumeration
// evaluates every statistic up to N = 45.
TEST(ThresholdRelaxed, PrunedEqualsFullEnumerationAtDStarSix) {
  for (const Kind kind : {Kind::kLinear, Kind::kBump, Kind::kGlobalBump, Kind::kSoftmaxTilt}) {
    for (const double epsilon : {0.299, 0.5}) {
      SCOPED_TRACE(std::string(test::KindName(kind)) + ", eps " + std::to_string(epsilon));
      const ThresholdResult full = Search(kind, epsilon, 45, false);
      const ThresholdResult pruned = Search(kind, epsilon, 45, true);
      EXPECT_EQ(pruned.first_disagreement, full.first_disagreement);
      EXPECT_EQ(pruned.checked_up_to, full.checked_up_to);
      EXPECT_EQ(pruned.statistics_total, full.statistics_total);
      EXPECT_EQ(pruned.statistics_pruned_counted, pruned.statistics_pruned);
      EXPECT_EQ(epsilon == 0.5, !full.first_disagreement.has_value());
      if (full.first_disagreement) {
        EXPECT_NEAR(pruned.gap, full.gap, 1e-12);
        EXPECT_EQ(pruned.recheck.status, RecheckStatus::kAgrees);
      }
    }
  }
}

// Beyond full enumeration: every length up to 1000 certified (about 10^10 statistics at
// D* = 6), almost all by the bounds, where the first bound alone needed cells narrower than
// the bump at every length (docs/theory.md §11.6). This checks that the bounds prune (no pair
// here disagrees, so it cannot see an unsound bound: the property tests of
// tests/property/threshold/threshold_property_test.cpp check soundness).
TEST(ThresholdRelaxed, CertifiesEveryLengthFarBeyondEnumeration) {
  for (const Kind kind : {Kind::kBump, Kind::kGlobalBump, Kind::kSoftmaxTilt}) {
    SCOPED_TRACE(test::KindName(kind));
    const ThresholdResult r = Search(kind, 0.5, 1000, true);
    EXPECT_FALSE(r.first_disagreement.has_value());
    EXPECT_TRUE(r.exhaustive);
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.checked_up_to, 1000u);
    EXPECT_GT(r.statistics_total, std::uint64_t{5000000000});
    EXPECT_GT(r.statistics_pruned, 10000 * r.statistics_evaluated);
  }
}

}  // namespace
}  // namespace ltsim
