// `ltsim tightness --joint` (docs/tightness.md §3).
#pragma once

#include <vector>

#include "ltsim/study/tightness.h"

namespace ltsim {

/// ln T* = a + Σ_j b_j·ln x_j over the uncensored lower-side samples of `rows` but margin
/// (log-linear in 1/γ), each sample with its own pair's ε, L, Δ, S and τ; one intercept per
/// family (FitJoint).
TightnessJoint FitJointRows(const std::vector<TightnessRow>& rows);

}  // namespace ltsim
