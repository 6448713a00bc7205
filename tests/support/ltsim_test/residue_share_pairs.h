// The benchmark pairs of the one-layer threshold (tools/bench/bench_threshold.cpp) and its
// tests: per-residue shares against four kinds of g (docs/theory.md §11.7). Header-only, so the
// benchmarks use it without the property-test library.
#pragma once

#include "ltsim/model/transformer.h"

namespace ltsim::test {

// S = 2, period P (D* = 2P). f: one head per residue r that attends to the keys at residue r
// and writes their share of 1s, averaged over the heads (f = mean_r share_r). The kinds of g,
// none of which disagrees with its f at ε = 0.5 (the search has to certify every length):
//   kLinear: f's heads, readout ×1.4 (gap 0.4·mean ≤ 0.4);
//   kBump: f's heads plus a triangular MLP bump of height 0.3 and half-width 0.05 at c = φ − 1
//     on the mean (what f and g share cancels in the bound);
//   kGlobalBump: one head over every far key (the overall share, which equals the mean of
//     the residues' shares only when they have equal sizes) plus the bump: the heads differ,
//     so the bound has to see that both read the same counts;
//   kSoftmaxTilt: f and g softmax (every key in every head, the residue's keys e times
//     heavier), g's keys of token 1 e^0.02 times heavier still, plus the bump.
enum Kind { kLinear = 1, kBump, kGlobalBump, kSoftmaxTilt };

/// f (is_g false) or g of the kind, at period `period` (S = 2, width 2 + period + 1).
inline Transformer ResidueShareModel(int period, bool is_g, Kind kind) {
  const bool bump = is_g && kind != kLinear;
  const bool global = is_g && kind == kGlobalBump;
  const double tilt = is_g && kind == kSoftmaxTilt ? 0.02 : 0.0;
  const int S = 2, d = S + period + 1, out = d - 1;
  Transformer m;
  m.name = is_g ? "bench-g" : "bench-f";
  m.alphabet = S;
  m.width = d;
  m.period = period;
  m.locality = 0;
  m.embedding = Matrix::Zero(S, d);
  for (int s = 0; s < S; ++s) m.embedding(s, s) = 1.0;
  m.positional = Matrix::Zero(period, d);
  for (int r = 0; r < period; ++r) m.positional(r, S + r) = 1.0;
  Layer layer;
  layer.attention = kind == kSoftmaxTilt ? Attention::kSoftmax : Attention::kHardmax;
  for (int r = 0; r < (global ? 1 : period); ++r) {
    Head head{Matrix::Zero(d, d), Matrix::Zero(d, d), Vector::Zero(1)};
    // logit 1 on the residue-r keys (every key for the global head), + tilt on token 1
    for (int q = 0; q < period; ++q)
      if (global || q == r)
        for (int s = 0; s < S; ++s) head.qk(S + q, s) = 1.0;
    for (int s = 0; s < S; ++s) head.qk(1, s) += tilt;
    head.ov(out, 1) = global ? 1.0 : 1.0 / period;
    layer.heads.push_back(head);
  }
  if (bump) {
    const double c = 0.6180339887498949, w = 0.05, h = 0.3;
    Mlp mlp{Matrix::Zero(3, d), Vector(3), Matrix::Zero(d, 3)};
    for (int i = 0; i < 3; ++i) mlp.in(i, out) = 1.0;
    mlp.in_bias << -(c - w), -c, -(c + w);
    mlp.out(out, 0) = h / w;
    mlp.out(out, 1) = -2 * h / w;
    mlp.out(out, 2) = h / w;
    layer.mlp = mlp;
  }
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, d);
  m.readout_weight(0, out) = is_g && kind == kLinear ? 1.4 : 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, m.name);
  return m;
}

/// The kind's name in benchmark labels.
inline const char* KindName(Kind kind) {
  switch (kind) {
    case kLinear:
      return "linear g";
    case kBump:
      return "shared bump";
    case kGlobalBump:
      return "global head + bump";
    case kSoftmaxTilt:
      return "softmax, tilted g + bump";
  }
  return "";
}

}  // namespace ltsim::test
