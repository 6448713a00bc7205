// Properties of the model-aware frequency matching (docs/theory.md §2.4): requirements (a)–(e)
// and its η bound.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>

#include "ltsim/bounds/registry.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/sim/frequency_matching.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

struct Case {
  Transformer f, g;
  std::vector<Token> x;
  std::uint64_t n = 0;
};

// A pair in the hardmax regime, a long skewed x and a target length n ≥ both T_hard.
Case GenCase() {
  Case c;
  const test::ModelShape fs = *test::GenHardmaxRegimeShape();
  test::ModelShape gs = *test::WithAlphabet(test::GenHardmaxRegimeShape(), fs.alphabet);
  gs.outputs = fs.outputs;  // a pair compares outputs one by one (sandwich refuses others)
  c.f = test::MakeRandomModel(fs);
  c.g = test::MakeRandomModel(gs);
  c.x = *test::GenString(fs.alphabet, 5000, 60000);
  c.n = *rc::gen::inRange<std::uint64_t>(300, 4000);
  return c;
}

TypeCounts JointCounts(const Case& c, const std::vector<Token>& s) {
  const int period = std::lcm(c.f.period, c.g.period);
  const int locality = std::max(c.f.locality, c.g.locality);
  return CountTypes(s, c.f.alphabet, period, locality);
}

RC_GTEST_PROP(FrequencyProperty, MeetsRequirementsAndItsEtaBound, ()) {
  const Case c = GenCase();
  const auto x = MakeTokenSource(c.x, "x");
  const SandwichResult r = RunSandwich(c.f, c.g, *x, {"frequency", c.n, 1});
  const std::vector<Token> z = FromRuns(r.simulation.z);
  const TypeCounts cx = JointCounts(c, c.x);
  const TypeCounts cz = JointCounts(c, z);
  // (a) the suffix and the length modulo Δ*; |z| ≤ n.
  RC_ASSERT(z.size() == r.z_length);
  RC_ASSERT(r.z_length <= c.n);
  RC_ASSERT(cz.suffix == cx.suffix);
  RC_ASSERT(r.z_length % cx.period == r.x_length % cx.period);
  // (c) only types present in x.
  for (std::size_t k = 0; k < cx.far.size(); ++k) RC_ASSERT(cz.far[k] == 0 || cx.far[k] > 0);
  // The bound: in the hardmax regime η is claimed, and sim ≤ L·η is the Lipschitz lemma
  // applied to attention distances the construction certifies (slack: LessOrClose, 1e-12).
  const bool regime = !std::isnan(r.simulation.eta);
  RC_TAG(regime ? "hardmax regime" : "below T_hard");
  if (!regime) return;
  RC_ASSERT(r.rate_holds);
  RC_ASSERT(LessOrClose(r.f.eta_achieved, r.simulation.eta));
  RC_ASSERT(LessOrClose(r.g.eta_achieved, r.simulation.eta));
  RC_ASSERT(LessOrClose(r.f.sim, r.f.lipschitz * r.f.eta_achieved));
  RC_ASSERT(LessOrClose(r.g.sim, r.g.lipschitz * r.g.eta_achieved));
  // The terms are distances between real outputs: f(x), g(x) by the streaming evaluator, and,
  // for z up to 1200 tokens, f(z), g(z) by the quadratic reference on the z built (neither
  // reads the counts the sandwich evaluates from). Tolerance 1e-9·(1 + |value|): summation
  // orders differ; a wrong count or a z other than the one evaluated moves outputs far more.
  const auto close = [](const Vector& a, const Vector& b) {
    return a.size() == b.size() && ((a - b).array().abs() <= 1e-9 * (1.0 + b.array().abs())).all();
  };
  RC_ASSERT(close(r.f.on_x, Evaluate(c.f, *x)));
  RC_ASSERT(close(r.g.on_x, Evaluate(c.g, *x)));
  if (z.size() <= 1200) {
    RC_TAG("z checked by the reference");
    RC_ASSERT(close(r.f.on_z, EvaluateReference(c.f, z)));
    RC_ASSERT(close(r.g.on_z, EvaluateReference(c.g, z)));
  }
  RC_ASSERT(r.f.sim == (r.f.on_x - r.f.on_z).lpNorm<Eigen::Infinity>());
  RC_ASSERT(r.gap_x == (r.f.on_x - r.g.on_x).lpNorm<Eigen::Infinity>());
  RC_ASSERT(r.gap_z == (r.f.on_z - r.g.on_z).lpNorm<Eigen::Infinity>());
}

