// The certified two-layer bound of docs/theory.md §4.7 never below the measured
// ‖f(x) − f(z)‖_∞, on random two-layer models (every first-layer mode, softmax second layer)
// and adversarial x and z; and step 1's state distance never below the first layer's move.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "ltsim/bounds/registry.h"
#include "ltsim/bounds/two_layer_length.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/check/two_layer_bound.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// A two-layer shape whose second layer is softmax (the bound's class); first layer in any mode.
rc::Gen<test::ModelShape> GenBoundShape() {
  return rc::gen::map(test::GenTwoLayerShape(), [](test::ModelShape s) {
    s.attention2 = Attention::kSoftmax;
    return s;
  });
}

// A model of docs/theory.md §4.8's class: softmax layers, every first-layer head token-dominated
// (bias scaling none, or log with max φ < 1) or position-dominated (log, max φ > 1), a second
// layer without growing local bias.
Transformer ClassModel() {
  test::ModelShape shape = *GenBoundShape();
  shape.attention = Attention::kSoftmax;
  shape.bias_scaling2 = BiasScaling::kNone;
  Transformer model = test::MakeRandomModel(shape);
  if (model.layers[0].bias_scaling == BiasScaling::kLog) {
    for (Head& h : model.layers[0].heads) {
      const bool position = *rc::gen::arbitrary<bool>();
      const double top = h.bias.maxCoeff();
      // Shift φ so that max φ is 2 (position-dominated) or 0.5 (token-dominated).
      h.bias.array() += (position ? 2.0 : 0.5) - top;
    }
  }
  return model;
}

// Adversarial strings: long runs, a short period repeated, a rare token in a run, or the skewed
// random strings of the other properties.
rc::Gen<std::vector<Token>> GenAdversarial(int alphabet, int min_length, int max_length) {
  return rc::gen::exec([=] {
    const int kind = *rc::gen::inRange(0, 4);
    const int length = *rc::gen::inRange(min_length, max_length + 1);
    const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
    boost::random::mt19937_64 engine(seed);
    boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
    std::vector<Token> x;
    if (kind == 0) return *test::GenString(alphabet, min_length, max_length);
    if (kind == 1) {  // a period of 1 … 6 tokens
      std::vector<Token> period(static_cast<std::size_t>(*rc::gen::inRange(1, 7)));
      for (Token& t : period) t = static_cast<Token>(token(engine));
      while (static_cast<int>(x.size()) < length) x.push_back(period[x.size() % period.size()]);
    } else if (kind == 2) {  // two long runs and a rare token between them
      const int a = static_cast<int>(length * 0.7);
      const Token first = static_cast<Token>(token(engine)),
                  second = static_cast<Token>(token(engine));
      x.assign(static_cast<std::size_t>(a), first);
      x.push_back(static_cast<Token>(token(engine)));
      while (static_cast<int>(x.size()) < length) x.push_back(second);
    } else {  // runs whose length grows along the string
      int run = 1;
      while (static_cast<int>(x.size()) < length) {
        x.insert(x.end(), static_cast<std::size_t>(run), static_cast<Token>(token(engine)));
        run += 1 + run / 3;
      }
      x.resize(static_cast<std::size_t>(length));
    }
    return x;
  });
}

// z from x: a simulator (markov, blocks, truncate, uniform), or any other string (the bound
// holds for every z), possibly ending with x's suffix.
std::vector<Token> MakeZ(const Transformer& model, const std::vector<Token>& x) {
  const int kind = *rc::gen::inRange(0, 6);
  if (kind < 4) {
    const char* methods[] = {"markov", "blocks", "truncate", "uniform"};
    SandwichOptions o;
    o.method = methods[kind];
    const std::uint64_t tau = static_cast<std::uint64_t>(model.locality) + 1;
    o.length =
        *rc::gen::inRange<std::uint64_t>(tau + 1, std::max<std::uint64_t>(tau + 2, x.size()));
    o.seed = *rc::gen::arbitrary<std::uint64_t>();
    try {
      return FromRuns(RunSimulation({&model}, *MakeTokenSource(x, "x"), o).z);
    } catch (const InputError&) {
      return x;
    }
  }
  std::vector<Token> z = *GenAdversarial(model.alphabet, 1, 200);
  if (kind == 5) {  // keep x's last τ + 1 tokens
    const std::size_t keep = std::min<std::size_t>(x.size(), model.locality + 1);
    z.insert(z.end(), x.end() - static_cast<std::ptrdiff_t>(keep), x.end());
  }
  return z;
}

