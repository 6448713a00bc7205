// What the family files share (private to construct/): the verdict's constants, small model
// parts, and the registry entry each family file defines (docs/families.md).
#pragma once

#include <string>

#include "construct/skeleton.h"
#include "ltsim/construct/families.h"

namespace ltsim::construct {

// Relative distance a deciding comparison of a closed form must keep from its boundary, so
// that double rounding in the evaluators (and a stated comparison tolerance in `threshold`)
// cannot move T*: parameters closer to a boundary are refused.
inline constexpr double kBoundaryMargin = 1e-6;
// The verdict of `threshold` (kThresholdGapTolerance, threshold/threshold.h): a statistic
// disagrees when its gap exceeds ε + 1e-9·max(1, ‖f‖_∞, ‖g‖_∞).
inline constexpr double kVerdictTolerance = 1e-9;
// Distance in gap a closed form keeps from that verdict's boundary (bump): a hundred times below
// the tolerance, far above the evaluators' rounding of gaps of size ≤ 100·ε.
inline constexpr double kBoundaryGap = 1e-11;

// The ends of a FamilyParameter's range: `{name, default, min, max, integer, help, kOpen,
// kClosed}` excludes min.
inline constexpr bool kOpen = true, kClosed = false;

inline Mlp OneUnit(int width) {
  return {Matrix::Zero(1, width), Vector::Zero(1), Matrix::Zero(width, 1)};
}

/// A model with zero embedding and positional tables and no layers (the tightness pairs).
inline Transformer Frame(int alphabet, int width, int period, int locality) {
  Transformer m;
  m.alphabet = alphabet;
  m.width = width;
  m.period = period;
  m.locality = locality;
  m.embedding = Matrix::Zero(alphabet, width);
  m.positional = Matrix::Zero(period, width);
  return m;
}

/// One ReLU unit θ − a·u − 2θ·[x_T = 1] of a two-token model (the query token's indicator at
/// coordinate 1, u at coordinate `input`) written to coordinate `out`: it fires only when the
/// query token is 0 and a·u < θ (positional-margin, two-layer-margin).
inline Mlp QueryGatedUnit(int width, int input, double slope, double theta, int out) {
  Mlp mlp = OneUnit(width);
  mlp.in(0, input) = -slope;
  mlp.in(0, 1) = -2 * theta;  // switches the unit off when the query token is 1
  mlp.in_bias(0) = theta;
  mlp.out(out, 0) = 1;
  return mlp;
}

/// A zero-readout pair: f is `model` read also through coordinate `unit` (readout weight 1
/// there), g is `model` with a zero readout, so f − g is that coordinate (plus f's other readout
/// weights) and the pair disagrees where it exceeds ε (induction, leak, nested,
/// positional-margin, two-layer-margin).
struct ZeroReadoutPair {
  Transformer f, g;
};
inline ZeroReadoutPair MakeZeroReadoutPair(const Transformer& model, int unit) {
  ZeroReadoutPair pair{model, model};
  pair.f.readout_weight(0, unit) = 1.0;
  pair.g.readout_weight.setZero();
  return pair;
}

inline double Get(const FamilyValues& v, const std::string& name) { return v.at(name); }

/// The ε parameter most families share.
inline FamilyParameter EpsParameter() {
  return {"eps", 0.05, 1e-6, 1.0, false, "ε of the first disagreement"};
}

/// The registry entries, one per family file, in the registry's order (registry.cpp).
Family BumpFamily();
Family PrecisionFamily();
Family NestedFamily();
Family InductionFamily();
Family LeakFamily();
Family OffsetBumpFamily();
Family MarginFamily();
Family PositionalMarginFamily();
Family TwoLayerMarginFamily();
Family AverageBumpFamily();

/// The offset-bump pair (offset_bump.cpp), which the average-bump pair rescales.
FamilyMember OffsetBumpPair(int alphabet, int period, int locality, double slope, double eps,
                            double offset);

}  // namespace ltsim::construct
