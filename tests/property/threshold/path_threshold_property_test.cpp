// The two-layer path search (docs/theory.md §11.5) against every string evaluated by the
// reference evaluator, its set bound against the true largest gap over the set's paths, and its
// results for several thread counts, on random pairs of every attention mode.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ltsim/eval/reference.h"
#include "ltsim/model/model_file.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"
#include "threshold/path_bound.h"
#include "threshold/path_dag.h"

namespace ltsim {
namespace {

// Strings a case evaluates with the reference evaluator: Σ_{T ≤ N} S^T ≤ kStrings; sets whose
// bound is checked hold at most kSetPaths paths (evaluated from the tables).
constexpr std::uint64_t kStrings = 1024;
constexpr std::uint64_t kSetPaths = 1 << 14;

struct Pair {
  Transformer f, g;
  std::uint64_t max_length = 0;
};

// Small shapes (widths ≤ 4, S ≤ 3, Δ ≤ 2, τ ≤ 2) so that a case takes milliseconds.
test::ModelShape Small(test::ModelShape s) {
  s.width = std::min(s.width, 4);
  s.alphabet = std::min(s.alphabet, 3);
  s.period = std::min(s.period, 2);
  s.locality = std::min(s.locality, 2);
  return s;
}

// A two-layer f and a g that is: another random model (two layers or one), a copy of f with one
// second-layer head's M scaled (the pair then differs a little everywhere, as the k-gram pair
// does), or f rebuilt at a nearby weight scale or with another second-layer mode.
Pair GenPair(std::uint64_t strings = kStrings) {
  test::ModelShape a = Small(*test::GenTwoLayerShape());
  a.grid = *rc::gen::arbitrary<bool>();
  Pair p;
  p.f = test::MakeRandomModel(a);
  const int kind = *rc::gen::inRange(0, 4);
  if (kind == 0) {
    test::ModelShape b = Small(*test::WithAlphabet(test::GenTwoLayerShape(), a.alphabet));
    b.alphabet = a.alphabet;
    b.outputs = a.outputs;
    b.layers = *rc::gen::element(1, 2);
    p.g = test::MakeRandomModel(b);
  } else if (kind == 1) {
    p.g = p.f;
    Head& h = p.g.layers[1].heads[0];
    h.qk *= *rc::gen::element(1.02, 0.9, 1.3);
  } else if (kind == 2) {
    test::ModelShape b = a;
    b.scale = a.scale * *rc::gen::element(1.05, 0.9);
    p.g = test::MakeRandomModel(b);
  } else {
    test::ModelShape b = a;
    b.attention2 = *rc::gen::element(Attention::kHardmax, Attention::kSoftmax, Attention::kFinite);
    b.precision_bits2 = *rc::gen::inRange(1, 6);
    p.g = test::MakeRandomModel(b);
  }
  std::uint64_t total = 0, power = 1;
  while (p.max_length < 16) {
    power *= static_cast<std::uint64_t>(a.alphabet);
    if (total + power > strings) break;
    total += power;
    ++p.max_length;
  }
  return p;
}

// Every string's gap and output size by the reference evaluator, length by length.
struct Truth {
  std::vector<std::vector<double>> gap, size;  // [T − 1][string]
  std::vector<double> max;                     // [T − 1]
};

// Strings on which the reference evaluator and the path search's tables (FirstLayerOutput per
// node) differ by more than rounding discard the case: a second-layer weight at its hardmax or
// finite threshold within rounding (a tie on a grid of weights) is decided by each evaluator's
// own rounding (docs/theory.md §11.5, "Ties at a threshold").
Truth EveryString(const Pair& p) {
  Truth t;
  const JointView view = JointViewOf({&p.f, &p.g});
  threshold::PathDag dag(view);
  dag.Extend(p.max_length);
  threshold::PathPair pair(p.f, p.g, dag);
  pair.Extend();
  for (std::uint64_t T = 1; T <= p.max_length; ++T) {
    std::vector<Token> x(T, 0);
    t.gap.emplace_back();
    t.size.emplace_back();
    double best = -1.0;
    while (true) {
      const Vector a = EvaluateReference(p.f, x), b = EvaluateReference(p.g, x);
      Vector ta, tb;
      threshold::PathOutputs(pair, threshold::PathNodes(dag, x), ta, tb);
      const double scale = 1e-9 * (1.0 + a.cwiseAbs().maxCoeff() + b.cwiseAbs().maxCoeff());
      RC_PRE(!a.allFinite() || !b.allFinite() ||
             ((a - ta).cwiseAbs().maxCoeff() <= scale && (b - tb).cwiseAbs().maxCoeff() <= scale));
      const bool finite = a.allFinite() && b.allFinite();
      const double gap =
          finite ? (a - b).cwiseAbs().maxCoeff() : std::numeric_limits<double>::infinity();
      t.gap.back().push_back(gap);
      t.size.back().push_back(finite ? std::max(a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff())
                                     : 0.0);
      best = std::max(best, gap);
      std::size_t k = T;
      while (k > 0 && ++x[k - 1] == p.f.alphabet) x[--k] = 0;
      if (k == 0) break;
    }
    t.max.push_back(best);
  }
  return t;
}

// ε from the true maxima: half, just below, at or above a length's maximum, or above all.
double GenEpsilon(const std::vector<double>& gaps) {
  const std::size_t at = *rc::gen::inRange<std::size_t>(0, gaps.size());
  const double gap = gaps[at];
  RC_PRE(std::isfinite(gap));
  const double top = *std::max_element(gaps.begin(), gaps.end());
  RC_PRE(std::isfinite(top));
  return *rc::gen::element(gap * 0.5, gap * 0.999, gap, gap * 1.001, top * 1.5 + 1e-3);
}

// The first length with a string that disagrees by the verdict rule (ThresholdDisagrees: gap >
// ε + 1e-9·max(1, |f|, |g|)), 0 if none; cases where a string's gap lies within twice that
// tolerance of the threshold are discarded (the tables and the reference evaluator agree to
// rounding, so such a verdict could go either way).
std::uint64_t FirstDisagreement(const Truth& t, double eps) {
  std::uint64_t first = 0;
  for (std::size_t k = 0; k < t.gap.size(); ++k)
    for (std::size_t i = 0; i < t.gap[k].size(); ++i) {
      const double tolerance = kThresholdGapTolerance * std::max(1.0, t.size[k][i]);
      const double gap = t.gap[k][i];
      RC_PRE(!(std::abs(gap - (eps + tolerance)) <= 2 * tolerance));
      if (gap > eps + tolerance && first == 0) first = k + 1;
    }
  return first;
}

RC_GTEST_PROP(PathThresholdProperty, FindsWhatEveryStringFinds, ()) {
  const Pair p = GenPair();
  RC_PRE(p.max_length >= 1);
  const Truth every = EveryString(p);
  const std::vector<double>& truth = every.max;
  const double eps = GenEpsilon(truth);
  const std::uint64_t want = FirstDisagreement(every, eps);
  ThresholdOptions o;
  o.epsilon = eps;
  o.max_length = p.max_length;
  o.threads = 1;
  o.full_strings = 0;  // every length through the path search
  o.leaf_paths = *rc::gen::element(1.0, 2.0, 4.0, 16.0);
  const ThresholdResult got = FindThreshold(p.f, p.g, o);
  // Printed with a failure: the pair, so that it can be replayed with `ltsim threshold`.
  RC_LOG() << "f: " << ModelToJson(p.f) << "\ng: " << ModelToJson(p.g) << "\neps "
           << fmt::format("{:.17g}", eps) << " leaf " << o.leaf_paths << "\n";
  RC_TAG(want ? "disagree" : "agree", got.paths.sets_pruned > 0 ? "pruned some" : "pruned none");
  RC_ASSERT(got.method == ThresholdMethod::kPaths);
  RC_ASSERT(got.exhaustive);
  RC_ASSERT(got.first_disagreement.value_or(0) == want);
  RC_ASSERT(got.checked_up_to == (want ? want : p.max_length));
  if (want) {
    RC_ASSERT(FromRuns(got.witness).size() == want);
    // The witness realises the largest gap at T*.
    RC_ASSERT(std::abs(got.gap - truth[want - 1]) <= 1e-9 * (1.0 + truth[want - 1]));
  }
  // Every gap evaluated is a real string's: never above the length's maximum.
  for (std::size_t k = 0; k < got.max_gap_per_length.size(); ++k)
    if (!std::isnan(got.max_gap_per_length[k]))
      RC_ASSERT(got.max_gap_per_length[k] <= truth[k] + 1e-9 * (1.0 + truth[k]));
}

RC_GTEST_PROP(PathThresholdProperty, ResultsAreTheSameForAnyThreadCount, ()) {
  const Pair p = GenPair(256);
  RC_PRE(p.max_length >= 1);
  const double eps = GenEpsilon(EveryString(p).max);
  ThresholdOptions o;
  o.epsilon = eps;
  o.max_length = p.max_length;
  o.full_strings = 0;
  o.leaf_paths = 2;
  o.threads = 1;
  const ThresholdResult one = FindThreshold(p.f, p.g, o);
  {
    o.threads = *rc::gen::element(2, 4);
    const ThresholdResult many = FindThreshold(p.f, p.g, o);
    RC_ASSERT(one.first_disagreement == many.first_disagreement);
    RC_ASSERT(one.witness == many.witness);
    RC_ASSERT(one.evaluations == many.evaluations);
    RC_ASSERT(one.paths.sets == many.paths.sets);
    RC_ASSERT(one.paths.programs == many.paths.programs);
    RC_ASSERT(one.max_gap_per_length.size() == many.max_gap_per_length.size());
    for (std::size_t k = 0; k < one.max_gap_per_length.size(); ++k) {
      const double a = one.max_gap_per_length[k], b = many.max_gap_per_length[k];
      RC_ASSERT((std::isnan(a) && std::isnan(b)) || a == b);
    }
  }
}

// A random set of paths: the root of a final window over one length or a range of lengths
// (whose windows have one length), then random children down the search's own splits (lengths,
// final boxes, a* intervals, waypoint boxes).
threshold::PathSet GenSet(const threshold::PathPair& pair, std::uint64_t max_length) {
  const std::uint64_t m = static_cast<std::uint64_t>(pair.dag().view().locality) + 1;
  const std::uint64_t T_lo = *rc::gen::inRange<std::uint64_t>(1, max_length + 1);
  const std::uint64_t T_hi =
      T_lo >= m ? *rc::gen::inRange<std::uint64_t>(T_lo, max_length + 1) : T_lo;
  std::uint64_t windows = 1;
  for (std::uint64_t t = 0; t < std::min(T_lo, m); ++t)
    windows *= static_cast<std::uint64_t>(pair.dag().view().alphabet);
  threshold::PathSet set = threshold::RootPathSet(
      pair, T_lo, T_hi, static_cast<std::uint32_t>(*rc::gen::inRange<std::uint64_t>(0, windows)));
  threshold::BoundOptions bo;
  bo.leaf_paths = 1;
  const int depth = *rc::gen::inRange(0, 7);
  for (int k = 0; k < depth; ++k) {
    // Bounded against −1: never holds, so the children are always produced.
    const threshold::SetBound b = threshold::BoundPathSet(pair, set, -1.0, bo);
    if (b.children.empty()) break;
    set = b.children[*rc::gen::inRange<std::size_t>(0, b.children.size())];
  }
  return set;
}

// The largest gap over a set's paths by brute force: every string of its boxes is enumerated
// and those whose largest logits lie in its a* intervals are evaluated.
struct SetGap {
  double largest = -1.0;    ///< over the finite gaps; −1 when there is none
  bool non_finite = false;  ///< some path's gap is infinite or NaN
  bool complete = false;    ///< the enumeration listed every path (at most kSetPaths)
};

SetGap LargestGapOverSet(const threshold::PathPair& pair, const threshold::PathDag& dag,
                         const threshold::PathSet& set) {
  SetGap g;
  for (const auto& x : threshold::EnumeratePaths(pair, set, kSetPaths, &g.complete)) {
    const auto nodes = threshold::PathNodes(dag, x);
    if (!threshold::PathInSet(pair, set, nodes)) continue;
    Vector a, b;
    threshold::PathOutputs(pair, nodes, a, b);
    const double gap = threshold::PathGap(a, b);
    if (std::isfinite(gap))
      g.largest = std::max(g.largest, gap);
    else
      g.non_finite = true;
  }
  return g;
}

RC_GTEST_PROP(PathThresholdProperty, EveryBoundIsAtLeastTheLargestGapOverItsPaths, ()) {
  const Pair p = GenPair(kSetPaths);
  RC_PRE(p.max_length >= 2);
  const JointView view = JointViewOf({&p.f, &p.g});
  threshold::PathDag dag(view);
  dag.Extend(p.max_length);
  threshold::PathPair pair(p.f, p.g, dag);
  pair.Extend();
  const threshold::PathSet set = GenSet(pair, p.max_length);
  const SetGap gap = LargestGapOverSet(pair, dag, set);
  RC_PRE(gap.complete && gap.largest >= 0);
  const double truth = gap.largest;
  threshold::BoundOptions bo;
  bo.leaf_paths = 0;  // bound even single paths
  // Just below the largest gap: no certificate may claim the set is within it.
  const double below = truth - 1e-9 * (1.0 + truth);
  const threshold::SetBound b = threshold::BoundPathSet(pair, set, below, bo);
  RC_LOG() << "f: " << ModelToJson(p.f) << "\ng: " << ModelToJson(p.g) << "\nlengths " << set.length
           << "-" << set.length_hi << " window " << set.final_window << " truth "
           << fmt::format("{:.17g}", truth) << "\n";
  RC_ASSERT(!b.holds);
  // Above it, how often the bound settles the set (a measurement, tagged).
  const threshold::SetBound above = threshold::BoundPathSet(pair, set, truth * 1.05 + 1e-3, bo);
  RC_TAG(above.holds ? "settled at 1.05x" : "not settled at 1.05x");
}

// The bound's fast computations (ratio programmes computing their terms in place, early exits
// in the pairing's envelopes, arrays reused from set to set) against the reference (arrays
// filled first, every envelope point, fresh arrays per set), bit for bit, on random sets at
// limits around the largest gap over their paths.
bool SamePathSet(const threshold::PathSet& a, const threshold::PathSet& b) {
  if (a.length != b.length || a.length_hi != b.length_hi || a.final_window != b.final_window ||
      a.final_lo != b.final_lo || a.final_hi != b.final_hi || a.astar != b.astar ||
      a.waypoints.size() != b.waypoints.size())
    return false;
  for (std::size_t k = 0; k < a.waypoints.size(); ++k)
    if (a.waypoints[k].layer != b.waypoints[k].layer || a.waypoints[k].lo != b.waypoints[k].lo ||
        a.waypoints[k].hi != b.waypoints[k].hi)
      return false;
  return true;
}

RC_GTEST_PROP(PathThresholdProperty, FastBoundIsTheReferenceBitForBit, ()) {
  const Pair p = GenPair(kSetPaths);
  RC_PRE(p.max_length >= 2);
  const JointView view = JointViewOf({&p.f, &p.g});
  threshold::PathDag dag(view);
  dag.Extend(p.max_length);
  threshold::PathPair pair(p.f, p.g, dag);
  pair.Extend();
  threshold::BoundScratch scratch;  // shared by the case's sets, as a search task shares it
  threshold::BoundOptions fast, reference;
  fast.leaf_paths = reference.leaf_paths = 0;  // bound even single paths
  reference.reference = true;
  for (int k = 0; k < 4; ++k) {
    const threshold::PathSet set = GenSet(pair, p.max_length);
    const double truth = std::max(LargestGapOverSet(pair, dag, set).largest, 0.0);
    const double limit = truth * *rc::gen::element(0.5, 0.9, 1.0, 1.05, 1.5, 3.0);
    const threshold::SetBound r = threshold::BoundPathSet(pair, set, limit, reference);
    const threshold::SetBound f = threshold::BoundPathSet(pair, set, limit, fast, &scratch);
    RC_TAG(r.holds ? "holds" : "does not hold");
    RC_ASSERT(f.empty == r.empty);
    RC_ASSERT(f.leaf == r.leaf);
    RC_ASSERT(f.holds == r.holds);
    RC_ASSERT(f.paths == r.paths);
    RC_ASSERT(f.nodes == r.nodes);
    RC_ASSERT(f.programs == r.programs);
    RC_ASSERT(f.candidates == r.candidates);
    RC_ASSERT(f.children.size() == r.children.size());
    for (std::size_t c = 0; c < f.children.size(); ++c)
      RC_ASSERT(SamePathSet(f.children[c], r.children[c]));
  }
}

// Huge second-layer logits (a head's M scaled by up to 1e300, so logits and their exp can
// overflow): a set the bound certifies at a limit has every path's gap ≤ that limit by brute
// force (a non-finite gap is above every limit), in the reference and the fast mode alike. The
// bound must give up rather than let a NaN or infinite term hide a path (docs/theory.md §11.5,
// "2026-12-04, speed-ups that change no bit").
RC_GTEST_PROP(PathThresholdProperty, HugeLogitsAreNeverCertifiedPastABruteForceGap, ()) {
  Pair p = GenPair(kSetPaths);
  RC_PRE(p.max_length >= 2);
  const double scale = *rc::gen::element(1e18, 1e100, 1e300);
  const bool bias = *rc::gen::arbitrary<bool>();
  for (Head& h : p.f.layers[1].heads) {
    h.qk *= scale;
    if (bias) h.bias *= scale;
  }
  const JointView view = JointViewOf({&p.f, &p.g});
  threshold::PathDag dag(view);
  dag.Extend(p.max_length);
  threshold::PathPair pair(p.f, p.g, dag);
  pair.Extend();
  const threshold::PathSet set = GenSet(pair, p.max_length);
  const SetGap gap = LargestGapOverSet(pair, dag, set);
  RC_PRE(gap.complete);
  const double truth = gap.largest;
  const bool infinite = gap.non_finite;
  RC_TAG(infinite ? "a non-finite gap" : "finite gaps");
  threshold::BoundOptions fast, reference;
  fast.leaf_paths = reference.leaf_paths = 0;  // bound even single paths
  reference.reference = true;
  const double limit = std::max(truth, 0.0) * *rc::gen::element(0.5, 0.99, 1.5, 3.0);
  for (const auto* options : {&reference, &fast}) {
    const threshold::SetBound b = threshold::BoundPathSet(pair, set, limit, *options);
    RC_TAG(b.holds ? "certified" : "not certified");
    if (!b.holds) continue;
    RC_LOG() << "scale " << scale << " limit " << fmt::format("{:.17g}", limit) << " truth "
             << fmt::format("{:.17g}", truth) << (infinite ? " and a non-finite gap" : "") << "\n";
    RC_ASSERT(!infinite);
    RC_ASSERT(truth <= limit);
  }
}

}  // namespace
}  // namespace ltsim