// The documented rate: without padding every scaled group is within 2(|K_h| + m_h)/Θ + 4F_hδ.
RC_GTEST_PROP(FrequencyProperty, CertificateWithinTheStatedRate, ()) {
  const Case c = GenCase();
  const TypeCounts cx = JointCounts(c, c.x);
  const std::uint64_t far = c.n - cx.suffix.size();
  std::vector<std::uint64_t> sizes(cx.period, far / cx.period);
  for (std::uint64_t j = 1; j <= far % cx.period; ++j) ++sizes[j % cx.period];
  RC_PRE(far >= static_cast<std::uint64_t>(cx.period));
  const FrequencyPlan plan = PlanFrequencyMatching(cx, sizes, c.n, {&c.f, &c.g});
  RC_PRE(plan.padded_groups == 0);
  RC_TAG(plan.exact_components == plan.components ? "all exact" : "scaled");
  if (plan.exact_components == plan.components) {
    RC_ASSERT(plan.eta == 0.0);
  } else {
    RC_ASSERT(LessOrClose(plan.eta, plan.eta_rate));
  }
  // Every residue class of the far region is filled exactly (requirement (e)).
  for (int r = 0; r < cx.period; ++r) {
    std::uint64_t used = 0;
    for (int s = 0; s < cx.alphabet; ++s) used += plan.far[cx.TypeIndex(s, r)];
    RC_ASSERT(used == sizes[r]);
  }
}

// A uniform draw from [lo, hi) whatever RapidCheck's size (gen::inRange narrows the range at
// small sizes), for the draws whose whole range each run must see.
template <class T>
T Uniform(T lo, T hi) {
  return *rc::gen::resize(100, rc::gen::inRange<T>(lo, hi));
}

// A hardmax model whose logits read one-hot features: the key (s, r) has logit
// w_h[s] + v_h[r] (+ φ_h[t] near the query). The first head's w and v are `w` and `v` when given;
// every other head (and the first otherwise) is one of four kinds: w, v, φ on the grid
// {−1, −1/2, 0, 1/2, 1}, a token set everywhere (w ∈ {0, 1}, v = 0), a token set in a set of
// residue classes (w, v ∈ {0, 1}), or every key; outside the first kind φ ∈ {−1, 0}, so a
// suffix key ties the far maximum or drops out. Supports are then unions of token sets ×
// residue sets, that read some residue classes and not others, cover whole classes and tie
// suffix slots. Only the supports matter to the plan; the output reads the residue-0 share.
Transformer IndicatorModel(int alphabet, int period, int max_heads = 3,
                           const std::vector<double>& w = {}, const std::vector<double>& v = {}) {
  const int width = alphabet + 1 + period + 1;  // tokens, const, residues, output
  const int one = alphabet, out = width - 1;
  Transformer m;
  m.name = "indicator";
  m.alphabet = alphabet;
  m.width = width;
  m.period = period;
  m.locality = *rc::gen::inRange(0, 3);
  m.embedding = Matrix::Zero(alphabet, width);
  for (int s = 0; s < alphabet; ++s) m.embedding(s, s) = m.embedding(s, one) = 1.0;
  m.positional = Matrix::Zero(period, width);
  for (int r = 0; r < period; ++r) m.positional(r, one + 1 + r) = 1.0;
  auto grid = [] { return 0.5 * *rc::gen::inRange(-2, 3); };
  Layer layer;
  layer.attention = Attention::kHardmax;
  const int heads = *rc::gen::inRange(1, max_heads + 1);
  for (int h = 0; h < heads; ++h) {
    Head head{Matrix::Zero(width, width), Matrix::Zero(width, width), Vector::Zero(m.locality + 1)};
    const bool given = h == 0 && !w.empty();
    // 0: grid weights; 1: a token set everywhere; 2: a token set in a set of residue classes;
    // 3: every key (uniform).
    const int kind = given ? 2 : Uniform(0, 4);
    for (int c = 0; c < out; ++c) {
      if (c == one) continue;
      const bool residue = c > one;
      head.qk(c, one) = given                         ? (residue ? v[c - one - 1] : w[c])
                        : kind == 0                   ? grid()
                        : kind == 3                   ? 0.0
                        : residue && kind == 1        ? 0.0
                        : *rc::gen::arbitrary<bool>() ? 1.0
                                                      : 0.0;
    }
    for (int t = 0; t <= m.locality; ++t)
      head.bias[t] = kind == 0 ? grid() : -1.0 * *rc::gen::inRange(0, 2);
    head.ov(out, one + 1) = 1.0;
    layer.heads.push_back(head);
  }
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, width);
  m.readout_weight(0, out) = 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "indicator");
  return m;
}

