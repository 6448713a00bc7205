// The two-layer path search (docs/theory.md §11.5) against a brute force over every string of
// length ≤ 14 … 20, and on the k-gram pair whose known 225-token string separates it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"
#include "threshold/path_bound.h"
#include "threshold/path_dag.h"

namespace ltsim {
namespace {

const std::string kSource = LTSIM_SOURCE_DIR;

// Per length T ≤ N, the largest gap over every string and the largest output size among the
// strings within 10⁻⁶ of it. Each string's second layer is computed directly from the y¹ table
// (PathOutputs: every key, every head, no bound); a depth-first walk shares the prefixes' nodes.
struct BruteForce {
  std::vector<double> max, size;
};

BruteForce EveryString(const Transformer& f, const Transformer& g, std::uint64_t N) {
  threshold::PathDag dag(JointViewOf({&f, &g}));
  dag.Extend(N);
  threshold::PathPair pair(f, g, dag);
  pair.Extend();
  const int S = dag.view().alphabet;
  BruteForce out{std::vector<double>(N, -1.0), std::vector<double>(N, 0.0)};
  std::vector<std::uint64_t> nodes;
  std::vector<std::uint32_t> local;
  std::vector<int> next;
  Vector a, b;
  // Depth-first: local[j − 1] is the node of layer j, next[j − 1] its next token to try.
  for (int s0 = 0; s0 < S; ++s0) {
    local.assign(1, static_cast<std::uint32_t>(s0));
    nodes.assign(1, dag.layer(1).offset + local[0]);
    next.assign(1, 0);
    while (!local.empty()) {
      const std::uint64_t T = local.size();
      if (next.back() == 0) {
        threshold::PathOutputs(pair, nodes, a, b);
        const double gap = threshold::PathGap(a, b);
        if (gap > out.max[T - 1]) out.max[T - 1] = gap;
        if (std::isfinite(gap))
          out.size[T - 1] =
              std::max({out.size[T - 1], a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
      }
      if (T == N || next.back() >= S) {
        local.pop_back();
        nodes.pop_back();
        next.pop_back();
        continue;
      }
      const int s = next.back()++;
      local.push_back(dag.Successor(T, local.back(), s));
      nodes.push_back(dag.layer(T + 1).offset + local.back());
      next.push_back(0);
    }
  }
  return out;
}

// The first length whose largest gap exceeds ε by the verdict rule, 0 if none.
std::uint64_t FirstAbove(const BruteForce& truth, double eps) {
  for (std::size_t k = 0; k < truth.max.size(); ++k)
    if (truth.max[k] > eps + kThresholdGapTolerance * std::max(1.0, truth.size[k])) return k + 1;
  return 0;
}

// ε between the largest gaps of the lengths (never within 10⁻⁶ of one, so rounding decides
// nothing): the path search's T* must be brute force's for each.
void ExpectSameAsBruteForce(const Transformer& f, const Transformer& g, std::uint64_t N) {
  const BruteForce truth = EveryString(f, g, N);
  std::vector<double> levels = truth.max;
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  std::vector<double> epsilons;
  for (std::size_t k = 0; k + 1 < levels.size(); ++k)
    if (levels[k + 1] - levels[k] > 2e-6 * (1 + levels[k + 1]))
      epsilons.push_back(0.5 * (levels[k] + levels[k + 1]));
  epsilons.push_back(levels.back() * 1.01 + 1e-3);
  // The three largest levels (the longest first disagreements) and the top.
  if (epsilons.size() > 4) epsilons.erase(epsilons.begin(), epsilons.end() - 4);
  ASSERT_FALSE(epsilons.empty());
  for (const double eps : epsilons) {
    ThresholdOptions o;
    o.epsilon = eps;
    o.max_length = N;
    o.threads = 1;
    const ThresholdResult r = FindThreshold(f, g, o);
    const std::uint64_t want = FirstAbove(truth, eps);
    SCOPED_TRACE("eps = " + std::to_string(eps));
    EXPECT_EQ(r.method, ThresholdMethod::kPaths);
    EXPECT_TRUE(r.exhaustive);
    EXPECT_EQ(r.first_disagreement.value_or(0), want);
    EXPECT_EQ(r.checked_up_to, want ? want : N);
    if (want) {
      EXPECT_EQ(FromRuns(r.witness).size(), want);
      EXPECT_NEAR(r.gap, truth.max[want - 1], 1e-9 * (1 + truth.max[want - 1]));
      EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
    }
  }
}

Transformer Model(test::ModelShape shape) { return test::MakeRandomModel(shape); }

// The k-gram model of the corpus, and a copy whose second-layer qk[2][0] is `value`.
Transformer KGram(double value = 8.0) {
  Transformer m = ReadModel(kSource + "/corpus/models/kgram_S2_k1.json");
  m.layers[1].heads[0].qk(2, 0) = value;
  return m;
}

TEST(PathSearchBruteForce, KGramPairUpTo20) { ExpectSameAsBruteForce(KGram(), KGram(7.0), 20); }

TEST(PathSearchBruteForce, HardmaxSecondLayerWithMlpUpTo14) {
  test::ModelShape s;
  s.alphabet = 2;
  s.width = 4;
  s.period = 2;
  s.locality = 1;
  s.attention = Attention::kSoftmax;
  s.bias_scaling = BiasScaling::kLog;
  s.layers = 2;
  s.attention2 = Attention::kHardmax;
  s.heads2 = 2;
  s.mlp2 = true;
  s.seed = 11;
  const Transformer f = Model(s);
  Transformer g = f;
  g.layers[1].heads[0].qk *= 1.3;
  ExpectSameAsBruteForce(f, g, 14);
}

TEST(PathSearchBruteForce, FiniteAgainstSoftmaxSecondLayerUpTo18) {
  test::ModelShape s;
  s.alphabet = 2;
  s.width = 3;
  s.locality = 1;
  s.attention = Attention::kFinite;
  s.precision_bits = 4;
  s.layers = 2;
  s.attention2 = Attention::kFinite;
  s.precision_bits2 = 3;
  s.bias_scaling2 = BiasScaling::kLog;
  s.seed = 5;
  const Transformer f = Model(s);
  s.attention2 = Attention::kSoftmax;
  const Transformer g = Model(s);
  ExpectSameAsBruteForce(f, g, 18);
}

// The path search's partial answers: a stop flag ends it with what it certified, its bracket
// is exact where it enumerated or maximised, and a first length other than 1 is refused.
TEST(PathSearch, StopFlagBracketsAndMinLength) {
  const Transformer f = KGram(), g = KGram(7.0);
  ThresholdOptions o;
  o.epsilon = 0.05;
  o.max_length = 80;
  o.threads = 1;
  const ThresholdResult whole = FindThreshold(f, g, o);
  ASSERT_EQ(whole.method, ThresholdMethod::kPaths);
  ASSERT_TRUE(whole.first_disagreement.has_value());
  ASSERT_EQ(whole.gap_upper_per_length.size(), whole.max_gap_per_length.size());
  for (std::uint64_t t = 1; t <= whole.paths.enumerated_up_to; ++t)
    EXPECT_EQ(whole.gap_upper_per_length[t - 1], whole.max_gap_per_length[t - 1]) << t;
  const std::uint64_t t_star = *whole.first_disagreement;
  // At T* the bracket is the maximised gap over paths; the witness's gap is recomputed by the
  // streaming evaluator, which may differ in the last bits (path_threshold.cpp allows 1e-9).
  EXPECT_EQ(whole.gap_upper_per_length[t_star - 1], whole.max_gap_per_length[t_star - 1]);
  EXPECT_NEAR(whole.gap_upper_per_length[t_star - 1], whole.gap, 1e-9 * (1.0 + whole.gap));
  std::atomic<bool> stop{true};
  o.stop = &stop;
  const ThresholdResult stopped = FindThreshold(f, g, o);
  EXPECT_FALSE(stopped.complete);
  EXPECT_EQ(stopped.stopped, ThresholdStop::kSignal);
  EXPECT_EQ(stopped.checked_up_to, 0u);
  EXPECT_FALSE(stopped.first_disagreement.has_value());
  o.stop = nullptr;
  o.min_length = 2;
  EXPECT_THROW(FindThreshold(f, g, o), OptionError);
}

// The pair of docs/theory.md §11.5: the known string 0 0 1^222 0 separates it by 0.0501 at
// ε = 0.05, so T* ≤ 225. The search's T* is its witness's length, the witness's gap exceeds ε by
// the streaming evaluator and in 50 digits, every string below T* is covered (exhaustive), and
// the result is the same on 1 and 2 threads.
TEST(PathSearch, KGramPairDisagreesNoLaterThanTheKnownString) {
  const Transformer f = KGram(), g = KGram(7.0);
  std::vector<Token> known{0, 0};
  known.insert(known.end(), 222, 1);
  known.push_back(0);
  const auto source = MakeTokenSource(known, "known");
  EXPECT_GT((Evaluate(f, *source) - Evaluate(g, *source)).cwiseAbs().maxCoeff(), 0.05);
  ThresholdOptions o;
  o.epsilon = 0.05;
  o.max_length = 225;
  o.threads = 1;
  const ThresholdResult r = FindThreshold(f, g, o);
  EXPECT_EQ(r.method, ThresholdMethod::kPaths);
  ASSERT_TRUE(r.first_disagreement.has_value());
  const std::uint64_t t_star = *r.first_disagreement;
  EXPECT_LE(t_star, 225u);
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.exhaustive_up_to, t_star);
  const std::vector<Token> w = FromRuns(r.witness);
  ASSERT_EQ(w.size(), t_star);
  const auto witness = MakeTokenSource(w, "witness");
  const double gap = (Evaluate(f, *witness) - Evaluate(g, *witness)).cwiseAbs().maxCoeff();
  EXPECT_GT(gap, 0.05);
  EXPECT_NEAR(gap, r.gap, 1e-12);
  EXPECT_EQ(r.recheck.status, RecheckStatus::kAgrees);
  for (std::uint64_t T = 1; T < t_star; ++T) {
    const double m = r.max_gap_per_length[T - 1];
    if (!std::isnan(m)) {
      EXPECT_LE(m, 0.05 + 1e-9) << "T = " << T;
    }
  }
  o.threads = 2;
  const ThresholdResult two = FindThreshold(f, g, o);
  EXPECT_EQ(two.first_disagreement, r.first_disagreement);
  EXPECT_EQ(two.witness, r.witness);
  EXPECT_EQ(two.gap, r.gap);
  EXPECT_EQ(two.paths.sets, r.paths.sets);
}

// One BoundScratch shared by a sequence of sets of different sizes (roots of several lengths
// and windows, large then small then large, and their children) gives bit for bit what fresh
// arrays (scratch = nullptr) give: every field of SetBound, the children's boxes included.
TEST(PathBound, SharedScratchMatchesFreshArrays) {
  const Transformer f = KGram(), g = KGram(7.0);
  threshold::PathDag dag(JointViewOf({&f, &g}));
  dag.Extend(24);
  threshold::PathPair pair(f, g, dag);
  pair.Extend();
  std::vector<threshold::PathSet> sets;
  for (const auto& [lo, hi, w] :
       {std::tuple{20, 24, 0u}, std::tuple{3, 3, 1u}, std::tuple{12, 16, 1u}, std::tuple{5, 6, 0u},
        std::tuple{22, 22, 1u}})
    sets.push_back(threshold::RootPathSet(pair, lo, hi, w));
  threshold::BoundOptions bo;
  bo.leaf_paths = 1;
  threshold::BoundScratch scratch;
  int compared = 0, bounded = 0;
  for (std::size_t i = 0; i < sets.size() && compared < 40; ++i, ++compared) {
    for (const double limit : {0.0, 0.05}) {
      const threshold::SetBound a = threshold::BoundPathSet(pair, sets[i], limit, bo, &scratch);
      const threshold::SetBound b = threshold::BoundPathSet(pair, sets[i], limit, bo, nullptr);
      EXPECT_EQ(a.empty, b.empty) << i;
      EXPECT_EQ(a.leaf, b.leaf) << i;
      EXPECT_EQ(a.holds, b.holds) << i;
      EXPECT_EQ(a.paths, b.paths) << i;
      EXPECT_EQ(a.nodes, b.nodes) << i;
      EXPECT_EQ(a.programs, b.programs) << i;
      EXPECT_EQ(a.candidates, b.candidates) << i;
      ASSERT_EQ(a.children.size(), b.children.size()) << i;
      for (std::size_t k = 0; k < a.children.size(); ++k) {
        const threshold::PathSet &x = a.children[k], &y = b.children[k];
        EXPECT_EQ(x.length, y.length);
        EXPECT_EQ(x.length_hi, y.length_hi);
        EXPECT_EQ(x.final_window, y.final_window);
        EXPECT_EQ(x.final_lo, y.final_lo);
        EXPECT_EQ(x.final_hi, y.final_hi);
        EXPECT_EQ(x.astar, y.astar);
        ASSERT_EQ(x.waypoints.size(), y.waypoints.size());
        for (std::size_t j = 0; j < x.waypoints.size(); ++j) {
          EXPECT_EQ(x.waypoints[j].layer, y.waypoints[j].layer);
          EXPECT_EQ(x.waypoints[j].lo, y.waypoints[j].lo);
          EXPECT_EQ(x.waypoints[j].hi, y.waypoints[j].hi);
        }
      }
      if (!a.empty && !a.leaf) ++bounded;
      if (limit == 0.0)
        for (const threshold::PathSet& c : a.children) sets.push_back(c);
    }
  }
  EXPECT_GE(bounded, 5);  // the sequence really runs the programmes on several sets
}

// Materialise takes one Successor a node: the successor by token s is the one by token 0 plus s
// (the same count vector, the window's last digit s). Every node of small random DAGs.
TEST(PathDag, SuccessorByTokenSIsTheOneByTokenZeroPlusS) {
  for (const int alphabet : {2, 3})
    for (const int period : {1, 2})
      for (const int locality : {0, 1, 2}) {
        test::ModelShape shape;
        shape.alphabet = alphabet;
        shape.period = period;
        shape.locality = locality;
        shape.layers = 2;
        shape.seed = static_cast<std::uint64_t>(alphabet * 100 + period * 10 + locality);
        const Transformer f = Model(shape);
        shape.seed += 1000;
        shape.locality = 2 - locality;
        const Transformer g = Model(shape);
        threshold::PathDag dag(JointViewOf({&f, &g}));
        dag.Extend(9);
        std::uint64_t checked = 0;
        for (std::uint64_t j = 1; j < dag.length(); ++j) {
          const threshold::PathDag::Layer& L = dag.layer(j);
          for (std::uint32_t n = 0; n < L.vectors * L.windows; ++n) {
            const std::uint32_t zero = dag.Successor(j, n, 0);
            for (int s = 1; s < alphabet; ++s, ++checked)
              ASSERT_EQ(dag.Successor(j, n, s), zero + static_cast<std::uint32_t>(s))
                  << "S=" << alphabet << " period " << period << " layer " << j << " node " << n;
          }
        }
        EXPECT_GT(checked, 0u);
      }
}

}  // namespace
}  // namespace ltsim
