// Deterministic, model-aware frequency matching (docs/theory.md §2.4, Theorem 4.1): the plan behind
// `frequency`.
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What the construction decided, exposed so tests can hold it to its stated rate.
///
/// Construction (docs/theory.md §2.4, ours). For every head h of every model, K_h is the support of
/// its attention on x's far region (the maximal set under hardmax) in the joint type space,
/// S_h its far count and m_h the number of suffix slots in the support (suffix positions
/// beyond the model's own τ count too). Groups sharing a type are coupled into components
/// (union-find). Component C gets one scale λ_C = min(1, Θ / min_h S_h) over its groups with
/// more than one slot, so every such group either is copied exactly or keeps S'_h ≥ Θ;
/// c'_κ = max(1, round(λ_C c_κ)) keeps every support type present. Θ is the largest common
/// total for which every residue class of z's far region still has room; the rest of each
/// residue class is filled with x's present types outside every support (by largest
/// remainder of their counts), or, if a residue has none, added to its largest group type.
///
/// Bound (ours; the lemma ‖a/|a| − b/|b|‖₁ ≤ 2‖a − b‖₁ / max(|a|, |b|) for a = λ_C·u_x,
/// b = u_z): in the hardmax regime (every layer hardmax, or finite with T, |z| ≥ T_hard,
/// with bias_scaling none) each head satisfies
///     ‖α_h(x) − α_h(z)‖₁ ≤ η_h = 2(Σ_κ |c'_κ − λ_C c_κ| + (1 − λ_C) m_h) / max(λ_C(S_h + m_h),
///     S'_h + m_h)
///                         ≤ 2(|K_h| + m_h)/Θ   when no padding entered the group,
/// (η_h = 0 for a one-slot support: a point mass in x and in z), so sim_f ≤ L(f)·η with
/// η = max_h η_h (L(f) of docs/model.md §4.4). Hence |z| ~ Δ·D(D+τ)·(L/ε)².
struct FrequencyPlan {
  std::vector<std::uint64_t> far;  ///< c'[κ], indexed like TypeCounts::far
  double theta = 0.0;              ///< Θ
  double eta = 0.0;                ///< max_h η_h (the certificate above)
  double eta_rate = 0.0;           ///< max over scaled, unpadded groups of 2(|K_h| + m_h)/Θ
  bool hardmax_regime = false;     ///< whether the bound above applies to these models
  int components = 0;              ///< coupled groups
  int exact_components = 0;        ///< components copied exactly (λ_C = 1)
  int padded_groups = 0;           ///< groups that received padding
};

/// Plans z's far counts for x (counts in the joint view of `models`, all one-layer) and a
/// far region of `far_length` positions split into `residue_sizes`. `z_length` = |z| is
/// needed for the regime check. InputError when the far region cannot hold one token of
/// every support type.
FrequencyPlan PlanFrequencyMatching(const TypeCounts& counts,
                                    const std::vector<std::uint64_t>& residue_sizes,
                                    std::uint64_t z_length,
                                    const std::vector<const Transformer*>& models);

}  // namespace ltsim
