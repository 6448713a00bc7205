// `ComputeProfile` on a pair whose largest gap at every length is derived by hand
// (docs/theory.md §14): f = the share of 1s, g = f plus a tent of height 1 and half-width 0.1
// at 1/3, so G(T) = max_n max(0, 1 − |n/T − 1/3| / 0.1) and the supremum is 1 (T = 3).
#include "ltsim/threshold/profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim_test/hand_models.h"

namespace ltsim {
namespace {

double Tent(std::uint64_t T) {
  double best = 0.0;
  for (std::uint64_t n = 0; n <= T; ++n)
    best = std::max(best, 1.0 - std::abs(double(n) / double(T) - 1.0 / 3.0) / 0.1);
  return best;
}

ProfileOptions Options(std::uint64_t n, std::uint64_t N, int threads = 1) {
  ProfileOptions o;
  o.train_length = n;
  o.max_length = N;
  o.points = 6;
  o.threads = threads;
  return o;
}

TEST(Profile, EveryLengthsBracketIsTheHandDerivedLargestGap) {
  const Transformer f = test::ShareOfOnes(Attention::kHardmax, 0.0);
  const Transformer g = test::Bump(1.0 / 3.0, 0.1, 1.0);
  const ProfileResult r = ComputeProfile(f, g, Options(5, 2000));
  ASSERT_EQ(r.points.size(), ProfileLengths(5, 2000, 6).size());
  for (const ProfilePoint& p : r.points) {
    EXPECT_NEAR(p.lower, Tent(p.length), 1e-9) << p.length;
    EXPECT_NEAR(p.upper, Tent(p.length), 1e-9) << p.length;
  }
  // G(1) = G(2) = 0, G(3) = 1, G(4) = 1/6, G(5) = 1/3: ε_train(5) = 1, the supremum 1.
  EXPECT_NEAR(r.train_lower, 1.0, 1e-9);
  EXPECT_NEAR(r.train_upper, 1.0, 1e-9);
  EXPECT_NEAR(r.sup_lower, 1.0, 1e-9);
  EXPECT_LE(r.sup_upper, 1.0 + 1e-3 + 1e-9);
  EXPECT_GE(r.sup_upper, 1.0 - 1e-9);
  EXPECT_EQ(r.sup_status, "tolerance");
  EXPECT_NEAR(r.ratio_lower, 1.0, 1e-3);
  EXPECT_NEAR(r.ratio_upper, 1.0, 2e-3);
}

// Trained on lengths 1 and 2, where the tent is 0: the ratio's upper end is +∞ (a later gap is
// an unbounded multiple of a zero training gap), its lower end is the supremum over ε_train's
// certified upper bound.
TEST(Profile, AZeroTrainingGapGivesAnUnboundedRatio) {
  const Transformer f = test::ShareOfOnes(Attention::kHardmax, 0.0);
  const Transformer g = test::Bump(1.0 / 3.0, 0.1, 1.0);
  const ProfileResult r = ComputeProfile(f, g, Options(2, 100));
  EXPECT_LE(r.train_lower, 1e-9);  // 0 up to the MLP's rounding
  EXPECT_LE(r.train_upper, 2e-9);
  EXPECT_TRUE(std::isinf(r.ratio_upper));
  EXPECT_GT(r.ratio_lower, 1e6);
}

// Identical models: every bracket is [0, rounding], the supremum's too.
TEST(Profile, IdenticalModelsHaveAZeroProfile) {
  const Transformer f = test::ShareOfOnes(Attention::kSoftmax, 0.7);
  const ProfileResult r = ComputeProfile(f, f, Options(4, 300));
  for (const ProfilePoint& p : r.points) {
    EXPECT_EQ(p.lower, 0.0) << p.length;
    EXPECT_LE(p.upper, 1e-9) << p.length;
  }
  EXPECT_EQ(r.sup_lower, 0.0);
  EXPECT_LE(r.sup_upper, 2e-9);
}

TEST(Profile, ResultsDoNotDependOnThreads) {
  const Transformer f = test::ShareOfOnes(Attention::kSoftmax, 0.3);
  const Transformer g = test::ShareOfOnes(Attention::kFinite, 0.3, 3);
  const ProfileResult one = ComputeProfile(f, g, Options(6, 500, 1));
  const ProfileResult two = ComputeProfile(f, g, Options(6, 500, 2));
  ASSERT_EQ(one.points.size(), two.points.size());
  for (std::size_t i = 0; i < one.points.size(); ++i) {
    EXPECT_EQ(one.points[i].lower, two.points[i].lower);
    EXPECT_EQ(one.points[i].upper, two.points[i].upper);
  }
  EXPECT_EQ(one.sup_lower, two.sup_lower);
  EXPECT_EQ(one.sup_upper, two.sup_upper);
}

TEST(Profile, TheGridIsEveryTrainingLengthThenLogSpacedUpToN) {
  EXPECT_EQ(ProfileLengths(3, 1000, 3), (std::vector<std::uint64_t>{1, 2, 3, 21, 144, 1000}));
  EXPECT_EQ(ProfileLengths(0, 100, 2), (std::vector<std::uint64_t>{10, 100}));
  EXPECT_EQ(ProfileLengths(5, 5, 4), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ProfileLengths(0, 3, 10), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(Profile, BadOptionsAreRefusedBeforeAnyWork) {
  const Transformer f = test::ShareOfOnes(Attention::kHardmax, 0.0);
  ProfileOptions o = Options(10, 5);
  EXPECT_THROW(ComputeProfile(f, f, o), OptionError);  // N < n
  o = Options(kProfileMaxTrainLength + 1, kProfileMaxTrainLength + 1);
  EXPECT_THROW(ComputeProfile(f, f, o), OptionError);
  o = Options(2, 10);
  o.points = 0;
  EXPECT_THROW(ComputeProfile(f, f, o), OptionError);
  o = Options(2, 10);
  o.tolerance = 0.0;
  EXPECT_THROW(ComputeProfile(f, f, o), OptionError);
  Transformer log_scaled = f;
  log_scaled.layers[0].bias_scaling = BiasScaling::kLog;
  EXPECT_THROW(ComputeProfile(log_scaled, f, Options(2, 10)), InputError);
}

}  // namespace
}  // namespace ltsim
