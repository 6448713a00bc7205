// The bump and margin pairs of docs/tightness.md §2.
#include "ltsim/study/tightness_families.h"

#include <cmath>
#include <string>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

Transformer Frame(int alphabet, int width, int period, int locality) {
  Transformer m;
  m.alphabet = alphabet;
  m.width = width;
  m.period = period;
  m.locality = locality;
  m.embedding = Matrix::Zero(alphabet, width);
  m.positional = Matrix::Zero(period, width);
  return m;
}

}  // namespace

FamilyPair MakeBumpPair(int alphabet, int period, int locality, double slope, double eps,
                        double offset) {
  if (alphabet < 2 || alphabet > 64) throw InputError("bump family: alphabet must be in [2, 64]");
  if (period < 1 || period > 64) throw InputError("bump family: period must be in [1, 64]");
  if (locality < 0 || locality > 10) throw InputError("bump family: locality must be in [0, 10]");
  if (!(slope > 0) || !std::isfinite(slope)) throw InputError("bump family: slope must be > 0");
  if (!(eps > 0 && eps < 1)) throw InputError("bump family: eps must be in (0, 1)");
  const double w = 2 * eps / slope;
  const double centre = w * (1 + offset);
  if (!(offset >= 0 && offset < 1) || centre + w >= 1)
    throw InputError(
        "bump family: the bump of half-width 2·eps/slope does not fit in [0, 1] "
        "(raise the slope)");
  // Dimensions: tokens [0, S), attended shares [S, 2S), constant 2S, residue-0 flag 2S+1,
  // bump 2S+2.
  const int S = alphabet, one = 2 * S, flag = 2 * S + 1, bump = 2 * S + 2, d = 2 * S + 3;
  Transformer m = Frame(S, d, period, locality);
  for (int s = 0; s < S; ++s) m.embedding(s, s) = 1;
  for (int r = 0; r < period; ++r) {
    m.positional(r, one) = 1;
    if (r == 0 && period > 1) m.positional(r, flag) = 1;
  }
  Layer layer;
  layer.attention = Attention::kHardmax;
  Head head;
  head.qk = Matrix::Zero(d, d);
  head.qk(flag, one) = 1;  // key y_jᵀ M y_i = flag(j)·const(i): residue-0 keys win
  head.ov = Matrix::Zero(d, d);
  for (int s = 0; s < S; ++s) head.ov(S + s, s) = 1;
  head.bias = Vector::Zero(locality + 1);
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_weight(0, S + 1) = 1;
  m.readout_weight(0, bump) = 1;
  m.readout_bias = Vector::Zero(1);

  FamilyPair p;
  p.family = "bump";
  p.f = m;
  p.f.name = "bump f";
  p.g = m;
  p.g.name = "bump g";
  Mlp mlp;
  mlp.in = Matrix::Zero(3, d);
  for (int k = 0; k < 3; ++k) mlp.in(k, S + 1) = 1;
  mlp.in_bias = Vector(3);
  mlp.in_bias << -(centre - w), -centre, -(centre + w);
  mlp.out = Matrix::Zero(d, 3);
  mlp.out(bump, 0) = slope;
  mlp.out(bump, 1) = -2 * slope;
  mlp.out(bump, 2) = slope;
  p.g.layers[0].mlp = mlp;
  // One token 1 among the n = ⌊T/Δ⌋ attended keys gives μ₁ = 1/n; the first n with
  // 1/n < c + ε/h (and 1/n > c − ε/h, true since consecutive 1/n are closer than 2ε/h there).
  const double n = std::floor(1 / (centre + eps / slope)) + 1;
  p.predicted = n * period;
  const std::string meta =
      "{\"family\": \"bump\", \"alphabet\": " + std::to_string(S) +
      ", \"period\": " + std::to_string(period) + ", \"locality\": " + std::to_string(locality) +
      ", \"slope\": " + std::to_string(slope) + ", \"eps\": " + std::to_string(eps) +
      ", \"offset\": " + std::to_string(offset) + "}";
  p.f.meta_json = p.g.meta_json = meta;
  p.semantics =
      "hardmax attention with tie tolerance θ = 1e-9 over the keys at positions ≡ 0 (mod Δ), "
      "positions 1-based, the query among the keys; an ℓ∞ gap > ε on the readout";
  return p;
}

FamilyPair MakeMarginPair(double margin, int bits, double eta) {
  if (!(margin > 0 && margin <= 0.8)) throw InputError("margin family: γ must be in (0, 0.8]");
  if (bits < 1 || bits > 30) throw InputError("margin family: bits must be in [1, 30]");
  if (!(eta > 0 && eta <= 0.1)) throw InputError("margin family: η must be in (0, 0.1]");
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
  FamilyPair p;
  p.family = "margin";
  p.f = m;
  p.g = m;
  p.f.layers[0].heads[0].qk(1, 2) = -margin;
  p.g.layers[0].heads[0].qk(1, 2) = -margin * (1 + eta);
  p.f.name = "margin f";
  p.g.name = "margin g";
  p.predicted = std::ceil(std::exp2(bits / (margin * (1 + eta))));
  const std::string meta = "{\"family\": \"margin\", \"margin\": " + std::to_string(margin) +
                           ", \"precision_bits\": " + std::to_string(bits) +
                           ", \"eta\": " + std::to_string(eta) + "}";
  p.f.meta_json = p.g.meta_json = meta;
  p.semantics =
      "finite attention: unnormalised weights i^(a − a*) at query position i, set to 0 at or "
      "below 2^(−p) before normalising (docs/formats.md §1); an ℓ∞ gap > ε on the readout";
  return p;
}

}  // namespace ltsim
