// `Certify` against brute force on random one-layer pairs of every attention mode
// (docs/theory.md §12.8): the certified bound is above every gap enumerated (all statistics up
// to a small length) and every gap of random long statistics (up to T = 10^15), the attained
// gap below it, agreement verdicts have no disagreement up to the enumerated length, and a
// disagreement's T* is the exact threshold's (full enumeration where it reaches T*).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/threshold/certify.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// The threshold search to length N at ε, every other option at its default.
ThresholdOptions SearchTo(double epsilon, std::uint64_t max_length) {
  ThresholdOptions o;
  o.epsilon = epsilon;
  o.max_length = max_length;
  return o;
}

// Full enumeration evaluates at most this many statistics a case.
constexpr std::uint64_t kBudget = 3000;

struct Pair {
  Transformer f, g;
  std::uint64_t brute_length = 0;
};

// A random one-layer pair (bias scaling none), a near copy half the time, and the largest N
// whose statistics fit the enumeration budget.
Pair GenPair() {
  test::ModelShape a = *test::GenShape();
  a.layers = 1;
  a.bias_scaling = BiasScaling::kNone;
  a.grid = *rc::gen::arbitrary<bool>();
  test::ModelShape b = *test::WithAlphabet(test::GenShape(), a.alphabet);
  b.layers = 1;
  b.bias_scaling = BiasScaling::kNone;
  b.grid = *rc::gen::element(a.grid, !a.grid);
  b.outputs = a.outputs;
  if (*rc::gen::arbitrary<bool>()) {
    b = a;
    b.scale = a.scale * *rc::gen::element(1.0, 1.05, 0.9);
    b.attention = *rc::gen::element(Attention::kHardmax, Attention::kSoftmax, Attention::kFinite);
    b.precision_bits = b.attention == Attention::kFinite ? *rc::gen::inRange(1, 5) : 0;
  }
  Pair p{test::MakeRandomModel(a), test::MakeRandomModel(b), 0};
  const JointView v = JointViewOf({&p.f, &p.g});
  std::uint64_t total = 0;
  while (p.brute_length < 60) {
    const std::uint64_t next =
        CountStatistics(v.alphabet, v.period, v.locality, p.brute_length + 1);
    if (total + next > kBudget) break;
    total += next;
    ++p.brute_length;
  }
  return p;
}

// Random statistics of length T in the joint view: every residue's far positions split at
// random (a Dirichlet-like draw from the case's seed), a random suffix.
TypeCounts RandomStatistic(const JointView& v, std::uint64_t T) {
  TypeCounts c;
  c.alphabet = v.alphabet;
  c.period = v.period;
  c.locality = v.locality;
  c.length = T;
  const std::uint64_t m = std::min<std::uint64_t>(T, v.locality + 1);
  for (std::uint64_t t = 0; t < m; ++t)
    c.suffix.push_back(static_cast<Token>(*rc::gen::inRange(0, v.alphabet)));
  c.far.assign(static_cast<std::size_t>(v.alphabet) * v.period, 0);
  const std::uint64_t F = T - m;
  for (int r = 0; r < v.period; ++r) {
    std::uint64_t N = F / v.period + (r >= 1 && static_cast<std::uint64_t>(r) <= F % v.period);
    // A few tokens take almost everything, some keep a handful (rare types), some none.
    for (int s = 0; s + 1 < v.alphabet && N > 0; ++s) {
      const int kind = *rc::gen::inRange(0, 4);
      const std::uint64_t take =
          kind == 0   ? 0
          : kind == 1 ? std::min<std::uint64_t>(N, *rc::gen::inRange(1, 4))
                      : static_cast<std::uint64_t>(static_cast<double>(N) *
                                                   *rc::gen::inRange(0, 1001) / 1000.0);
      c.far[c.TypeIndex(s, r)] = take;
      N -= take;
    }
    c.far[c.TypeIndex(v.alphabet - 1, r)] += N;
  }
  return c;
}

