// What floating-point evaluation of a one-layer model can get wrong, bounded from the weights'
// magnitudes (docs/theory.md §8.7): an a-priori forward error bound on the outputs, and the
// test of whether each discrete decision (a hardmax tie, a `finite` cut-off) is certain.
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// The unit roundoff of a double, 2^−53.
inline constexpr double kDoubleUnit = 0x1p-53;
/// The unit roundoff the bounds use for the 50-digit evaluator (eval/precise.h): its 168-bit
/// mantissa gives 2^−168, and Boost's exp and log are within a few ulps, so 2^−160 covers both.
inline constexpr double kPreciseUnit = 0x1p-160;

/// The magnitudes of a one-layer model that bound its rounding errors at lengths ≤ max_length,
/// for an arithmetic with unit roundoff `unit` and attention sums of at most `terms` summands
/// (D + τ + 1 for the evaluators that work from type counts). Built once per model.
struct OneLayerRounding {
  double unit = kDoubleUnit;
  /// δ: every computed logit is within δ of the exact logit of the model's weights.
  double logit = 0.0;
  /// G: every logit (computed or exact) has |a| ≤ G.
  double logit_scale = 0.0;
  /// The largest |output| (computed or exact) over every string: W's row sums times the
  /// activations' bound plus |c|.
  double output_scale = 0.0;
  // What OutputBound combines (docs/theory.md §8.7): input-vector and attention-sum bounds.
  double input = 0.0;        ///< Y: max over types and coordinates of |E_s| + |P_r|
  double input_error = 0.0;  ///< e₀ = u·Y
  int depth = 0;             ///< K: the longest chain of roundings in one output
  double log_length = 0.0;   ///< ln max_length
  const Transformer* model = nullptr;
  // Row sums of |·| (∞-norms of |M|): O_h per head, the MLP's A and B, the readout W; max |b|, |c|.
  std::vector<double> value_norms;
  double mlp_in = 0.0, mlp_out = 0.0, mlp_bias = 0.0, readout = 0.0, readout_bias = 0.0;
  bool mlp = false;
};

/// The magnitudes of `model` (one layer) for lengths ≤ max_length.
OneLayerRounding MakeOneLayerRounding(const Transformer& model, std::uint64_t max_length,
                                      std::uint64_t terms, double unit = kDoubleUnit);

/// A bound on ‖f̂(x) − f(x)‖_∞ for any x of length T ≤ max_length whose every attention decision
/// is certain (DecisionCertain): f̂ the computed outputs (any order of the sums), f the exact
/// outputs of the model's weights (docs/theory.md §8.7). +∞ when the magnitudes overflow.
double OutputBound(const OneLayerRounding& rounding, std::uint64_t length);

/// Whether the rule of docs/model.md §3 decides a key with computed logit `a` the same way for
/// the exact logits, when the computed maximum is `a_max` and every logit is within δ of the
/// exact one: hardmax |(a* − a) − θ| > 2δ + rounding; finite |log₂T·(a* − a) − p| > 2δ·log₂T +
/// rounding, at every length in [t_lo, t_hi] (the logits fixed); softmax always.
bool DecisionCertain(const OneLayerRounding& rounding, const Layer& layer, double a, double a_max,
                     double t_lo, double t_hi);

/// The bound for one statistic of the model's own view: +∞ when some decision of some head at
/// the last position is not certain, else OutputBound.
double StatisticErrorBound(const OneLayerRounding& rounding, const TypeCounts& counts);

}  // namespace ltsim
