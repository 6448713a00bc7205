// The reference evaluator: the literal forward pass of docs/model.md §3, the oracle for every
// fast path.
#pragma once

#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// f(x) by the literal forward pass for any depth: O(n_L · T² · d) time, O(T·d) memory.
/// Tokens must be < model.alphabet (checked: a broken caller aborts).
Vector EvaluateReference(const Transformer& model, const std::vector<Token>& x);

}  // namespace ltsim