// The joint types (token, residue) that lie in some head's support on x: its own type is
// maximal for a head of f or g (the supports the construction reads, docs/theory.md §2.4).
std::vector<bool> SupportTypes(const TypeCounts& x, const std::vector<const Transformer*>& models) {
  std::vector<bool> in(x.far.size(), false);
  for (const Transformer* model : models) {
    const TypeCounts own = Coarsen(x, model->period, model->locality);
    for (const HeadAttention& head : OneLayerAttention(*model, own))
      for (int r = 0; r < x.period; ++r)
        for (int s = 0; s < x.alphabet; ++s)
          if (x.count(s, r) > 0 && head.far[own.TypeIndex(s, r % model->period)] > 0.0)
            in[x.TypeIndex(s, r)] = true;
  }
  return in;
}

// The length bound of docs/theory.md §2.4, uniform in |x|: for Δ* ∈ {1, …, 6} and far counts up
// to 10^15 (x far longer than the bound), the plan at |z| = frequency-length(ε) certifies
// η ≤ ε/L. The counts are those of a real far region (its residue classes differ by at most one
// position); in half the cases every non-support type is merged into a support type of its
// residue class, so that each class holding a support type holds no filler (the case that needs
// step 5's balancing when Δ* > 1). The registry's formula depends on L and ε only through L/ε,
// so L = 1 and ε = the target η. No slack beyond LessOrClose's 1e-12: the proof's constants
// are exact.
RC_GTEST_PROP(FrequencyProperty, LengthBoundHoldsForCountsOfAnySize, ()) {
  // Grid weights tie logits, so supports hold several types and share them across heads; two
  // thirds of the pairs read one-hot features (IndicatorModel), whose supports follow residue
  // classes.
  Transformer f, g;
  const int pairs = Uniform(0, 3);
  if (pairs == 0) {
    test::ModelShape fs = *test::GenHardmaxRegimeShape();
    fs.period = *rc::gen::inRange(1, 4);
    fs.grid = true;
    test::ModelShape gs = *test::WithAlphabet(test::GenHardmaxRegimeShape(), fs.alphabet);
    gs.period = *rc::gen::inRange(1, 4);
    gs.grid = true;
    gs.outputs = fs.outputs;
    f = test::MakeRandomModel(fs);
    g = test::MakeRandomModel(gs);
  } else if (pairs == 1) {
    const int alphabet = *rc::gen::inRange(1, 5);
    f = IndicatorModel(alphabet, *rc::gen::inRange(1, 4));
    g = IndicatorModel(alphabet, *rc::gen::inRange(1, 4));
  } else {
    // f's first head takes a token set everywhere, g's a disjoint token set in some residue
    // classes of g's period (≥ 2): two supports with different residue profiles (the shape of
    // tests/unit/sim/pitfalls_test.cpp's pitfall 4), and at most one other head in g (more heads
    // put frequency-length beyond the 10^15 positions of x).
    const int alphabet = *rc::gen::inRange(2, 4);
    const int period = *rc::gen::inRange(2, 4);
    std::vector<double> w1(alphabet, 0.0), w2(alphabet, 0.0), v1, v2(period, 0.0);
    w1[0] = w2[1] = 1.0;
    for (int s = 2; s < alphabet; ++s) (*rc::gen::arbitrary<bool>() ? w1 : w2)[s] = 1.0;
    v2[0] = 1.0;
    for (int r = 1; r + 1 < period; ++r) v2[r] = *rc::gen::arbitrary<bool>() ? 1.0 : 0.0;
    const int f_period = *rc::gen::inRange(1, 4);
    f = IndicatorModel(alphabet, f_period, 1, w1, std::vector<double>(f_period, 0.0));
    g = IndicatorModel(alphabet, period, 2, w2, v2);
  }
  TypeCounts x;
  x.alphabet = f.alphabet;
  x.period = std::lcm(f.period, g.period);
  x.locality = std::max(f.locality, g.locality);
  x.far.assign(static_cast<std::size_t>(x.alphabet) * x.period, 0);
  // A far region of F ~ 10^15 positions, F/Δ* (±1) per residue class: one type of each class
  // takes what the others leave (counts 1 … 10^12, a tenth of them absent).
  const auto positions =
      static_cast<std::uint64_t>(std::pow(10.0, 15) * *rc::gen::inRange(100, 1000) / 1000.0);
  const auto classes = static_cast<std::uint64_t>(x.period);
  for (int r = 0; r < x.period; ++r) {
    std::uint64_t size = positions / classes;
    for (std::uint64_t j = 1; j <= positions % classes; ++j)
      size += j % classes == static_cast<std::uint64_t>(r);
    const int large = *rc::gen::inRange(0, x.alphabet);
    std::uint64_t rest = size;
    for (int s = 0; s < x.alphabet; ++s) {
      if (s == large || *rc::gen::inRange(0, 10) == 0) continue;
      const int decades = Uniform(0, 13);
      const auto c = static_cast<std::uint64_t>(std::pow(10.0, decades) *
                                                *rc::gen::inRange(100, 1000) / 1000.0) +
                     1;
      x.far[x.TypeIndex(s, r)] = c;
      rest -= c;
    }
    x.far[x.TypeIndex(large, r)] = rest;
  }
  for (int k = 0; k <= x.locality; ++k)
    x.suffix.push_back(static_cast<Token>(*rc::gen::inRange(0, x.alphabet)));
  x.length = positions + x.suffix.size();
  // Merging a type that no head takes into a support type of its class changes no support (the
  // maxima stay, and no count of a present type drops to 0).
  const bool covered = *rc::gen::arbitrary<bool>();
  if (covered) {
    const std::vector<bool> support = SupportTypes(x, {&f, &g});
    for (int r = 0; r < x.period; ++r) {
      int into = -1;
      for (int s = 0; s < x.alphabet; ++s)
        if (support[x.TypeIndex(s, r)] &&
            (into < 0 || x.count(s, r) > x.far[static_cast<std::size_t>(into)]))
          into = x.TypeIndex(s, r);
      if (into < 0) continue;
      // The class's total, dealt afresh among its support types: each is rare (a count of
      // 1 … 10^12) or bulk (a share 1 … 1000 of what the rare ones leave, one bulk at least),
      // so that supports of very different totals share classes in different proportions.
      std::uint64_t size = 0;
      std::vector<int> kept;
      for (int s = 0; s < x.alphabet; ++s) {
        const int k = x.TypeIndex(s, r);
        size += x.far[k];
        if (support[k]) kept.push_back(k);
        x.far[k] = 0;
      }
      const int first_bulk = kept[*rc::gen::inRange<std::size_t>(0, kept.size())];
      std::vector<int> bulk;
      std::vector<double> shares;
      std::uint64_t rest = size;
      for (int k : kept) {
        if (k == first_bulk || *rc::gen::arbitrary<bool>()) {
          bulk.push_back(k);
          shares.push_back(*rc::gen::inRange(1, 1001));
          continue;
        }
        const int decades = Uniform(0, 13);
        x.far[k] = static_cast<std::uint64_t>(std::pow(10.0, decades) *
                                              *rc::gen::inRange(100, 1000) / 1000.0) +
                   1;
        rest -= x.far[k];
      }
      double total_share = 0.0;
      for (double w : shares) total_share += w;
      for (std::size_t i = 0; i + 1 < bulk.size(); ++i) {
        x.far[bulk[i]] = std::max<std::uint64_t>(
            1, static_cast<std::uint64_t>(static_cast<double>(rest) * shares[i] / total_share));
        rest -= x.far[bulk[i]];
      }
      x.far[bulk.back()] = rest;
    }
    RC_ASSERT(SupportTypes(x, {&f, &g}) == support);
  }
  ConstantMap constants = PairConstants(f, g);
  constants["L"] = 1.0;
  constants["eps"] = *rc::gen::element(0.5, 0.2, 0.1, 0.05);
  const double bound = FindBound("frequency-length").value(constants);
  RC_PRE(bound < 1e14 && bound < static_cast<double>(x.length));
  // |z| ≤ n with |z| ≡ |x| (mod Δ*), and its far region's residue sizes (positions 1-based).
  const auto n = static_cast<std::uint64_t>(std::ceil(bound));
  const std::uint64_t period = x.period;
  const std::uint64_t z_length = n - ((n % period + period - x.length % period) % period);
  const std::uint64_t far = z_length - x.suffix.size();
  std::vector<std::uint64_t> sizes(period, far / period);
  for (std::uint64_t j = 1; j <= far % period; ++j) ++sizes[j % period];
  const FrequencyPlan plan = PlanFrequencyMatching(x, sizes, z_length, {&f, &g});
  int fillerless = 0;  // residue classes whose present types all lie in supports
  const std::vector<bool> support = SupportTypes(x, {&f, &g});
  for (int r = 0; r < x.period; ++r) {
    bool filler = false;
    for (int s = 0; s < x.alphabet; ++s)
      filler = filler || (x.count(s, r) > 0 && !support[x.TypeIndex(s, r)]);
    fillerless += !filler;
  }
  RC_TAG(pairs == 0 ? "random weights" : pairs == 1 ? "one-hot features" : "two residue profiles");
  RC_TAG(x.period == 1 ? "period 1" : "period > 1");
  RC_TAG(fillerless == x.period ? "no class has a filler"
         : fillerless > 0       ? "some classes without a filler"
                                : "a filler in every class");
  if (x.period > 1) {
    const FrequencyPlan old = PlanFrequencyMatching(x, sizes, z_length, {&f, &g}, false);
    RC_TAG(old.padded_groups == 0           ? "unbalanced: not padded"
           : old.eta <= constants.at("eps") ? "unbalanced: padded, within eps"
                                            : "unbalanced: padded, above eps");
  }
  RC_TAG(plan.nu == 0.0               ? "step 3's counts"
         : plan.balanced_residues > 0 ? "step 5: scales raised to nu, rooms shared"
                                      : "step 5: scales raised to nu");
  RC_TAG(plan.padded_groups > 0 ? "padded" : "not padded");
  RC_TAG(plan.delta > 0 ? "light types" : "one scale per support");
  RC_TAG(plan.exact_components == plan.components ? "copied exactly" : "scaled");
  RC_ASSERT(plan.groups <= constants.at("H"));
  RC_ASSERT(LessOrClose(plan.eta, constants.at("eps")));
  // The rate (docs/theory.md §2.4, with step 5's + 2e) bounds every plan that pads nothing.
  if (plan.padded_groups == 0) RC_ASSERT(LessOrClose(plan.eta, plan.eta_rate));
  // Requirements (c) and (e): only x's types, every support type kept, each class filled.
  for (int r = 0; r < x.period; ++r) {
    std::uint64_t used = 0;
    for (int s = 0; s < x.alphabet; ++s) {
      const int k = x.TypeIndex(s, r);
      RC_ASSERT(plan.far[k] == 0 || x.far[k] > 0);
      RC_ASSERT(!support[k] || plan.far[k] > 0);
      used += plan.far[k];
    }
    RC_ASSERT(used == sizes[r]);
  }
}

}  // namespace
}  // namespace ltsim
