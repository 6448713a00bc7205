// The pruned threshold search against full enumeration (every statistic evaluated) on random
// one-layer pairs of every attention mode, with MLPs, periods, localities and bias scalings.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/threshold/threshold.h"
#include "ltsim_test/random_models.h"
#include "threshold/cells.h"
#include "threshold/relaxation.h"

namespace ltsim {
namespace {

// The threshold search to length N at ε, every other option at its default.
ThresholdOptions SearchTo(double epsilon, std::uint64_t max_length) {
  ThresholdOptions o;
  o.epsilon = epsilon;
  o.max_length = max_length;
  return o;
}

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
  ThresholdOptions all = SearchTo(1e300, p.max_length);
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
  ThresholdOptions full = SearchTo(eps, p.max_length);
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

// The per-length bracket of the pruned search against every length's true largest gap (full
// enumeration, every statistic evaluated): lower ≤ true ≤ upper at every length searched,
// from a random first length n, up to the evaluators' agreement 2e-9·(1 + M + gap) with M the
// outputs' size measured on 8 random strings of the length, as above.
RC_GTEST_PROP(ThresholdProperty, BracketHoldsEveryLengthsLargestGap, ()) {
  const Pair p = GenPair();
  RC_PRE(p.max_length >= 1);
  const double eps = GenEpsilon(p);
  ThresholdOptions every = SearchTo(1e300, p.max_length);
  every.prune = false;
  const ThresholdResult truth = FindThreshold(p.f, p.g, every);
  ThresholdOptions pruned = SearchTo(eps, p.max_length);
  pruned.min_length = *rc::gen::inRange<std::uint64_t>(1, p.max_length + 1);
  pruned.full_statistics = 0;
  pruned.leaf_statistics = *rc::gen::element(1.0, 2.0, 8.0);
  const ThresholdResult got = FindThreshold(p.f, p.g, pruned);
  RC_ASSERT(got.min_length == pruned.min_length);
  RC_ASSERT(got.gap_upper_per_length.size() == got.checked_up_to);
  RC_ASSERT(got.max_gap_per_length.size() == got.checked_up_to);
  // The first disagreement from n on: the first T ≥ n whose largest gap exceeds ε (up to the
  // verdict's rounding, so only where the margin is clear).
  bool tight = false;
  std::uint64_t want = 0;
  for (std::uint64_t t = pruned.min_length; t <= p.max_length && want == 0; ++t) {
    const double top = truth.max_gap_per_length[t - 1];
    if (std::abs(top - eps) <= 1e-8 * (1.0 + std::abs(eps))) tight = true;
    if (top > eps) want = t;
  }
  if (!tight) RC_ASSERT(got.first_disagreement.value_or(0) == want);
  bool loose = false;
  for (std::uint64_t t = 1; t <= got.checked_up_to; ++t) {
    const double lower = got.max_gap_per_length[t - 1], upper = got.gap_upper_per_length[t - 1];
    if (t < pruned.min_length) {
      RC_ASSERT(std::isnan(lower) && std::isnan(upper));
      continue;
    }
    const double top = truth.max_gap_per_length[t - 1];
    RC_ASSERT(!std::isnan(upper));
    const JointView v = JointViewOf({&p.f, &p.g});
    double outputs = 0.0;
    for (int trial = 0; trial < 8; ++trial) {
      const std::vector<Token> x =
          *test::GenString(v.alphabet, static_cast<int>(t), static_cast<int>(t));
      const TypeCounts joint = CountTypes(x, v.alphabet, v.period, v.locality);
      for (const Transformer* m : {&p.f, &p.g})
        outputs = std::max(
            outputs,
            EvaluateOneLayer(*m, Coarsen(joint, m->period, m->locality)).cwiseAbs().maxCoeff());
    }
    const double slack = 2e-9 * (1.0 + outputs + std::abs(top));
    if (!std::isnan(lower)) RC_ASSERT(lower <= top + slack);
    RC_ASSERT(top <= upper + slack);
    loose = loose || upper > top + 1e-6;
  }
  RC_TAG(loose ? "upper above the maximum somewhere" : "brackets tight");
}

RC_GTEST_PROP(ThresholdProperty, ResultsAreTheSameForAnyThreadCount, ()) {
  const Pair p = GenPair();
  RC_PRE(p.max_length >= 1);
  const double eps = GenEpsilon(p);
  ThresholdOptions o = SearchTo(eps, p.max_length);
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
    const double u = one.gap_upper_per_length[k], v = many.gap_upper_per_length[k];
    RC_ASSERT((std::isnan(u) && std::isnan(v)) || u == v);
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

// Every certified bound of a cell (the first of docs/theory.md §11.3 and the two relaxed ones of
// §11.6) is at least the largest gap over the cell's statistics, all of them evaluated: random
// pairs (near copies half the time, so that the bounds have to cancel), random contexts,
// lengths up to ~500 and random boxes of counts and lengths. The tolerance is the evaluators'
// stated agreement, 1e-9·(1 + the outputs' size) (the bounds are of the exact function).
RC_GTEST_PROP(ThresholdProperty, EveryCellBoundHoldsOnEveryStatisticOfItsCell, ()) {
  const Pair p = GenPair();
  const JointView v = JointViewOf({&p.f, &p.g});
  const bool log_scaled = p.f.layers.front().bias_scaling == BiasScaling::kLog ||
                          p.g.layers.front().bias_scaling == BiasScaling::kLog;
  const int m = v.locality + 1, S = v.alphabet, R = v.period, D = S * R;
  threshold::TaskSpec spec;
  spec.key.residue = *rc::gen::inRange(0, R);
  spec.key.suffix = *rc::gen::container<std::vector<int>>(m, rc::gen::inRange(0, S));
  spec.T_base = static_cast<std::uint64_t>(m) + 1;
  while (spec.T_base % R != static_cast<std::uint64_t>(spec.key.residue)) ++spec.T_base;
  threshold::Cell cell;
  cell.k_lo = *rc::gen::inRange<std::int64_t>(0, 500 / R);
  cell.k_hi = cell.k_lo + (log_scaled ? 0 : *rc::gen::inRange<std::int64_t>(0, 4));
  spec.k_lo = cell.k_lo;
  spec.k_hi = cell.k_hi;
  spec.key.length = spec.T_base + static_cast<std::uint64_t>(spec.k_lo) * R;
  // Boxes around one statistic of the cell's first length (a random split of each residue's
  // positions), each count widened by up to 6 either way: tens to thousands of statistics.
  const std::int64_t far =
      static_cast<std::int64_t>(spec.T_base) - m + static_cast<std::int64_t>(cell.k_lo) * R;
  for (int r = 0; r < R; ++r) {
    std::int64_t left = far / R + (r >= 1 && r <= far % R ? 1 : 0);
    for (int s = 0; s < S; ++s) {
      const std::int64_t n = s == S - 1 ? left : *rc::gen::inRange<std::int64_t>(0, left + 1);
      left -= n;
      cell.lo.push_back(std::max<std::int64_t>(0, n - *rc::gen::inRange<std::int64_t>(0, 7)));
      cell.hi.push_back(n + *rc::gen::inRange<std::int64_t>(0, 7));
    }
  }
  // At most ~4000 boxes of counts (the enumeration's cost): the widest ranges are narrowed.
  const auto volume = [&] {
    double v = static_cast<double>(cell.k_hi - cell.k_lo + 1);
    for (int kappa = 0; kappa < D; ++kappa)
      v *= static_cast<double>(cell.hi[kappa] - cell.lo[kappa] + 1);
    return v;
  };
  while (volume() > 4000) {
    int widest = 0;
    for (int kappa = 1; kappa < D; ++kappa)
      if (cell.hi[kappa] - cell.lo[kappa] > cell.hi[widest] - cell.lo[widest]) widest = kappa;
    cell.hi[widest] = cell.lo[widest] + (cell.hi[widest] - cell.lo[widest]) / 2;
  }
  const threshold::CellCheck c = threshold::CheckCell(p.f, p.g, v, spec, cell);
  RC_PRE(c.statistics > 0);
  RC_TAG(c.bounded ? "bounded" : "not boundable as is",
         std::isfinite(c.bounds[1]) ? "counts bound" : "no counts bound");
  const double tolerance = 1e-9 * (1.0 + c.output_scale);
  for (double bound : c.bounds) RC_ASSERT(c.max_gap <= bound + tolerance);
}

// A point of {Σ α = 1, lo ≤ α ≤ hi}: every slot at lo, the rest of the mass to the slots in a
// random order (a vertex of the polytope).
std::vector<double> RandomVertex(const threshold::AttentionClass& cls) {
  std::vector<double> alpha = cls.lo;
  double room = 1.0;
  for (int j : cls.support) room -= cls.lo[j];
  std::vector<int> order = cls.support;
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[*rc::gen::inRange<std::size_t>(0, i)]);
  for (int j : order) {
    const double t = std::max(0.0, std::min(cls.hi[j] - cls.lo[j], room));
    alpha[j] += t;
    room -= t;
  }
  return alpha;
}

// ‖f − g‖_∞ as a function of the classes' α (the tables' affine forms through the MLPs).
double GapAt(const threshold::PairTable& t, const std::vector<threshold::AttentionClass>& classes,
             const std::vector<std::vector<double>>& alpha, double& scale) {
  double worst = 0.0;
  std::vector<double> out[2];
  for (int s = 0; s < 2; ++s) {
    const threshold::ModelTable& mt = t.side[s];
    const int H = static_cast<int>(mt.heads.size()), M = mt.neurons;
    std::vector<double> z = mt.pre_base;
    out[s] = mt.out_base;
    for (std::size_t c = 0; c < classes.size(); ++c)
      for (const auto& [side, h] : classes[c].heads) {
        if (side != s) continue;
        for (int j : classes[c].support) {
          for (int i = 0; i < M; ++i) z[i] += alpha[c][j] * mt.Q[(i * H + h) * t.slots + j];
          for (int k = 0; k < mt.outputs; ++k)
            out[s][k] += alpha[c][j] * mt.P[(k * H + h) * t.slots + j];
        }
      }
    for (int k = 0; k < mt.outputs; ++k)
      for (int i = 0; i < M; ++i) out[s][k] += mt.WB[k * M + i] * std::max(0.0, z[i]);
  }
  for (std::size_t k = 0; k < out[0].size(); ++k) {
    worst = std::max(worst, std::abs(out[0][k] - out[1][k]));
    scale = std::max({scale, std::abs(out[0][k]), std::abs(out[1][k])});
  }
  return worst;
}

// The relaxed bound over α boxes (docs/theory.md §11.6) is at least ‖f − g‖_∞ at every point of
// its domain, not only at the α of statistics: random pairs and contexts, every head its own
// class or f's and g's head h one class (shared α), random boxes around a random α, the gap at
// 40 vertices and points between them and the box's centre. Tolerance 1e-9·(1 + outputs).
RC_GTEST_PROP(ThresholdProperty, TheRelaxedBoundHoldsOnItsWholeDomain, ()) {
  const Pair p = GenPair();
  const JointView v = JointViewOf({&p.f, &p.g});
  threshold::ContextKey key;
  key.residue = *rc::gen::inRange(0, v.period);
  key.suffix =
      *rc::gen::container<std::vector<int>>(v.locality + 1, rc::gen::inRange(0, v.alphabet));
  key.length = *rc::gen::inRange<std::uint64_t>(v.locality + 2, 1000);
  const threshold::PairTable table = threshold::BuildPairTable(p.f, p.g, v, key);
  const int H0 = static_cast<int>(table.side[0].heads.size());
  const int H1 = static_cast<int>(table.side[1].heads.size());
  const bool shared = H0 == H1 && *rc::gen::arbitrary<bool>();
  std::vector<threshold::AttentionClass> classes;
  for (int s = 0; s < 2; ++s)
    for (int h = 0; h < (s == 0 ? H0 : H1); ++h) {
      if (shared && s == 1) {
        classes[h].heads.emplace_back(1, h);
        continue;
      }
      threshold::AttentionClass cls;
      cls.heads.emplace_back(s, h);
      const std::vector<double> w = *rc::gen::container<std::vector<double>>(
          table.slots, rc::gen::element(0.0, 0.5, 1.0, 3.0));
      double total = 0.0;
      for (double x : w) total += x;
      RC_PRE(total > 0.0);
      cls.lo.assign(table.slots, 0.0);
      cls.hi.assign(table.slots, 0.0);
      const double radius = *rc::gen::element(0.01, 0.1, 0.3, 1.0);
      for (int j = 0; j < table.slots; ++j) {
        if (w[j] == 0.0) continue;
        cls.support.push_back(j);
        cls.lo[j] = std::max(0.0, w[j] / total - radius * *rc::gen::element(0.0, 0.5, 1.0));
        cls.hi[j] = std::min(1.0, w[j] / total + radius * *rc::gen::element(0.0, 0.5, 1.0));
      }
      classes.push_back(std::move(cls));
    }
  const double bound =
      threshold::RelaxedCellBound(table, classes, threshold::BoxDomain(classes, table.slots));
  RC_PRE(std::isfinite(bound));
  double scale = 0.0, seen = 0.0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<std::vector<double>> a, b;
    for (const threshold::AttentionClass& cls : classes) {
      a.push_back(RandomVertex(cls));
      b.push_back(RandomVertex(cls));
    }
    const double t = *rc::gen::element(0.0, 0.25, 0.5, 1.0);
    std::vector<std::vector<double>> mid = a;
    for (std::size_t c = 0; c < a.size(); ++c)
      for (std::size_t j = 0; j < a[c].size(); ++j) mid[c][j] = (1 - t) * a[c][j] + t * b[c][j];
    seen = std::max({seen, GapAt(table, classes, a, scale), GapAt(table, classes, mid, scale)});
  }
  RC_TAG(seen > 0.5 * bound ? "within 2x" : "looser");
  RC_ASSERT(seen <= bound + 1e-9 * (1.0 + scale));
}

// The count domain's maximum (docs/theory.md §11.6 (b)) is at least the largest value of
// Σ_c Σ_j α_cj·C_cj over every integer statistic of a cell spanning up to 40 lengths with full
// count ranges (so the bisection over k and the linearisation's error term both matter):
// random constant weights per class, random coefficients, S = 2 (Δ = 1, 2) or S = 3 (Δ = 1),
// 0–2 suffix keys, every statistic enumerated. Tolerance 1e-9·(1 + Σ|C|).
RC_GTEST_PROP(ThresholdProperty, TheCountBoundHoldsOverWideRangesOfLengths, ()) {
  const int S = *rc::gen::inRange(2, 4);
  const int R = S == 3 ? 1 : *rc::gen::inRange(1, 3);
  const int D = S * R, m = *rc::gen::inRange(0, 3), slots = D + m;
  std::vector<std::int64_t> base(R);
  for (std::int64_t& b : base) b = *rc::gen::inRange<std::int64_t>(0, 20);
  threshold::Cell cell;
  cell.k_lo = *rc::gen::inRange<std::int64_t>(0, 10);
  cell.k_hi = cell.k_lo + *rc::gen::inRange<std::int64_t>(0, 40);
  for (int kappa = 0; kappa < D; ++kappa) {
    cell.lo.push_back(0);
    cell.hi.push_back(base[kappa / S] + cell.k_hi);
  }
  const int C = *rc::gen::inRange(1, 4);
  std::vector<threshold::AttentionClass> classes(C);
  for (threshold::AttentionClass& cls : classes) {
    cls.constant_weights = true;
    cls.weight =
        *rc::gen::container<std::vector<double>>(slots, rc::gen::element(0.0, 0.5, 1.0, 2.0, 7.0));
    // Z > 0 on every statistic: a suffix key with weight, or every far type weighted at lengths
    // whose residues are never empty.
    bool suffix = false;
    for (int j = D; j < slots; ++j) suffix = suffix || cls.weight[j] > 0.0;
    if (!suffix)
      for (int j = 0; j < D; ++j) cls.weight[j] = std::max(cls.weight[j], 0.5);
    RC_PRE(suffix || *std::min_element(base.begin(), base.end()) + cell.k_lo >= 1);
    cls.lo.assign(slots, 0.0);
    cls.hi.assign(slots, 1.0);
    for (int j = 0; j < slots; ++j)
      if (cls.weight[j] > 0.0) cls.support.push_back(j);
  }
  const std::vector<double> coef = *rc::gen::container<std::vector<double>>(
      static_cast<std::size_t>(C) * slots,
      rc::gen::map(rc::gen::inRange(-100, 101), [](int v) { return v / 10.0; }));
  const threshold::CountDomain domain(classes, slots, S, R, cell, base);
  RC_ASSERT(domain.valid());
  double scale = 0.0;
  const double bound = domain.Maximise(coef, scale);
  double seen = -std::numeric_limits<double>::infinity(), magnitude = 1.0;
  for (double c : coef) magnitude += std::abs(c);
  std::vector<std::int64_t> n(D, 0);
  const auto value = [&] {
    double total = 0.0;
    for (int c = 0; c < C; ++c) {
      const threshold::AttentionClass& cls = classes[c];
      double z = 0.0, num = 0.0;
      for (int j : cls.support) {
        const double mass = cls.weight[j] * (j < D ? static_cast<double>(n[j]) : 1.0);
        z += mass;
        num += mass * coef[static_cast<std::size_t>(c) * slots + j];
      }
      total += num / z;
    }
    return total;
  };
  // Every split of each residue's N_r = base_r + k among its S tokens.
  const std::function<void(int, std::int64_t)> splits = [&](int kappa, std::int64_t k) {
    if (kappa == D) {
      seen = std::max(seen, value());
      return;
    }
    const int r = kappa / S, s = kappa % S;
    std::int64_t used = 0;
    for (int t = 0; t < s; ++t) used += n[r * S + t];
    const std::int64_t left = base[r] + k - used;
    if (s == S - 1) {
      n[kappa] = left;
      splits(kappa + 1, k);
      return;
    }
    for (std::int64_t v = 0; v <= left; ++v) {
      n[kappa] = v;
      splits(kappa + 1, k);
    }
  };
  for (std::int64_t k = cell.k_lo; k <= cell.k_hi; ++k) splits(0, k);
  RC_ASSERT(seen <= bound + 1e-9 * magnitude);
  RC_TAG(S, R, cell.k_hi - cell.k_lo > 10 ? "wide" : "narrow");
}

}  // namespace
}  // namespace ltsim
