// The Theorem 5.2 rows of `ltsim tightness --theorem 5.2` (docs/tightness.md §5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/construct/families.h"
#include "ltsim/study/tightness.h"

namespace ltsim {

/// The k row's grid: k = 1 … 4, or 1 … points when --points is given (at most 6).
std::vector<int> Theorem52KGrid(const TightnessOptions& o);

/// The positional-margin row's grid of 1/γ_pos: 3, 4, …, 2 + points (≥ 3, where the
/// registry's max(1/γ_pos, 3) is 1/γ_pos).
std::vector<double> Theorem52InverseMarginGrid(int points);

/// The largest T at which FindThreshold still checks every string of a two-layer pair over
/// `alphabet` tokens (T_ex of docs/theory.md §11.5: 15 for S = 2).
std::uint64_t TwoLayerExhaustiveLength(int alphabet);

/// The k row's ln N of the registry's thm5.2 at one k: max(1/γ_pos, 3)·(ln C(f) − ln ε) for
/// the k-gram model f (in logs: C overflows a double from k = 5).
double Theorem52LogPaperLength(int k, double eps);

/// The lower side of every Theorem 5.2 row: the one place where a certified two-layer first
/// disagreement enters. Today FindThreshold's exhaustive two-layer search up to T_ex (censored
/// beyond it); an exact two-layer threshold or a family with a proven T* plugs in here.
TightnessSample TwoLayerLowerSide(const TightnessOptions& o, StudyParameter parameter, int point,
                                  int member, double value, std::uint64_t seed,
                                  const FamilyMember& pair, double eps);

/// The upper side: the registry's two-layer-length of the pair at ε (docs/theory.md §4.8), as a
/// sample (value 0 when the pair is outside the class; censored above beyond 10^300).
TightnessSample TwoLayerUpperSide(const FamilyMember& pair, double eps);

/// Fits a 5.2 row from its points (lower, upper and simulator samples; a censored sample
/// censors its point, which never enters a fit) in `scale`, seeding the bootstrap by the
/// row's name. Split out so that tests can plant points.
void FitTheorem52Row(const TightnessOptions& o, FitScale scale, TightnessRow& row);

/// The rows eps, attention-norm, positional-margin and k (those in o.parameters): lower side
/// TwoLayerLowerSide, upper side TwoLayerUpperSide, the simulator on found x (balanced-blocks;
/// eps and k rows), the paper's exponent from the registry's thm5.2 and a verdict. Witnesses under
/// out/<parameter>/ when o.out is set. Identical for any o.threads.
std::vector<TightnessRow> RunTheorem52Rows(const TightnessOptions& o);

/// The two-layer model a one-layer pair stands for in Theorem 5.2's rows: `model` with a second
/// softmax layer of one head whose M and O are zero and no MLP. That layer adds O·(attention) =
/// 0 to the residual stream, so the function is the same (tested); its C(f) is the two-layer
/// formula of docs/model.md §4.7. (A layer needs at least one head in a model file.)
Transformer WithIdentitySecondLayer(const Transformer& model);

}  // namespace ltsim
