// The two-layer-margin family for Theorem 5.2's attention-norm and positional-margin rows
// (docs/tightness.md §5): alphabet {0, 1}, Δ = 1, τ = 0. Layer 1 (softmax, `log` scaling): one
// head with M = norm·e₀e₀ᵀ (a key 0 seen from a query 0 has content logit `norm`, every other
// pair 0: the first layer's attention norm is ‖M‖ = norm) and self bias φ = 1 − γ_pos
// (token-dominated, margin γ_pos), copying the token one-hots. Layer 2 (softmax, no scaling): one
// head with M = 0 and self bias ln(10^5), so up to T ≈ 10^5 it reads mostly the last position's
// first-layer output, carried to a new coordinate. One MLP unit as in the positional-margin
// family reads that coordinate u: f = ReLU(θ − a·u − 2θ·[x_T = 1]), θ = κε; g = the same model
// with a zero readout. So f and g differ by more than ε once a·u < (κ − 1)ε, as the one-layer
// pair, with u ≈ the first layer's share of the query, about e^(norm)·T^(−γ_pos). Its first
// disagreement is not derived (T* is 0). InputError for γ_pos ∉ (0, 1), norm < 0, slope ≤ 0,
// ε ∉ (0, 1), κ ∉ (1, 10].
#include <cmath>
#include <limits>
#include <string>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"

namespace ltsim::construct {
namespace {

FamilyMember BuildTwoLayerMargin(const FamilyValues& v) {
  const double positional_margin = Get(v, "gamma-pos"), norm = Get(v, "norm"),
               slope = Get(v, "slope"), eps = Get(v, "eps"), height = Get(v, "height");
  const double theta = height * eps;
  // Dimensions: tokens 0, 1; first-layer masses on tokens 0, 1 at 2, 3; the second layer's copy
  // of coordinate 2 at 4; the unit's output 5.
  const int d = 6;
  Transformer m = Frame(2, d, 1, 0);
  m.embedding(0, 0) = 1;
  m.embedding(1, 1) = 1;
  Layer first;
  first.attention = Attention::kSoftmax;
  first.bias_scaling = BiasScaling::kLog;
  Head h1;
  h1.qk = Matrix::Zero(d, d);
  h1.qk(0, 0) = norm;
  h1.ov = Matrix::Zero(d, d);
  h1.ov(2, 0) = 1;
  h1.ov(3, 1) = 1;
  h1.bias = Vector::Constant(1, 1 - positional_margin);
  first.heads.push_back(h1);
  m.layers.push_back(first);
  Layer second;
  second.attention = Attention::kSoftmax;
  Head h2;
  h2.qk = Matrix::Zero(d, d);
  h2.ov = Matrix::Zero(d, d);
  h2.ov(4, 2) = 1;
  h2.bias = Vector::Constant(1, std::log(1e5));
  second.heads.push_back(h2);
  second.mlp = QueryGatedUnit(d, 4, slope, theta, 5);
  m.layers.push_back(second);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_bias = Vector::Zero(1);
  FamilyMember p;
  p.family = "two-layer-margin";
  const ZeroReadoutPair pair = MakeZeroReadoutPair(m, 5);
  p.f = pair.f;
  p.g = pair.g;
  p.f.name = "two-layer margin f";
  p.g.name = "two-layer margin g (zero readout)";
  p.eps = eps;
  p.closed_form = "not derived";
  p.growth = "e^(norm)·T^(−γ_pos) < (κ − 1)ε/a, heuristically";
  p.gap_at_first_disagreement = std::numeric_limits<double>::quiet_NaN();
  p.sup_gap = std::numeric_limits<double>::quiet_NaN();
  p.semantics =
      "two layers, softmax; the first layer's share of the query decays like "
      "e^(norm) T^(-gamma_pos) under log bias scaling; the second layer reads the last position "
      "(self bias ln 10^5); f - g = ReLU(theta - a u) when x_T = 0; an l-infinity gap > eps";
  return p;
}

}  // namespace

Family TwoLayerMarginFamily() {
  return {
      "two-layer-margin",
      "two softmax layers: the first layer's share of the query decays like "
      "e^(norm)·T^(−γ_pos), the second reads it at the last position (tightness rows 5.2)",
      "e^(norm) and 1/γ_pos (not derived)",
      {{"gamma-pos", 0.5, 1e-9, 1.0, false, "γ_pos: the positional margin, in (0, 1)", kClosed,
        kOpen},
       {"norm", 1.0, 0.0, 1e6, false, "the first layer's attention norm ‖M‖"},
       {"slope", 1.0, 1e-9, 1e12, false, "a: the unit's slope on the share"},
       {"eps", 0.05, 1e-9, 1.0, false, "ε of the first disagreement, in (0, 1)", kClosed, kOpen},
       {"height", 3.0, 1.0, 10.0, false, "κ: sup |f − g| = κε, κ in (1, 10]", kOpen, kClosed}},
      BuildTwoLayerMargin,
      true};
}

}  // namespace ltsim::construct