RC_GTEST_PROP(CertifyProperty, TheCertificateHoldsAgainstEnumerationAndLongStatistics, ()) {
  const Pair p = GenPair();
  RC_PRE(p.brute_length >= 2);
  ThresholdOptions all = SearchTo(1e300, p.brute_length);
  all.prune = false;
  const ThresholdResult brute = FindThreshold(p.f, p.g, all);
  double brute_max = 0.0;
  for (double gap : brute.max_gap_per_length) brute_max = std::max(brute_max, gap);
  RC_PRE(std::isfinite(brute_max));
  CertifyOptions o;
  o.epsilon = *rc::gen::element(0.5, 0.9, 1.0, 1.1, 2.0) * brute_max + *rc::gen::element(0.0, 1e-3);
  o.initial_length = *rc::gen::element<std::uint64_t>(8, 30, 100);
  o.max_exact_length = 2000;  // T* or the limit search beyond: kept to a fraction of a second
  o.max_boxes = 5000;
  o.extension_evaluations = 200'000;
  o.exact_evaluations = 1'000'000;
  // One window of an exact run can hold far more evaluations than the budget (checked between
  // windows): a case ran 14 CPU minutes without this. Every assertion below holds for any
  // outcome the budget leaves (a stopped run is "not complete", never a wrong answer).
  o.time_budget = 10.0;
  o.threads = 1;
  const CertifyResult r = Certify(p.f, p.g, o);
  RC_TAG(CertifyVerdictName(r.verdict));
  // Rounding between evaluators: 1e-9 relative to the outputs (the threshold's own verdict slack).
  const auto slack = [](double gap) { return 1e-9 * (1.0 + std::abs(gap)); };
  RC_ASSERT(r.sup_gap_lower <= r.sup_gap_upper + slack(r.sup_gap_upper));
  RC_ASSERT(brute_max <= r.sup_gap_upper + slack(brute_max));
  // Long statistics, evaluated by the library's one-layer evaluator in each model's own view.
  const JointView v = JointViewOf({&p.f, &p.g});
  for (const std::uint64_t T : {std::uint64_t{1000}, std::uint64_t{123457},
                                std::uint64_t{10'000'019}, std::uint64_t{1'000'000'000'000'000}}) {
    for (int trial = 0; trial < 5; ++trial) {
      const TypeCounts c = RandomStatistic(v, T);
      const Vector fx = EvaluateOneLayer(p.f, Coarsen(c, p.f.period, p.f.locality));
      const Vector gx = EvaluateOneLayer(p.g, Coarsen(c, p.g.period, p.g.locality));
      const double gap = (fx - gx).cwiseAbs().maxCoeff();
      if (!std::isfinite(gap)) continue;
      RC_ASSERT(gap <= r.sup_gap_upper +
                           slack(std::max(fx.cwiseAbs().maxCoeff(), gx.cwiseAbs().maxCoeff())));
      RC_ASSERT(r.verdict != CertifyVerdict::kAgrees || gap <= o.epsilon + slack(gap));
    }
  }
  if (r.verdict == CertifyVerdict::kAgrees) {
    RC_ASSERT(r.sup_gap_upper <= o.epsilon + kThresholdGapTolerance);
    ThresholdOptions check = SearchTo(o.epsilon, p.brute_length);
    check.prune = false;
    RC_ASSERT(!FindThreshold(p.f, p.g, check).first_disagreement.has_value());
  }
  if (r.verdict == CertifyVerdict::kDisagrees && !r.first_disagreement) {
    // Beyond the exact search (2000 or its budget): a longer statistic disagrees, and none
    // up to the enumerated length.
    RC_ASSERT(r.first_disagreement_at_most.has_value());
    RC_ASSERT(*r.first_disagreement_at_most > p.brute_length);
    RC_ASSERT(r.witness_gap > o.epsilon);
  } else if (r.verdict == CertifyVerdict::kDisagrees) {
    const std::uint64_t star = *r.first_disagreement;
    RC_ASSERT(r.witness_gap > o.epsilon);
    ThresholdOptions check = SearchTo(o.epsilon, std::min(star, p.brute_length));
    check.prune = false;
    const ThresholdResult full = FindThreshold(p.f, p.g, check);
    if (star <= p.brute_length) {
      RC_ASSERT(full.first_disagreement == r.first_disagreement);
    } else {
      RC_ASSERT(!full.first_disagreement.has_value());
      // The pruned threshold to T*, budgeted like certify's own runs (a near-tight pair can
      // take minutes unbounded, more under the sanitizers): T* itself when it finishes.
      ThresholdOptions exact = SearchTo(o.epsilon, star);
      exact.max_evaluations = o.exact_evaluations;
      exact.time_budget = o.time_budget;
      const ThresholdResult pruned = FindThreshold(p.f, p.g, exact);
      RC_TAG(pruned.complete || pruned.first_disagreement ? "T* rechecked" : "recheck budget");
      if (pruned.complete || pruned.first_disagreement)
        RC_ASSERT(pruned.first_disagreement == r.first_disagreement);
    }
  }
  if (r.verdict == CertifyVerdict::kUndecided) {
    RC_ASSERT(r.sup_gap_lower <= o.epsilon + slack(o.epsilon));
    RC_ASSERT(r.sup_gap_upper > o.epsilon);
  }
}

}  // namespace
}  // namespace ltsim
