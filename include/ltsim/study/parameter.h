// The theorems a study measures and the parameters it varies, with one name table each
// (their names in flags, JSON, CSV and seeds; docs/tightness.md, docs/statistics.md).
#pragma once

#include "ltsim/io/names.h"

namespace ltsim {

/// The statement a tightness table measures: Theorem 4.1 (one layer), 4.2 (one layer, average
/// case), 5.2 (two layers), Lemma 5.3 (the statistic error's rate).
enum class Theorem { k41, k42, k52, k53 };

inline constexpr io::NameTable<Theorem, 4> kTheoremNames{
    "theorem",
    {{{Theorem::k41, "4.1"}, {Theorem::k42, "4.2"}, {Theorem::k52, "5.2"}, {Theorem::k53, "5.3"}}}};

/// A parameter a sweep or a tightness row varies: Theorem 4.1's ε, the weight scale (via L),
/// Δ, |Σ|, τ and the margin γ (with p bits); Lemma 5.3's length n of the statistic; Theorem
/// 5.2's k-gram order k and positional margin γ_pos; Theorem 4.2's Dirichlet α₀.
enum class StudyParameter {
  kEps,
  kScale,
  kPeriod,
  kAlphabet,
  kLocality,
  kMargin,
  kN,
  kK,
  kPositionalMargin,
  kAttentionNorm,
  kAlpha0
};

inline constexpr io::NameTable<StudyParameter, 11> kStudyParameterNames{
    "parameter",
    {{{StudyParameter::kEps, "eps"},
      {StudyParameter::kScale, "scale"},
      {StudyParameter::kPeriod, "period"},
      {StudyParameter::kAlphabet, "alphabet"},
      {StudyParameter::kLocality, "locality"},
      {StudyParameter::kMargin, "margin"},
      {StudyParameter::kN, "n"},
      {StudyParameter::kK, "k"},
      {StudyParameter::kPositionalMargin, "positional-margin"},
      {StudyParameter::kAttentionNorm, "attention-norm"},
      {StudyParameter::kAlpha0, "alpha0"}}}};

/// The parameter's name (kStudyParameterNames).
inline const char* ParameterName(StudyParameter p) { return kStudyParameterNames.Name(p); }

/// Whether the parameter takes integer values (|Σ|, Δ, τ, k).
inline bool IsIntegral(StudyParameter p) {
  return p == StudyParameter::kAlphabet || p == StudyParameter::kPeriod ||
         p == StudyParameter::kLocality || p == StudyParameter::kK;
}

}  // namespace ltsim
