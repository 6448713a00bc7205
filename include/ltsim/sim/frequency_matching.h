// Deterministic, model-aware frequency matching (docs/theory.md §2.4, Theorem 4.1): the plan behind
// `frequency`, with a length bounded uniformly in |x|.
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What the construction decided, exposed so tests can hold it to its stated rate.
///
/// Construction (docs/theory.md §2.4, ours). For every distinct head h of the models, K_h is
/// the support of its attention on x's far region (the maximal set under hardmax) in the joint
/// type space, S_h its far count and m_h the number of suffix slots in the support. At a
/// threshold δ, type κ is *heavy* in h when c_κ ≥ δ·S_h; the heavy types of a head share one
/// scale λ_C (union-find over heads), λ_C ≥ min(1, Θ / S_h) for each of its heads, and a type
/// of component C' that is light in a head of C raises λ_C to λ_C'·c_κ/(δ·S_h), so that its share
/// of the head's z-total stays below δ. A type heavy nowhere takes the smallest scale of its
/// heads. c'_κ = max(1, round(λ c_κ)) keeps every support type present. Θ is the largest value
/// for which every residue class of z's far region still has room; the rest of each class is
/// filled with x's present types outside every support (its fillers, by largest remainder), or,
/// when a class has none, added to its largest support type (padding). When Δ* > 1 and a class
/// was padded, balanced plans are tried as well (step 5), at Θ, Θ/2, … ≥ 1: every scale below ν
/// is raised to ν, the largest ν ≤ 1 that fits, and in each class without a filler the elastic
/// types (λ_κ ≤ ν, ν·c_κ ≥ S + 1) share its room by largest remainder of their x-counts, ν_r·c_κ
/// each, with the balance e = max_r |ν_r − ν|/ν. δ = 0 is one scale per coupled support; the plan
/// kept is the one with the smallest certificate over δ ∈ {0, 2^−k} (and Θ, ν for step 5).
///
/// Certificate: in the hardmax regime (every layer hardmax, or finite with T_hard ≤ T, |z| <
/// T_split, with bias_scaling none) η = max_h ‖α_h(x) − α_h(z)‖₁ computed exactly from the
/// counts for the hardmax attention (plus tie_slack for finite models with near-ties), and
///     η_h ≤ 2(|K_h| + m_h)/Θ + 4·F_h·δ + 2e      when no padding entered the group,
/// F_h the types of h outside its component (e = 0 without step 5). The total length is
/// bounded uniformly in |x|: Σ c' ≤ D·(Θ·3^(H/3)·δ^−(H−1) + 1) for H distinct heads, and at
/// |z| = O(Δ·D(D + τ)·(24·D)^(H−1)·(L/ε)^H) (registry entry frequency-length) the plan kept
/// reaches η ≤ ε/L for every Δ* (docs/theory.md §2.4: with Δ* > 1 through step 5's e ≤ ε/(6L)).
struct FrequencyPlan {
  std::vector<std::uint64_t> far;  ///< c'[κ], indexed like TypeCounts::far
  double theta = 0.0;              ///< Θ
  double delta = 0.0;              ///< δ of the plan kept (0: one scale per coupled support)
  double eta = 0.0;                ///< max_h ‖α_h(x) − α_h(z)‖₁ (the certificate above)
  double eta_rate = 0.0;           ///< max over unpadded groups of 2(|K_h| + m_h)/Θ + 4F_hδ + 2e
  double nu = 0.0;              ///< ν of a step-5 plan (0: steps 2–4's plan; 1: no scale raised)
  double balance = 0.0;         ///< e = max_r |ν_r − ν|/ν over the balanced residue classes
  int balanced_residues = 0;    ///< residue classes whose room the elastic types shared
  bool hardmax_regime = false;  ///< whether the certificate applies to these models
  /// For `finite` models whose near-ties ϑ > 0 (docs/theory.md §2.6): the largest over them of
  /// 2·tanh(ϑ ln|x|/4) + 2·tanh(ϑ ln|z|/4), what their attention may differ from the hardmax
  /// attention `eta` is computed for; the simulator certifies η = eta + tie_slack. 0 otherwise.
  double tie_slack = 0.0;
  int groups = 0;            ///< distinct heads (supports) of the models on x
  int components = 0;        ///< scale classes
  int exact_components = 0;  ///< components copied exactly (λ_C = 1)
  int padded_groups = 0;     ///< groups that received padding
};

/// Plans z's far counts for x (counts in the joint view of `models`, all one-layer) and a
/// far region of `far_length` positions split into `residue_sizes`. `z_length` = |z| is
/// needed for the regime check. `balance` false leaves out step 5 (the construction before it,
/// kept so that tests can show what it fixes). InputError when the far region cannot hold one
/// token of every support type.
FrequencyPlan PlanFrequencyMatching(const TypeCounts& counts,
                                    const std::vector<std::uint64_t>& residue_sizes,
                                    std::uint64_t z_length,
                                    const std::vector<const Transformer*>& models,
                                    bool balance = true);

}  // namespace ltsim
