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

/// Sup-norm distance ‖a − b‖_∞ (docs/model.md §3: the distance between outputs).
double SupDistance(const Vector& a, const Vector& b);

}  // namespace ltsim
