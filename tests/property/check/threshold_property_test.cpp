// The pruned threshold search against full enumeration (every statistic evaluated) on random
// one-layer pairs of every attention mode, with MLPs, periods, localities and bias scalings.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

#include "check/threshold_cells.h"
#include "ltsim/check/threshold.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// Full enumeration evaluates at most this many statistics a case (kept to milliseconds).
constexpr std::uint64_t kBudget = 3000;

struct Pair {
  Transformer f, g;
  std::uint64_t max_length = 0;
};

// A random one-layer pair on one alphabet, grid weights half the time (hardmax ties), and the
// largest N whose statistics fit the budget.
Pair GenPair() {
  test::ModelShape a = *test::GenShape();
  a.layers = 1;
  a.grid = *rc::gen::arbitrary<bool>();
  test::ModelShape b = *test::WithAlphabet(test::GenShape(), a.alphabet);
  b.layers = 1;
  b.grid = *rc::gen::element(a.grid, !a.grid);
  b.outputs = a.outputs;
  // A near copy half the time: the pair then agrees for longer and the bound has to cancel.
  if (*rc::gen::arbitrary<bool>()) {
    b = a;
    b.seed = a.seed;
    b.scale = a.scale * *rc::gen::element(1.0, 1.05, 0.9);
    b.attention = *rc::gen::element(Attention::kHardmax, Attention::kSoftmax, Attention::kFinite);
    b.precision_bits = b.attention == Attention::kFinite ? *rc::gen::inRange(1, 5) : 0;
  }
  Pair p{test::MakeRandomModel(a), test::MakeRandomModel(b), 0};
  const JointView v = JointViewOf({&p.f, &p.g});
  std::uint64_t total = 0;
  while (p.max_length < 60) {
    const std::uint64_t next = CountStatistics(v.alphabet, v.period, v.locality, p.max_length + 1);
    if (total + next > kBudget) break;
    total += next;
    ++p.max_length;
  }
  return p;
}

// ε from the pair's own largest gaps: just below the maximum at a random length (so the first
// disagreement is at most that length), exactly at it, or above every gap (none).
double GenEpsilon(const Pair& p) {
  ThresholdOptions all{1e300, p.max_length, 1, 100};
  all.prune = false;
  const ThresholdResult r = FindThreshold(p.f, p.g, all);
  const std::size_t at = *rc::gen::inRange<std::size_t>(0, r.max_gap_per_length.size());
  const double gap = r.max_gap_per_length[at];
  RC_PRE(std::isfinite(gap));
  const double top = *std::max_element(r.max_gap_per_length.begin(), r.max_gap_per_length.end());
  return *rc::gen::element(gap * 0.5, gap * 0.999, gap, top * 1.5 + 1e-3);
}

