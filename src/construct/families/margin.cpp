// The margin family (docs/tightness.md §2): f and g use `finite` p-bit attention; one head
// gives token 0 logit 0 and token 1 logit −γ (f) or −γ(1 + η) (g), and both read the attention
// share of token 1. Below T_hard(g) = 2^(p/(γ(1+η))) both weights survive and differ by at most
// a factor T^(γη); from T_hard(g) on g drops token 1 while f keeps it (weight ≈ 2^(−p)), so with
// one 0 and T − 1 ones the gap is ≥ 1/2 once γ ≤ 0.8: T* = ⌈2^(p/(γ(1+η)))⌉ for ε < 1/2
// (decided by the evaluators' exact rule, FiniteDropLength). T* is 0 when no integer lies in
// [T_hard(g), T_hard(f)) or f's share there is not above 1/2: no closed form then. InputError
// for γ ∉ (0, 0.8], bits ∉ [1, 30], η ∉ (0, 0.1], ε ∉ (0, 1/2).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"
#include "ltsim/model/finite_rounding.h"

namespace ltsim::construct {
namespace {

FamilyMember BuildMargin(const FamilyValues& v) {
  const double margin = Get(v, "margin"), eta = Get(v, "eta"), eps = Get(v, "eps");
  const int bits = static_cast<int>(Get(v, "bits"));
  // Dimensions: tokens 0, 1; constant 2; attended shares 3, 4.
  const int d = 5;
  Transformer m = Frame(2, d, 1, 0);
  m.embedding(0, 0) = 1;
  m.embedding(1, 1) = 1;
  m.positional(0, 2) = 1;
  Layer layer;
  layer.attention = Attention::kFinite;
  layer.precision_bits = bits;
  Head head;
  head.qk = Matrix::Zero(d, d);
  head.ov = Matrix::Zero(d, d);
  head.ov(3, 0) = 1;
  head.ov(4, 1) = 1;
  head.bias = Vector::Zero(1);
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_weight(0, 4) = 1;
  m.readout_bias = Vector::Zero(1);
  FamilyMember p;
  p.family = "margin";
  p.f = m;
  p.g = m;
  p.f.layers[0].heads[0].qk(1, 2) = -margin;
  p.g.layers[0].heads[0].qk(1, 2) = -margin * (1 + eta);
  p.f.name = "margin f";
  p.g.name = "margin g";
  // g drops the 1-keys, gap γ(1 + η) below the 0-keys, from T ≥ 2^(p/(γ(1 + η))), decided as
  // every evaluator decides it (docs/theory.md §8.6). That is T* (for 0.45 = the rows' ε) when f
  // still keeps them there — an integer lies in [T_hard(g), T_hard(f)) — and f's share of 1s on
  // 1^(T−1) 0 exceeds 1/2; otherwise no closed form is claimed (0).
  const std::uint64_t t_g = FiniteDropLength(margin * (1 + eta), bits);
  const std::uint64_t t_f = FiniteDropLength(margin, bits);
  const double t = static_cast<double>(t_g), w = std::exp2(FiniteLog2Weight(-margin, 0.0, t, bits));
  const bool window = t_g > 0 && (t_f == 0 || t_f > t_g);
  p.eps = eps;
  p.first_disagreement = window && (t - 1) * w / (1 + (t - 1) * w) > 0.5 ? t_g : 0;
  p.closed_form = "⌈2^(p/(γ(1+η)))⌉ (g's drop length), 0 when f drops its keys there too";
  p.growth = "2^(p/(γ(1+η)))";
  p.gap_at_first_disagreement = p.sup_gap = std::numeric_limits<double>::quiet_NaN();
  const std::string meta = "{\"family\": \"margin\", \"margin\": " + std::to_string(margin) +
                           ", \"precision_bits\": " + std::to_string(bits) +
                           ", \"eta\": " + std::to_string(eta) + "}";
  p.f.meta_json = p.g.meta_json = meta;
  p.semantics =
      "finite attention: unnormalised weights i^(a − a*) at query position i, set to 0 at or "
      "below 2^(−p) before normalising (docs/formats.md §1); an ℓ∞ gap > ε on the readout";
  return p;
}

}  // namespace

Family MarginFamily() {
  return {
      "margin",
      "finite attention: g (logit margin γ(1+η)) drops token 1 at 2^(p/(γ(1+η))), f (margin γ) "
      "keeps it (tightness rows 4.1, margin)",
      "2^(p/γ)",
      {{"margin", 0.5, 1e-9, 0.8, false, "γ: f's logit margin, in (0, 0.8]"},
       {"bits", 4, 1, 30, true, "p: the precision bits of both"},
       {"eta", 0.05, 1e-9, 0.1, false, "η: g's margin is γ(1 + η), η in (0, 0.1]"},
       {"eps", 0.45, 1e-6, 0.5, false, "ε of the first disagreement, below 1/2", kClosed, kOpen}},
      BuildMargin,
      true};
}

}  // namespace ltsim::construct