// sim ≤ bound, a double refutation rechecked with sim in 50 digits (docs/theory.md §8.3): near
// sim ≈ 0 the double evaluations round at 1e-16 times the outputs' magnitude.
bool SimAtMost(const Transformer& model, const Source& x, const Source& z, double sim,
               double bound) {
  if (LessOrClose(sim, bound)) return true;
  const PreciseReal precise =
      PreciseSupDistance(EvaluatePrecise(model, x), EvaluatePrecise(model, z));
  RC_LOG() << "50-digit sim " << PreciseText(precise, 12) << "\n";
  return PreciseLessOrClose(precise, PreciseReal(bound));
}

RC_GTEST_PROP(TwoLayerBoundProperty, BoundsTheMeasuredSimulationError, ()) {
  test::ModelShape shape = *GenBoundShape();
  const Transformer model = test::MakeRandomModel(shape);
  const std::vector<Token> x = *GenAdversarial(model.alphabet, 1, 400);
  const std::vector<Token> z = MakeZ(model, x);
  const auto xs = MakeTokenSource(x, "x");
  const auto zs = MakeTokenSource(z, "z");
  const TwoLayerBound b = CertifyTwoLayerSimulation(model, *xs, *zs);
  RC_ASSERT(b.reason.empty());
  const double sim = SupDistance(Evaluate(model, *xs), Evaluate(model, *zs));
  RC_TAG(AttentionName(shape.attention), b.last_window_matches);
  RC_LOG() << "mode " << AttentionName(shape.attention) << " scaling " << int(shape.bias_scaling)
           << " scaling2 " << int(shape.bias_scaling2) << " S " << shape.alphabet << " d "
           << shape.width << " Delta " << shape.period << " tau " << shape.locality << " H "
           << shape.heads << " H2 " << shape.heads2 << " mlp " << shape.mlp << shape.mlp2 << " |z| "
           << z.size() << " sim " << sim << " bound " << b.bound << " last " << b.last_position
           << " transport " << b.transport << " unmatched " << b.unmatched << " query " << b.query
           << " mass " << b.unmatched_mass << "\n";
  RC_ASSERT(SimAtMost(model, *xs, *zs, sim, b.bound));
  // Lemma B of docs/theory.md §4.8 holds for any coupling, so also for this one: with its
  // transport cost C̄ and unmatched mass U, sim ≤ Ω·[c_last(1 + S₁) + S₂·C̄ + S₃·U] at the a-priori
  // constants (models of §4.8's class only).
  const ConstantMap c = ModelConstants(model);
  if (c.count("tl_omega") && !std::isnan(c.at("tl_omega"))) {
    const auto times = [](double u, double v) { return u == 0 || v == 0 ? 0.0 : u * v; };
    const double a_priori = times(c.at("tl_omega"), times(b.last_position, 1 + c.at("tl_s1")) +
                                                        times(c.at("tl_s2"), b.coupled_distance) +
                                                        times(c.at("tl_s3"), b.unmatched_mass));
    RC_TAG("lemma B");
    RC_ASSERT(SimAtMost(model, *xs, *zs, sim, a_priori));
  }
}

