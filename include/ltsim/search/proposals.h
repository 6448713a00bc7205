// The moves of the counterexample search: Gaussian steps, and structural moves that build the
// hard cases of docs/theory.md §2.4 (logit ties, suffix ties, moderate maximal-set totals).
#pragma once

#include <string>
#include <vector>

#include "ltsim/io/names.h"
#include "ltsim/search/search.h"

namespace ltsim {

/// One kind of proposal. Model moves act on the first layer of one-layer models; "both"
/// means f and g each get the move computed from their own weights.
enum class ProposalKind {
  kGaussian,    ///< g (and f with perturb_f) += σ·N(0, 1) on every weight, grid-rounded
  kQkStep,      ///< the same step on one head's qk and bias only (L unchanged)
  kLogitTie,    ///< both: a present non-maximal far type's logit := the row maximum a*
                ///< (enlarges K*_h; the slots at a* keep their logits)
  kLogitDrop,   ///< both: a far type of K*_h drops 1–4 grid steps below a* (leaves K*_h)
  kSuffixTie,   ///< both: φ_h[t] set so suffix slot t ties the far maximum (raises m_h)
  kCopyRow,     ///< both: embedding row b := row a, or rows a, b swapped
  kRescale,     ///< both: one head's ov, or the readout W, ×2^k with k ∈ ±{1, 2, 3}; or
                ///< both readouts scaled so max(L(f), L(g)) = ε·2^u, u ∈ {−1, …, 6}
  kXModerate,   ///< x: one token's far runs rescaled to a total in 1..64 (a moderate S_h)
  kXRare,       ///< x: one token inserted 0–7 positions before the τ+1 suffix
  kXRemoveRun,  ///< x: one far run deleted
  kXRunCount,   ///< x: one far run's count ×¼, ×½, ×2 or ×4
  kXReseed,     ///< x: a fresh spec seed (¼: also a fresh family; ¼: fresh α, noise, pattern,
                ///< parents); x_runs dropped
};

/// Number of ProposalKind values.
inline constexpr int kProposalKinds = 12;

/// The kinds' names in the search's JSON output and table (proposed_by_kind, accepted_by_kind).
inline constexpr io::NameTable<ProposalKind, kProposalKinds> kProposalKindNames{
    "proposal kind",
    {{{ProposalKind::kGaussian, "gaussian"},
      {ProposalKind::kQkStep, "qk-step"},
      {ProposalKind::kLogitTie, "logit-tie"},
      {ProposalKind::kLogitDrop, "logit-drop"},
      {ProposalKind::kSuffixTie, "suffix-tie"},
      {ProposalKind::kCopyRow, "copy-row"},
      {ProposalKind::kRescale, "rescale"},
      {ProposalKind::kXModerate, "x-moderate"},
      {ProposalKind::kXRare, "x-rare"},
      {ProposalKind::kXRemoveRun, "x-remove-run"},
      {ProposalKind::kXRunCount, "x-run-count"},
      {ProposalKind::kXReseed, "x-reseed"}}}};

/// kProposalKindNames.Name(kind).
inline const char* ProposalKindName(ProposalKind kind) { return kProposalKindNames.Name(kind); }

/// The proposal distribution of a proposal set, as weights indexed by ProposalKind:
///   mixed    gaussian 3, qk-step 1, logit-tie 3, logit-drop 1, suffix-tie 2, copy-row 1,
///            rescale 1, and the x moves 2, 1, 1, 1, 1 (x-moderate … x-reseed);
///   gaussian gaussian 1 only;
///   logits   mixed without gaussian, copy-row and rescale (moves that change L).
/// The x moves get weight 0 when search_x is false.
std::vector<double> ProposalWeights(ProposalSet proposals, bool search_x);

/// Draws a kind from ProposalWeights with Boost.Random (a fixed number of draws).
ProposalKind DrawProposal(const std::vector<double>& weights, FuzzEngine& engine);

/// Applies one move to `candidate` in place, drawing its details from `engine`. Returns false
/// (candidate unchanged) when the move does not apply, e.g. no non-maximal type is present,
/// the tie's linear system has no exact solution, or an edit would take |x| outside
/// [max(10, n), options.input.length].
bool ApplyProposal(ProposalKind kind, const SearchOptions& options, SearchCandidate& candidate,
                   FuzzEngine& engine);

/// x of the candidate as runs (x_runs, or its spec's string read once).
std::vector<Run> CandidateRuns(const SearchCandidate& candidate);

}  // namespace ltsim