RC_GTEST_PROP(ThresholdProperty, PruningFindsWhatFullEnumerationFinds, ()) {
  const Pair p = GenPair();
  RC_PRE(p.max_length >= 1);
  const double eps = GenEpsilon(p);
  ThresholdOptions full{eps, p.max_length, 1, 100};
  full.prune = false;
  const ThresholdResult want = FindThreshold(p.f, p.g, full);
  ThresholdOptions pruned = full;
  pruned.prune = true;
  pruned.full_statistics = 0;  // cells from the first length with far positions
  pruned.leaf_statistics = *rc::gen::element(1.0, 1.0, 2.0, 8.0);
  pruned.count_pruned = true;
  const ThresholdResult got = FindThreshold(p.f, p.g, pruned);
  RC_TAG(want.first_disagreement ? "disagree" : "agree",
         got.statistics_pruned > 0 ? "pruned some" : "pruned none");
  RC_ASSERT(got.first_disagreement == want.first_disagreement);
  RC_ASSERT(got.checked_up_to == want.checked_up_to);
  RC_ASSERT(got.exhaustive);
  if (want.first_disagreement) {
    // Same length; the witness realises the largest gap at T* (the strings may differ only
    // between statistics whose gaps are equal up to rounding).
    RC_ASSERT(FromRuns(got.witness).size() == FromRuns(want.witness).size());
    RC_ASSERT(std::abs(got.gap - want.gap) <= 1e-9 * (1.0 + std::abs(want.gap)));
    RC_ASSERT(got.recheck.status == want.recheck.status);
  }
  // Every statistic is evaluated or inside a pruned cell, counted cell by cell.
  RC_ASSERT(got.statistics_evaluated + got.statistics_pruned == got.statistics_total);
  RC_ASSERT(got.statistics_pruned_counted == got.statistics_pruned);
  if (got.search_period == got.view.period)
    RC_ASSERT(got.statistics_total == want.statistics_total);
  // Lengths below T* where a statistic was evaluated: never above the true maximum, up to the
  // two evaluators' stated agreement (1e-9·(1 + |output|) per output, as
  // TableEvaluationEqualsTheOneLayerEvaluator asserts), so a gap may differ by
  // 2e-9·(1 + M) with M the outputs' size at that length (measured on 8 random strings).
  for (std::size_t k = 0; k + 1 < got.max_gap_per_length.size(); ++k) {
    if (std::isnan(got.max_gap_per_length[k])) continue;
    const JointView v = JointViewOf({&p.f, &p.g});
    double outputs = 0.0;
    for (int trial = 0; trial < 8; ++trial) {
      const std::vector<Token> x =
          *test::GenString(v.alphabet, static_cast<int>(k + 1), static_cast<int>(k + 1));
      const TypeCounts joint = CountTypes(x, v.alphabet, v.period, v.locality);
      for (const Transformer* m : {&p.f, &p.g})
        outputs = std::max(
            outputs,
            EvaluateOneLayer(*m, Coarsen(joint, m->period, m->locality)).cwiseAbs().maxCoeff());
    }
    RC_ASSERT(got.max_gap_per_length[k] <= want.max_gap_per_length[k] + 2e-9 * (1.0 + outputs));
  }
}

RC_GTEST_PROP(ThresholdProperty, ResultsAreTheSameForAnyThreadCount, ()) {
  const Pair p = GenPair();
  RC_PRE(p.max_length >= 1);
  const double eps = GenEpsilon(p);
  ThresholdOptions o{eps, p.max_length, 1, 100};
  o.full_statistics = 0;
  o.threads = 1;
  const ThresholdResult one = FindThreshold(p.f, p.g, o);
  o.threads = *rc::gen::inRange(2, 5);
  const ThresholdResult many = FindThreshold(p.f, p.g, o);
  RC_ASSERT(one.first_disagreement == many.first_disagreement);
  RC_ASSERT(one.witness == many.witness);
  RC_ASSERT(one.evaluations == many.evaluations);
  RC_ASSERT(one.cells == many.cells);
  RC_ASSERT(one.statistics_evaluated == many.statistics_evaluated);
  RC_ASSERT(one.max_gap_per_length.size() == many.max_gap_per_length.size());
  for (std::size_t k = 0; k < one.max_gap_per_length.size(); ++k) {
    const double a = one.max_gap_per_length[k], b = many.max_gap_per_length[k];
    RC_ASSERT((std::isnan(a) && std::isnan(b)) || a == b);
  }
}

// The engine's evaluator (tables per context) against EvaluateOneLayer on random statistics.
RC_GTEST_PROP(ThresholdProperty, TableEvaluationEqualsTheOneLayerEvaluator, ()) {
  const Pair p = GenPair();
  const JointView v = JointViewOf({&p.f, &p.g});
  const int length = *rc::gen::inRange(v.locality + 2, v.locality + 200);
  const std::vector<Token> x = *test::GenString(v.alphabet, length, length);
  const TypeCounts joint = CountTypes(x, v.alphabet, v.period, v.locality);
  threshold::ContextKey key;
  key.residue = static_cast<int>(joint.length % v.period);
  key.suffix.assign(joint.suffix.begin(), joint.suffix.end());
  key.length = joint.length;
  const threshold::PairTable table = threshold::BuildPairTable(p.f, p.g, v, key);
  const Transformer* models[2] = {&p.f, &p.g};
  for (int s = 0; s < 2; ++s) {
    threshold::SideValue value;
    threshold::EvaluateSide(table.side[s], table.types, joint.far, joint.length, value);
    const Vector want =
        EvaluateOneLayer(*models[s], Coarsen(joint, models[s]->period, models[s]->locality));
    for (int k = 0; k < want.size(); ++k)
      RC_ASSERT(std::abs(value.out[k] - want[k]) <= 1e-9 * (1.0 + std::abs(want[k])));
  }
}

}  // namespace
}  // namespace ltsim
