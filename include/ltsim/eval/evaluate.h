// Evaluation of a model on a source, picking the fastest exact evaluator that applies.
#pragma once

#include <cstdint>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// Longest string the reference evaluator accepts when no fast path applies.
inline constexpr std::uint64_t kReferenceLimit = 20000;

/// f(x): one-layer models stream once through the source, two-layer models (S·Δ ≤
/// kTwoLayerMaxTypes) two or three times (memory independent of T in both); deeper models
/// use the reference evaluator up to kReferenceLimit tokens (InputError beyond).
/// A model/string alphabet mismatch is an InputError naming the position.
Vector Evaluate(const Transformer& model, const Source& x);

/// f(x) with its rounding accounted for (docs/theory.md §8.7).
struct CheckedOutput {
  Vector output;
  /// The outputs are the 50-digit evaluation rounded to doubles, because the double evaluation's
  /// rounding bound exceeded kEvaluateTolerance·max(1, ‖f(x)‖_∞) (one-layer models).
  bool precise = false;
  /// A bound on ‖output − f(x)‖_∞ for the exact f(x) of the weights (+∞ when a decision may
  /// fall otherwise even in 50 digits; NaN for models of two or more layers, whose rounding is
  /// not bounded).
  double error_bound = 0.0;
};

/// Relative size at which a double evaluation's rounding bound is acceptable: the 1e-9 of the
/// project's rechecks (docs/theory.md §8.3).
inline constexpr double kEvaluateTolerance = 1e-9;

/// Evaluate, and for one-layer models the rounding bound of docs/theory.md §8.7 at x's
/// statistic: when it exceeds kEvaluateTolerance·max(1, ‖f(x)‖_∞) the outputs are taken from
/// the 50-digit evaluator (same counting pass). Deeper models: Evaluate, bound NaN.
CheckedOutput EvaluateChecked(const Transformer& model, const Source& x);

/// Sup-norm distance ‖a − b‖_∞ (docs/model.md §3: the distance between outputs).
double SupDistance(const Vector& a, const Vector& b);

}  // namespace ltsim
