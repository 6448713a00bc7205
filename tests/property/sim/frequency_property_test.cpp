// Properties of the model-aware frequency matching (docs/theory.md §2.4): requirements (a)–(e)
// and its η bound.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>

#include "ltsim/bounds/registry.h"
#include "ltsim/check/sandwich.h"
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
  RC_ASSERT(r.holds);
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

// The length bound of docs/theory.md §2.4, uniform in |x|: for Δ* = 1 and far counts up to
// 10^15 (x far longer than the bound), the plan at |z| = frequency-length(ε) certifies
// η ≤ ε/L. The registry's formula depends on L and ε only through L/ε, so L = 1 and ε = the
// target η. No slack beyond LessOrClose's 1e-12: the proof's constants are exact.
RC_GTEST_PROP(FrequencyProperty, LengthBoundHoldsForCountsOfAnySize, ()) {
  // Grid weights tie logits, so supports hold several types and share them across heads.
  test::ModelShape fs = *test::GenHardmaxRegimeShape();
  fs.period = 1;
  fs.grid = true;
  test::ModelShape gs = *test::WithAlphabet(test::GenHardmaxRegimeShape(), fs.alphabet);
  gs.period = 1;
  gs.grid = true;
  gs.outputs = fs.outputs;
  const Transformer f = test::MakeRandomModel(fs);
  const Transformer g = test::MakeRandomModel(gs);
  const int locality = std::max(f.locality, g.locality);
  TypeCounts x;
  x.alphabet = f.alphabet;
  x.period = 1;
  x.locality = locality;
  x.far.resize(f.alphabet);
  const int large = *rc::gen::inRange(0, f.alphabet);  // one type near 10^15: x is long
  for (int s = 0; s < f.alphabet; ++s) {
    const int decades = s == large ? 15 : *rc::gen::inRange(0, 16);  // counts 1 … 10^15
    const bool absent = s != large && *rc::gen::inRange(0, 10) == 0;
    x.far[s] = absent ? 0
                      : static_cast<std::uint64_t>(std::pow(10.0, decades) *
                                                   *rc::gen::inRange(100, 1000) / 1000.0) +
                            1;
  }
  for (int k = 0; k <= locality; ++k)
    x.suffix.push_back(static_cast<Token>(*rc::gen::inRange(0, f.alphabet)));
  std::uint64_t far = 0;
  for (std::uint64_t c : x.far) far += c;
  x.length = far + x.suffix.size();
  ConstantMap constants = PairConstants(f, g);
  constants["L"] = 1.0;
  constants["eps"] = *rc::gen::element(0.5, 0.2, 0.1, 0.05);
  const double bound = FindBound("frequency-length").value(constants);
  RC_PRE(bound < 1e14 && bound < static_cast<double>(x.length));
  const auto n = static_cast<std::uint64_t>(std::ceil(bound));
  const FrequencyPlan plan = PlanFrequencyMatching(x, {n - x.suffix.size()}, n, {&f, &g});
  RC_TAG(plan.padded_groups > 0 ? "padded" : "not padded");
  RC_TAG(plan.delta > 0 ? "light types" : "one scale per support");
  RC_TAG(plan.exact_components == plan.components ? "copied exactly" : "scaled");
  RC_ASSERT(plan.groups <= constants.at("H"));
  RC_ASSERT(LessOrClose(plan.eta, constants.at("eps")));
}

}  // namespace
}  // namespace ltsim
