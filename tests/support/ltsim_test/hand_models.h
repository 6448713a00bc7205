// Small models whose outputs are derived by hand (docs/theory.md §12.8): the share of 1s and
// a triangular bump on it.
#pragma once

#include "ltsim/model/transformer.h"

namespace ltsim::test {

/// S = 2, d = 3 (0: [token 0], 1: [token 1], 2: output), Δ = 1, τ = `locality` (a zero local
/// bias): keys holding a 1 have logit `one_logit`, keys holding a 0 logit 0; the output is the
/// attention on the 1s (for hardmax with one_logit = 0, the share of 1s n₁/T). `bits` is p for
/// Attention::kFinite.
Transformer ShareOfOnes(Attention attention, double one_logit, int bits = 0, int locality = 0);

/// The share of 1s plus a triangular bump h·max(0, 1 − |x − c|/w) on it (an MLP of 3 units).
Transformer Bump(double c, double w, double h);

}  // namespace ltsim::test
