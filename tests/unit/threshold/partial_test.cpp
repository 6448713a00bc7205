// The threshold's partial answers (a stop flag, a time budget, a first length), its per-length
// bracket of the largest gap, and the codec's checks of items read back from shard files.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ltsim/construct/tasks.h"
#include "ltsim/core/item_error.h"
#include "ltsim/core/work.h"
#include "ltsim/model/joint_view.h"
#include "ltsim/threshold/threshold.h"
#include "threshold/item_codec.h"

namespace ltsim {
namespace {

// The threshold search to length N at ε, every other option at its default.
ThresholdOptions SearchTo(double epsilon, std::uint64_t max_length) {
  ThresholdOptions o;
  o.epsilon = epsilon;
  o.max_length = max_length;
  return o;
}

// f = share of 1s at odd positions, g = at positions ≡ 1 (mod 3) (Δ* = 6): their largest gaps
// are 0, 0, 1/2, 1/2, 2/3 at T = 1 … 5 (threshold_test.cpp), and many statistics a length.
const Transformer& F() {
  static const Transformer f = MakeModPTask(2, 1);
  return f;
}
const Transformer& G() {
  static const Transformer g = MakeModPTask(3, 1);
  return g;
}

// Every length the result covers has a bracket lower ≤ upper, both finite.
void ExpectBrackets(const ThresholdResult& r) {
  ASSERT_EQ(r.gap_upper_per_length.size(), r.max_gap_per_length.size());
  for (std::uint64_t t = r.min_length; t <= r.checked_up_to; ++t) {
    const double lower = r.max_gap_per_length[t - 1], upper = r.gap_upper_per_length[t - 1];
    ASSERT_FALSE(std::isnan(upper)) << "T = " << t;
    if (!std::isnan(lower)) {
      EXPECT_LE(lower, upper) << "T = " << t;
    }
  }
}

TEST(ThresholdPartial, AStopFlagEndsEverySearchWithWhatItCertified) {
  std::atomic<bool> stop{true};
  for (bool prune : {true, false}) {
    ThresholdOptions o = SearchTo(0.99, 50);
    o.prune = prune;
    o.full_statistics = 0;
    o.stop = &stop;
    o.threads = 1;
    const ThresholdResult r = FindThreshold(F(), G(), o);
    EXPECT_FALSE(r.complete) << prune;
    EXPECT_EQ(r.stopped, ThresholdStop::kSignal) << prune;
    EXPECT_LT(r.checked_up_to, 50u) << prune;
    EXPECT_FALSE(r.first_disagreement.has_value());
    EXPECT_EQ(r.max_gap_per_length.size(), r.checked_up_to);
    ExpectBrackets(r);
    // What it did certify is what the whole search says about those lengths.
    ThresholdOptions whole = o;
    whole.stop = nullptr;
    whole.max_length = std::max<std::uint64_t>(1, r.checked_up_to);
    const ThresholdResult w = FindThreshold(F(), G(), whole);
    EXPECT_FALSE(w.first_disagreement.has_value());
  }
}

TEST(ThresholdPartial, ATimeBudgetStopsThePrunedSearchInsideAWindow) {
  // The irrational bump pair of threshold_test.cpp would take seconds to N = 10^5; a budget of
  // a microsecond stops it in its first windows.
  ThresholdOptions o = SearchTo(0.5, 100000);
  o.time_budget = 1e-6;
  o.threads = 1;
  const ThresholdResult r = FindThreshold(F(), G(), o);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.stopped, ThresholdStop::kTimeBudget);
  EXPECT_LT(r.checked_up_to, 100000u);
  ExpectBrackets(r);
}

TEST(ThresholdPartial, MinLengthSearchesFromItAndReportsNothingBelow) {
  for (bool prune : {true, false}) {
    ThresholdOptions o = SearchTo(0.6, 30);
    o.prune = prune;
    o.full_statistics = 0;
    const ThresholdResult all = FindThreshold(F(), G(), o);
    ASSERT_EQ(all.first_disagreement, std::optional<std::uint64_t>(5));
    o.min_length = 7;
    const ThresholdResult from = FindThreshold(F(), G(), o);
    ASSERT_TRUE(from.first_disagreement.has_value());
    EXPECT_GE(*from.first_disagreement, 7u);
    EXPECT_EQ(from.min_length, 7u);
    for (std::uint64_t t = 1; t < 7; ++t) {
      EXPECT_TRUE(std::isnan(from.max_gap_per_length[t - 1])) << t;
      EXPECT_TRUE(std::isnan(from.gap_upper_per_length[t - 1])) << t;
    }
    // From n on, the same as the full search's per-length maxima say: the first T ≥ 7 whose
    // largest gap exceeds ε (no-prune: every length's maximum is exact).
    ThresholdOptions every = SearchTo(1e300, 30);
    every.prune = false;
    const ThresholdResult gaps = FindThreshold(F(), G(), every);
    std::uint64_t want = 0;
    for (std::uint64_t t = 7; t <= 30 && want == 0; ++t)
      if (gaps.max_gap_per_length[t - 1] > 0.6 + 1e-9) want = t;
    EXPECT_EQ(*from.first_disagreement, want);
    ExpectBrackets(from);
  }
  ThresholdOptions bad = SearchTo(0.6, 30);
  bad.min_length = 31;
  EXPECT_THROW(FindThreshold(F(), G(), bad), OptionError);
  bad.min_length = 1;
  bad.time_budget = -1;
  EXPECT_THROW(FindThreshold(F(), G(), bad), OptionError);
}

// ---- Items read back from shard files -----------------------------------------------------

// A length's outcome as the full enumeration deals it: T = 5 of the pair above disagrees.
std::string DisagreeingItem(JointView& view) {
  view = JointViewOf({&F(), &G()});
  threshold::LengthOutcome o;
  o.max_gap = o.witness_gap = 2.0 / 3.0;
  o.disagrees = true;
  TypeCounts c;
  c.alphabet = view.alphabet;
  c.period = view.period;
  c.locality = view.locality;
  c.length = 5;
  c.far.assign(static_cast<std::size_t>(view.alphabet) * view.period, 0);
  // τ* = 0: one suffix token, far positions j = 1 … 4 of residues 1, 2, 3, 4.
  for (int r = 1; r <= 4; ++r) c.far[c.TypeIndex(r % 2, r)] = 1;
  c.suffix = {1};
  o.argmax_counts = c;
  return threshold::OutcomeBytes(o, 3);
}

TEST(ThresholdItems, AWellFormedItemDecodes) {
  JointView view;
  const std::string bytes = DisagreeingItem(view);
  std::uint64_t evaluations = 0;
  const threshold::LengthOutcome o = threshold::OutcomeFromBytes(bytes, 5, view, evaluations);
  EXPECT_EQ(evaluations, 3u);
  EXPECT_TRUE(o.disagrees);
  ASSERT_TRUE(o.argmax_counts.has_value());
}

// Each malformed item is an ItemBytesError (an InputError) naming the length, never a failed
// internal check: a truncated or overlong item, statistics of another view or length, counts
// that do not add up, a disagreement without a witness.
TEST(ThresholdItems, MalformedItemsAreInputErrorsNamingTheLength) {
  JointView view;
  const std::string good = DisagreeingItem(view);
  std::vector<std::string> bad;
  bad.push_back(good.substr(0, good.size() - 3));
  bad.push_back(good + "x");
  // The alphabet of the statistics: after max_gap, disagrees, witness_gap, evaluations, the
  // empty string (its size) and the has-statistics flag.
  const std::size_t at = 8 + 1 + 8 + 8 + 8 + 1;
  ASSERT_EQ(good[at - 1], 1);
  std::string other = good;
  const int nine = 9;
  std::memcpy(&other[at], &nine, sizeof nine);
  bad.push_back(other);
  std::string longer = good;  // length 6 in the statistics
  const std::uint64_t six = 6;
  std::memcpy(&longer[at + 3 * sizeof(int)], &six, sizeof six);
  bad.push_back(longer);
  threshold::LengthOutcome o;
  o.disagrees = true;
  o.max_gap = o.witness_gap = 1.0;
  bad.push_back(threshold::OutcomeBytes(o, 1));  // a disagreement without a witness
  o.argmax = {0, 1, 7, 0, 1};                    // a token outside the alphabet
  bad.push_back(threshold::OutcomeBytes(o, 1));
  for (std::size_t k = 0; k < bad.size(); ++k) {
    std::uint64_t evaluations = 0;
    try {
      threshold::OutcomeFromBytes(bad[k], 5, view, evaluations);
      ADD_FAILURE() << "item " << k << " decoded";
    } catch (const ItemBytesError& e) {
      EXPECT_NE(std::string(e.what()).find("threshold item (length 5)"), std::string::npos)
          << e.what();
    }
  }
  // Statistics of another length than the item's.
  std::uint64_t evaluations = 0;
  EXPECT_THROW(threshold::OutcomeFromBytes(good, 6, view, evaluations), ItemBytesError);
}

TEST(ThresholdItems, MalformedTaskOutcomesAreInputErrors) {
  const JointView view = JointViewOf({&F(), &G()});
  threshold::TaskSpec spec;
  spec.key.suffix = {0};
  spec.T_base = 2;
  spec.k_lo = 0;
  spec.k_hi = 3;
  threshold::TaskOutcome o;
  o.evaluated.assign(4, 1);
  o.max_gap.assign(4, 0.5);
  o.max_bound.assign(4, 0.5);
  EXPECT_NO_THROW(threshold::TaskFromBytes(threshold::TaskBytes(o), spec, view));
  threshold::TaskOutcome short_gaps = o;
  short_gaps.max_gap.pop_back();
  EXPECT_THROW(threshold::TaskFromBytes(threshold::TaskBytes(short_gaps), spec, view),
               ItemBytesError);
  threshold::TaskOutcome far_first = o;
  far_first.first_T = 3;  // not T_base + k·Δ*
  EXPECT_THROW(threshold::TaskFromBytes(threshold::TaskBytes(far_first), spec, view),
               ItemBytesError);
  threshold::TaskOutcome best = o;
  best.best_counts.assign(3, 0);  // D* = 12 counts expected
  best.best_T = 2;
  EXPECT_THROW(threshold::TaskFromBytes(threshold::TaskBytes(best), spec, view), ItemBytesError);
  threshold::TaskOutcome interrupted = o;
  interrupted.stopped_at = 4;  // a dealt task always runs whole
  EXPECT_THROW(threshold::TaskFromBytes(threshold::TaskBytes(interrupted), spec, view),
               ItemBytesError);
  const std::string bytes = threshold::TaskBytes(o);
  EXPECT_THROW(threshold::TaskFromBytes(bytes.substr(0, bytes.size() / 2), spec, view),
               ItemBytesError);
}

}  // namespace
}  // namespace ltsim
