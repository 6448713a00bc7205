// `ComputeProfile` against brute force on random one-layer pairs of every attention mode
// (docs/theory.md §14.4): each length's bracket holds the maximum over all S^T strings, the
// ε_train bracket holds the maximum over T ≤ n, and the supremum's bracket holds every one of
// them and the gap of random long strings. Constant: brackets are compared with a slack of
// 1e-9·(1 + gap), the verdict's rounding allowance (docs/theory.md §11.1).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ltsim/eval/reference.h"
#include "ltsim/threshold/profile.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// Strings enumerated a case: Σ_{T ≤ Tb} S^T ≤ this.
constexpr std::uint64_t kStrings = 1500;

double Slack(double gap) { return 1e-9 * (1.0 + std::abs(gap)); }

double Gap(const Transformer& f, const Transformer& g, const std::vector<Token>& x) {
  return (EvaluateReference(f, x) - EvaluateReference(g, x)).cwiseAbs().maxCoeff();
}

// max over all strings of length T of the gap, every string evaluated.
double BruteMax(const Transformer& f, const Transformer& g, int T) {
  std::vector<Token> x(static_cast<std::size_t>(T), 0);
  double best = 0.0;
  while (true) {
    best = std::max(best, Gap(f, g, x));
    int i = 0;
    while (i < T && ++x[static_cast<std::size_t>(i)] == f.alphabet)
      x[static_cast<std::size_t>(i++)] = 0;
    if (i == T) return best;
  }
}

RC_GTEST_PROP(ProfileProperty, BracketsHoldTheBruteForceMaxima, ()) {
  test::ModelShape a = *test::GenShape();
  a.layers = 1;
  a.bias_scaling = BiasScaling::kNone;
  a.alphabet = std::min(a.alphabet, 3);
  a.locality = std::min(a.locality, 1);
  a.period = std::min(a.period, 2);
  test::ModelShape b = a;
  // A near copy (a small gap, the interesting case) or another random model.
  if (*rc::gen::arbitrary<bool>()) {
    b.scale = a.scale * *rc::gen::element(1.05, 0.9);
    b.attention = *rc::gen::element(Attention::kHardmax, Attention::kSoftmax, Attention::kFinite);
    b.precision_bits = b.attention == Attention::kFinite ? *rc::gen::inRange(1, 5) : 0;
  } else {
    b = *test::WithAlphabet(test::GenShape(), a.alphabet);
    b.layers = 1;
    b.bias_scaling = BiasScaling::kNone;
    b.outputs = a.outputs;
    b.locality = std::min(b.locality, 1);
    b.period = std::min(b.period, 2);
  }
  const Transformer f = test::MakeRandomModel(a), g = test::MakeRandomModel(b);
  int brute = 0;
  for (std::uint64_t total = 0, power = 1; brute < 12;) {
    power *= static_cast<std::uint64_t>(f.alphabet);
    if (total + power > kStrings) break;
    total += power;
    ++brute;
  }
  RC_PRE(brute >= 2);
  ProfileOptions o;
  o.train_length = static_cast<std::uint64_t>(*rc::gen::inRange(1, brute + 1));
  o.max_length = 40;
  o.points = 3;
  o.tolerance = 0.05;
  o.max_certify_runs = 4;
  o.max_boxes = 5'000;
  o.certify_evaluations = 50'000;
  o.threads = 1;
  const ProfileResult r = ComputeProfile(f, g, o);
  RC_ASSERT(r.points.size() == ProfileLengths(o.train_length, o.max_length, o.points).size());
  double train_max = 0.0, every_max = 0.0;
  for (const ProfilePoint& p : r.points) {
    RC_ASSERT(p.lower <= p.upper + Slack(p.upper));
    RC_ASSERT(p.lower <= r.sup_lower + Slack(p.lower));
    if (p.length > static_cast<std::uint64_t>(brute)) continue;
    const double max = BruteMax(f, g, static_cast<int>(p.length));
    RC_ASSERT(p.lower <= max + Slack(max));
    RC_ASSERT(max <= p.upper + Slack(max));
    if (p.length <= o.train_length) train_max = std::max(train_max, max);
    every_max = std::max(every_max, max);
  }
  RC_ASSERT(r.train_lower <= train_max + Slack(train_max));
  RC_ASSERT(train_max <= r.train_upper + Slack(train_max));
  RC_ASSERT(r.sup_lower <= r.sup_upper + Slack(r.sup_upper));
  RC_ASSERT(every_max <= r.sup_upper + Slack(every_max));
  for (int k = 0; k < 5; ++k) {
    const std::vector<Token> x = *test::GenString(f.alphabet, 1, 400);
    const double gap = Gap(f, g, x);
    RC_ASSERT(gap <= r.sup_upper + Slack(gap));
  }
  if (r.train_lower > 0.0) RC_ASSERT(r.ratio_upper >= r.sup_upper / r.train_upper - 1e-12);
}

}  // namespace
}  // namespace ltsim
