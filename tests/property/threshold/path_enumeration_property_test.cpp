// The two-layer path search (docs/theory.md §11.5) against full enumeration: every string of
// every length up to N = 6 … 12 (S = 2; N ≤ 9 for S = 3; up to 15 with LTSIM_PATHS_LONGEST=1)
// evaluated by the streaming evaluator, on random two-layer pairs of every attention mode, with and
// without MLPs and log scaling.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "ltsim/eval/evaluate.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"
#include "threshold/path_bound.h"
#include "threshold/path_dag.h"

namespace ltsim {
namespace {

struct Pair {
  Transformer f, g;
  std::uint64_t max_length = 0;
};

// Shapes small enough for Σ_{T ≤ 15} 2^T strings a case: width ≤ 4, S ≤ 3, Δ ≤ 2, τ ≤ 2.
test::ModelShape Small(test::ModelShape s) {
  s.width = std::min(s.width, 4);
  s.alphabet = std::min(s.alphabet, 3);
  s.period = std::min(s.period, 2);
  s.locality = std::min(s.locality, 2);
  return s;
}

// f two-layer; g another random model (one or two layers), f with a second-layer M scaled, f at
// a nearby weight scale, or f with another second-layer mode. N: the largest with
// Σ_{T ≤ N} S^T ≤ 2^16 (15 for S = 2, 9 for S = 3), or a random smaller one.
Pair GenPair() {
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
    p.g.layers[1].heads[0].qk *= *rc::gen::element(1.02, 0.9, 1.3);
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
  std::uint64_t total = 0, power = 1, longest = 0;
  while (true) {
    power *= static_cast<std::uint64_t>(a.alphabet);
    if (total + power > (std::uint64_t{1} << 16)) break;
    total += power;
    ++longest;
  }
  // N ≤ 12 under CTest (a case then costs ≤ 2^13 strings); LTSIM_PATHS_LONGEST=1 takes the
  // longest, 15 for S = 2 (2^16 strings a case).
  const char* longest_env = std::getenv("LTSIM_PATHS_LONGEST");
  const std::uint64_t top = longest_env && std::string(longest_env) == "1"
                                ? longest
                                : std::min<std::uint64_t>(12, longest);
  p.max_length = *rc::gen::inRange<std::uint64_t>(std::min<std::uint64_t>(6, top), top + 1);
  return p;
}

// Every string's gap and output size by the streaming evaluator (eval/evaluate.h), length by
// length. A string on which the evaluator and the path search's tables differ by more than
// rounding discards the case: a second-layer weight at its hardmax or finite threshold within
// rounding is decided by each computation's own rounding (docs/theory.md §11.5, "Ties").
struct Truth {
  std::vector<std::vector<double>> gap, size;  // [T − 1][string]
  std::vector<double> max;                     // [T − 1]
};

Truth EveryString(const Pair& p) {
  Truth t;
  threshold::PathDag dag(JointViewOf({&p.f, &p.g}));
  dag.Extend(p.max_length);
  threshold::PathPair pair(p.f, p.g, dag);
  pair.Extend();
  for (std::uint64_t T = 1; T <= p.max_length; ++T) {
    std::vector<Token> x(T, 0);
    t.gap.emplace_back();
    t.size.emplace_back();
    double best = -1.0;
    while (true) {
      const auto source = MakeTokenSource(x, "x");
      const Vector a = Evaluate(p.f, *source), b = Evaluate(p.g, *source);
      Vector ta, tb;
      threshold::PathOutputs(pair, threshold::PathNodes(dag, x), ta, tb);
      const bool finite = a.allFinite() && b.allFinite();
      const double scale =
          finite ? 1e-9 * (1.0 + a.cwiseAbs().maxCoeff() + b.cwiseAbs().maxCoeff()) : 0.0;
      RC_PRE(!finite ||
             ((a - ta).cwiseAbs().maxCoeff() <= scale && (b - tb).cwiseAbs().maxCoeff() <= scale));
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

// The first length with a disagreeing string by the verdict rule (ThresholdDisagrees), 0 if
// none; a case where some string's gap lies within twice the tolerance of the threshold is
// discarded (its verdict is rounding).
std::uint64_t FirstDisagreement(const Truth& t, double eps) {
  std::uint64_t first = 0;
  for (std::size_t k = 0; k < t.gap.size(); ++k)
    for (std::size_t i = 0; i < t.gap[k].size(); ++i) {
      const double tolerance = kThresholdGapTolerance * std::max(1.0, t.size[k][i]);
      RC_PRE(!(std::abs(t.gap[k][i] - (eps + tolerance)) <= 2 * tolerance));
      if (t.gap[k][i] > eps + tolerance && first == 0) first = k + 1;
    }
  return first;
}

// ε from the true maxima, biased towards long first disagreements: half, just below, at or just
// above the maximum of a length in the upper half of 1 … N, or above every gap.
double GenEpsilon(const std::vector<double>& gaps) {
  const std::size_t at = *rc::gen::inRange<std::size_t>(gaps.size() / 2, gaps.size());
  const double gap = gaps[at];
  const double top = *std::max_element(gaps.begin(), gaps.end());
  RC_PRE(std::isfinite(gap) && std::isfinite(top));
  return *rc::gen::element(gap * 0.5, gap * 0.999, gap, gap * 1.001, top * 1.5 + 1e-3);
}

RC_GTEST_PROP(PathEnumerationProperty, FirstDisagreementEqualsFullEnumeration, ()) {
  const Pair p = GenPair();
  const Truth every = EveryString(p);
  const double eps = GenEpsilon(every.max);
  const std::uint64_t want = FirstDisagreement(every, eps);
  ThresholdOptions o;
  o.epsilon = eps;
  o.max_length = p.max_length;
  o.threads = 1;
  o.full_strings = *rc::gen::element<std::uint64_t>(0, 64, 4096);
  const ThresholdResult got = FindThreshold(p.f, p.g, o);
  RC_LOG() << "f: " << ModelToJson(p.f) << "\ng: " << ModelToJson(p.g) << "\neps "
           << fmt::format("{:.17g}", eps) << " N " << p.max_length << "\n";
  RC_TAG(want ? (want > 10 ? "T* > 10" : "T* <= 10") : "agree",
         got.paths.sets_pruned > 0 ? "pruned some" : "pruned none");
  RC_ASSERT(got.method == ThresholdMethod::kPaths);
  RC_ASSERT(got.exhaustive);
  RC_ASSERT(got.first_disagreement.value_or(0) == want);
  RC_ASSERT(got.checked_up_to == (want ? want : p.max_length));
  RC_ASSERT(got.exhaustive_up_to == got.checked_up_to);
  if (want) {
    RC_ASSERT(FromRuns(got.witness).size() == want);
    // The witness realises the largest gap at T*, and its 50-digit recheck confirms it.
    RC_ASSERT(std::abs(got.gap - every.max[want - 1]) <= 1e-9 * (1.0 + every.max[want - 1]));
    RC_ASSERT(got.recheck.status == RecheckStatus::kAgrees);
  }
  for (std::size_t k = 0; k < got.max_gap_per_length.size(); ++k)
    if (!std::isnan(got.max_gap_per_length[k]))
      RC_ASSERT(got.max_gap_per_length[k] <= every.max[k] + 1e-9 * (1.0 + every.max[k]));
}

}  // namespace
}  // namespace ltsim