// Step 1: c(σ, σ') ≥ ‖y¹(a) − y¹(b)‖ for two strings ending in one window.
RC_GTEST_PROP(TwoLayerBoundProperty, StateDistanceBoundsTheFirstLayer, ()) {
  const Transformer model =
      *rc::gen::arbitrary<bool>() ? ClassModel() : test::MakeRandomModel(*GenBoundShape());
  const std::vector<Token> a = *GenAdversarial(model.alphabet, 1, 300);
  std::vector<Token> b = *GenAdversarial(model.alphabet, 0, 300);
  const std::size_t keep = std::min<std::size_t>(a.size(), model.locality + 1);
  b.insert(b.end(), a.end() - static_cast<std::ptrdiff_t>(keep), a.end());
  // The window includes the length mod Δ: pad b at its front until the residues agree.
  while (b.size() % model.period != a.size() % model.period) b.insert(b.begin(), 0);
  const double c = FirstLayerStateDistance(model, a, b);
  const auto y = [&](const std::vector<Token>& s) {
    return FirstLayerOutput(model, CountTypes(s, model.alphabet, model.period, model.locality));
  };
  const Vector ya = y(a), yb = y(b);
  const double moved = (ya - yb).norm();
  // y¹ is computed in double: with c = 0 (one type, or equal states) the outputs still differ by
  // rounding, bounded by the evaluators' agreement of docs/model.md §3 (1e-9 relative).
  const double rounding = 1e-9 * (1.0 + ya.norm() + yb.norm());
  if (a.size() <= static_cast<std::size_t>(model.locality) + 1 && a.size() != b.size()) {
    RC_ASSERT(std::isinf(c));  // short windows include the whole string and its length
    return;
  }
  RC_LOG() << "moved " << moved << " c " << c << " |a| " << a.size() << " |b| " << b.size()
           << " tau " << model.locality << " Delta " << model.period << " S " << model.alphabet
           << " mode " << AttentionName(model.layers[0].attention) << " scaling "
           << int(model.layers[0].bias_scaling) << " mlp " << bool(model.layers[0].mlp) << "\n";
  RC_ASSERT(moved <= c + rounding);
  // Lemma A of docs/theory.md §4.8 (models of its class): c ≤ 2Λ_T‖μ − μ'‖₁ + 2Λ₁(ζ̂(i) + ζ̂(i')),
  // ζ̂(i) = 1 below 2τ + 2 and min(1, a·i^(−γ)) beyond.
  const ConstantMap k = ModelConstants(model);
  if (!k.count("tl_omega") || std::isnan(k.at("tl_omega")) || std::isinf(c)) return;
  const auto zeta = [&](std::size_t i) {
    if (i < 2 * static_cast<std::size_t>(model.locality) + 2) return 1.0;
    return std::min(1.0,
                    k.at("tl_zeta_a") * std::pow(static_cast<double>(i), -k.at("tl_zeta_gamma")));
  };
  const auto histogram = [&](const std::vector<Token>& s) {
    const TypeCounts t = CountTypes(s, model.alphabet, model.period, model.locality);
    std::vector<double> mu(t.far.size(), 0.0);
    const double total = static_cast<double>(t.far_length());
    for (std::size_t i = 0; i < mu.size() && total > 0; ++i)
      mu[i] = static_cast<double>(t.far[i]) / total;
    return mu;
  };
  const std::vector<double> ma = histogram(a), mb = histogram(b);
  double l1 = 0;
  for (std::size_t i = 0; i < ma.size(); ++i) l1 += std::abs(ma[i] - mb[i]);
  const double lemma = (l1 == 0 ? 0.0 : 2 * k.at("tl_lambda_t") * l1) +
                       2 * k.at("tl_lambda1") * (zeta(a.size()) + zeta(b.size()));
  RC_TAG("lemma A");
  RC_LOG() << "c " << c << " lemma " << lemma << " |a| " << a.size() << " |b| " << b.size()
           << " l1 " << l1 << " tau " << model.locality << " scaling "
           << int(model.layers[0].bias_scaling) << "\n";
  RC_ASSERT(LessOrClose(c, lemma));
}

// §4.8's theorem on small cases: for z = balanced-blocks(x) at target n and block length ℓ,
// ‖f(x) − f(z)‖_∞ ≤ B(n, ℓ, ε₀, δ) for every x and every ε₀, δ ∈ (0, 1].
RC_GTEST_PROP(TwoLayerBoundProperty, BalancedBlocksMeetTheProvenBound, ()) {
  const Transformer model = ClassModel();
  ConstantMap c = ModelConstants(model);
  RC_PRE(!std::isnan(c.at("tl_omega")));
  const std::vector<Token> x = *GenAdversarial(model.alphabet, 20, 700);
  const std::uint64_t tail = static_cast<std::uint64_t>(model.locality + model.period) + 1;
  const std::uint64_t block =
      static_cast<std::uint64_t>(model.period) * *rc::gen::inRange<std::uint64_t>(1, 12);
  const std::uint64_t n = *rc::gen::inRange<std::uint64_t>(tail + block, x.size() + tail + block);
  SandwichOptions o;
  o.method = "balanced-blocks";
  o.length = n;
  o.block_length = block;
  const auto xs = MakeTokenSource(x, "x");
  Simulation z;
  try {
    z = RunSimulation({&model}, *xs, o);
  } catch (const InputError&) {
    RC_DISCARD("x too short for one block");
  }
  RC_ASSERT(z.length <= n);
  // (P): every prefix of blocks is balanced within K·ℓ (docs/theory.md §4.8).
  RC_LOG() << z.detail << "\n";
  if (z.length < x.size()) RC_ASSERT(z.imbalance <= z.imbalance_bound + 1e-6);  // else z = x
  const double eps0 = std::exp2(-*rc::gen::inRange(1, 12) / 2.0);
  const double delta = std::exp2(-*rc::gen::inRange(0, 12) / 2.0);
  const double bound =
      TwoLayerSimulationBound(c, static_cast<double>(n), static_cast<double>(block), eps0, delta);
  const auto zs = MakeRunSource(z.z, "z");
  const double sim = SupDistance(Evaluate(model, *xs), Evaluate(model, *zs));
  RC_TAG(!std::isfinite(bound) ? "no bound" : bound < 1 ? "bound below 1" : "bound at least 1");
  RC_LOG() << "sim " << sim << " bound " << bound << "\n";
  RC_ASSERT(SimAtMost(model, *xs, *zs, sim, bound));
}

}  // namespace
}  // namespace ltsim
