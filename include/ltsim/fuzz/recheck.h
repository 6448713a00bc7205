// High-precision recheck of a case's refutations before they are reported (docs/design.md §5).
#pragma once

#include "ltsim/fuzz/case_runner.h"

namespace ltsim {

/// For every property of `result` that is checked and refuted in double precision, recomputes
/// its observed value and bound in PreciseReal (eval/precise.h, 50 digits) from x, the case's
/// z and the models, and sets outcome.recheck; an unconfirmed refutation is set to hold.
///   sandwich        gap_x vs sim_f + gap_z + sim_g (the triangle inequality: exactly, it
///                   cannot fail, so any double refutation is unconfirmed);
///   transfer        gap_z ≤ ε (premise, rechecked) ⇒ gap_x vs ε + sim_f + sim_g;
///   frequency-rate  sim_f vs L(f)·η and sim_g vs L(g)·η, with L and η the double values
///                   (they are the claim under test; their rounding is ≪ the 1e-12 slack);
///   finite-hardmax  ‖f(x) − twin(x)‖_∞ vs 1e-9·(1 + ‖f(x)‖_∞) for each finite model;
///   lemma53         |avg_x p − avg_z p| vs C·(G + L)(τ + 1)/n^(1/3), the test function's
///                   parameters (doubles) taken as they are;
///   two-layer-bound sim vs B(f, x, z) (docs/theory.md §4.7) for each two-layer model, with B
///                   the double value (the claim under test).
/// The verdict uses PreciseLessOrClose, the double check's slack. Skipped (never confirmed)
/// when a two-layer model's x is longer than kPreciseTwoLayerLimit. Pure, any thread.
void RecheckRefutations(const CaseSpec& spec, CaseResult& result);

}  // namespace ltsim
