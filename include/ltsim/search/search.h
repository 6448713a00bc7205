// Targeted search for counterexamples: hill climbing over model pairs, then shrinking
// (docs/theory.md §7.3).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/core/progress.h"
#include "ltsim/core/work.h"
#include "ltsim/gen/input_generator.h"
#include "ltsim/gen/model_generator.h"
#include "ltsim/io/json.h"
#include "ltsim/io/names.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What a search maximises (SearchOptions below says what each one is).
enum class SearchObjective { kNeededLength, kSimRatio, kSimOverEta, kNeeded, kDisagreementLength };

/// The objectives' names in witness files, JSON output and on the command line (`--objective`).
inline constexpr io::NameTable<SearchObjective, 5> kSearchObjectiveNames{
    "search objective",
    {{{SearchObjective::kNeededLength, "needed-length"},
      {SearchObjective::kSimRatio, "sim-ratio"},
      {SearchObjective::kSimOverEta, "sim-over-eta"},
      {SearchObjective::kNeeded, "needed"},
      {SearchObjective::kDisagreementLength, "disagreement-length"}}}};

/// sim-ratio and sim-over-eta: measured on the frequency simulator's z at |z| = n ≤ |x|.
inline bool IsSimObjective(SearchObjective objective) {
  return objective == SearchObjective::kSimRatio || objective == SearchObjective::kSimOverEta;
}

/// The proposal distributions a climb draws from (proposals.h: ProposalWeights).
enum class ProposalSet { kMixed, kGaussian, kLogits };

/// Their names on the command line (`--proposals`) and in JSON output.
inline constexpr io::NameTable<ProposalSet, 3> kProposalSetNames{
    "proposal set",
    {{{ProposalSet::kMixed, "mixed"},
      {ProposalSet::kGaussian, "gaussian"},
      {ProposalSet::kLogits, "logits"}}}};

/// What a search maximises and how. The objectives (kSearchObjectiveNames):
///   needed-length  NeededLength(f, g, x, ε) / max(frequency-length [ours], τ + 2) at the
///                  pair's constants (docs/theory.md §2.4: the construction's own |z| ~
///                  Δ·D(D+τ)·(L/ε)²; above 1, the construction needs longer strings than it
///                  claims). τ + 2 is the needed-length grid's floor, so L → 0 cannot inflate
///                  the ratio. The needed length is capped at |x|: a capped value is a lower
///                  bound.
///   sim-ratio      max(sim_f, sim_g) / ε of the frequency simulator at |z| = n.
///   sim-over-eta   max over f, g of sim / (L·η_achieved) at |z| = n (docs/theory.md §2.3: ‖f(x) −
///                  f(z)‖ ≤ L·η; above 1 refutes the Lipschitz bound). 0 where L·η = 0.
///   needed         NeededLength(f, g, x, ε) itself (capped at |x|): the sweeps' worst case,
///                  searched with `proposals = "logits"` so L stays the generated pair's.
///   disagreement-length
///                  T*/N: T* the first length ≤ n at which some string has ‖f(x) − g(x)‖_∞ > ε
///                  (FindThreshold, threshold/threshold.h: every sufficient statistic, exact for
///                  one-layer pairs; x plays no part), N = max(2^(p/γ) when a layer is finite,
///                  L²Δ⁷S⁶τ²/ε², 1), Thm 4.1's length with O-constants 1 (docs/theory.md
///                  §2.1). Above 1:
///                  f and g agree within ε on every string up to N and disagree later — with
///                  the theorem's O(ε) taken as ε, evidence against N. 0 when they agree up to n.
/// A pair for which the simulator cannot build z scores −∞ (never accepted).
///
/// Proposals (search_proposals.h): `mixed` draws Gaussian steps and structural moves (logit
/// ties, suffix ties, row copies, head rescaling) and, with `search_x`, edits of x;
/// `gaussian` only the Gaussian step on every weight (the pre-structural search); `logits`
/// only moves that leave L(f), L(g) unchanged (qk and bias steps, ties, edits of x).
struct SearchOptions {
  SearchObjective objective = SearchObjective::kSimRatio;
  double eps = 0.01;
  std::uint64_t n = 200;  ///< |z| of sim-ratio and sim-over-eta; disagreement-length's cap
  int restarts = 4;       ///< R independent hill climbs
  int iterations = 20;    ///< I proposals per restart
  std::uint64_t seed = 0;
  int threads = 0;  ///< oneTBB arena size; 0 = all cores. Never changes the result.
  /// Who computes the restarts (core/work.h; null: this process). Under MPI every rank calls
  /// RunSearch; only the reducing rank's result is filled in (the others return no restarts).
  ItemDealer* dealer = nullptr;
  /// Called with (restarts finished, R) as the climbs end; never changes the result.
  ProgressCallback progress;
  double step = 0.25;  ///< σ of the Gaussian step on every weight
  /// Each step is rounded to a multiple of this (0: no rounding). Dyadic steps keep grid
  /// pairs on a dyadic grid, so exact logit ties (large maximal sets) survive the climb.
  double step_grid = 0.125;
  bool perturb_f = false;                       ///< also step f's weights (otherwise only g moves)
  ProposalSet proposals = ProposalSet::kMixed;  ///< mixed, gaussian or logits (above)
  bool search_x = true;                         ///< also propose edits of x (its spec or its runs)
  /// > 0: every pair has γ(f) = γ(g) = margin (margin_pair.h): the start is drawn with it and
  /// every model move is followed by SetLogitMargin (a move after which no logit gap is left
  /// is refused). 0: the margin is free.
  double margin = 0.0;
  double delta = 0.01;  ///< the starting pair: g = f + δ·N(0, 1) (perturbed kind)
  InputSpec input = [] {
    InputSpec spec;
    spec.kind = InputKind::kStress;
    spec.length = 2000;
    return spec;
  }();  ///< x's spec; its seed is drawn per restart, its alphabet is the model's
  /// One layer (forced), grid weights for the starting pair; attention hardmax unless set (the
  /// margin sweep uses `finite`).
  ModelSpec base = [] {
    ModelSpec spec;
    spec.alphabet = 2;
    spec.locality = 1;
    spec.heads = 2;
    spec.grid = 1.0;
    return spec;
  }();
};

/// A point of the search: the pair, x and its objective. x is `input`'s string, or the
/// explicit run-length string `x_runs` once an edit of x made it explicit.
struct SearchCandidate {
  Transformer f, g;
  InputSpec input;
  std::vector<Run> x_runs;  ///< non-empty: x itself (input then only records where it came from)
  double objective = 0.0;
};

/// x of a candidate: x_runs when non-empty, else MakeInput(input).
std::unique_ptr<Source> CandidateInput(const SearchCandidate& candidate);

/// One restart's hill climb.
struct SearchRestart {
  int index = 0;
  std::uint64_t seed = 0;             ///< StreamSeed(seed, "search", index): all its randomness
  std::vector<double> trajectory;     ///< best objective after 0, 1, …, I proposals (monotone)
  int accepted = 0;                   ///< proposals kept that raised the objective (> 1e-12 rel.)
  int sideways = 0;                   ///< proposals kept at an equal objective (plateau moves)
  std::vector<int> proposed_by_kind;  ///< per ProposalKind (search_proposals.h)
  std::vector<int> accepted_by_kind;  ///< per ProposalKind
  SearchCandidate best;
};

/// What shrinking removed, and the shrunk witness (objective ≥ the reported value).
struct ShrinkResult {
  SearchCandidate candidate;
  int heads_removed = 0;
  int widths_removed = 0;  ///< residual coordinates projected out of both models
  int scalings = 0;        ///< times all weights of f and g were scaled by 0.9
  int halvings = 0;        ///< times |x| (its spec's length) was halved
  int runs_removed = 0;    ///< far runs of the explicit x deleted
  int runs_shortened = 0;  ///< far runs of the explicit x halved
  int prefix_cuts = 0;     ///< times the first half of x's far region was cut
};

/// Everything a search reports.
struct SearchResult {
  SearchOptions options;
  std::vector<SearchRestart> restarts;  ///< by index
  int best_restart = 0;                 ///< the first restart attaining the largest objective
  ShrinkResult shrunk;                  ///< of restarts[best_restart].best
};

/// The objective of (f, g) on the input `input` (see SearchOptions). Pure; any thread.
double EvaluateObjective(SearchObjective objective, const Transformer& f, const Transformer& g,
                         const InputSpec& input, double eps, std::uint64_t n);

/// The same on an explicit x.
double EvaluateObjective(SearchObjective objective, const Transformer& f, const Transformer& g,
                         const Source& x, double eps, std::uint64_t n);

/// The objective of a candidate (its x from CandidateInput).
double EvaluateCandidate(const SearchOptions& options, const SearchCandidate& candidate);

/// The starting point of restart `restart`: a seeded perturbed pair on the base spec (with
/// options.margin when > 0) and x's spec with a seeded x seed, evaluated. Pure in (options,
/// restart).
SearchCandidate StartingPoint(const SearchOptions& options, int restart);

/// InputError (one line naming the option) for bad options.
void ValidateSearchOptions(const SearchOptions& options);

/// One hill climb: StartingPoint, then I proposals drawn from options.proposals (see
/// search_proposals.h), each kept when the objective does not decrease (sideways moves cross
/// plateaus; the best never decreases). A pure function of
/// (options, restart): the engine is seeded by StreamSeed(seed, "search", restart).
SearchRestart HillClimb(const SearchOptions& options, int restart);

/// The climb of HillClimb from a given, evaluated start; its proposals are drawn from
/// StreamSeed(seed, "climb"). HillClimb(o, i) = HillClimbFrom(o, StartingPoint(o, i),
/// StreamSeed(o.seed, "search", i)).
SearchRestart HillClimbFrom(const SearchOptions& options, SearchCandidate start,
                            std::uint64_t seed);

/// Greedy shrinking of `best`, keeping each change only when the objective stays ≥
/// best.objective: heads one at a time, residual coordinates one at a time (search_shrink.cpp),
/// weights ×0.9, then x: its spec's length halved, then (made explicit) far runs removed, far
/// runs halved and the first half of the far region cut, while any of them is kept.
ShrinkResult Shrink(const SearchOptions& options, const SearchCandidate& best);

/// R hill climbs in parallel (oneTBB; identical for any thread count), the best, shrunk.
/// InputError for bad options.
SearchResult RunSearch(const SearchOptions& options);

/// A replayable witness: format `ltsim-search-witness`, the objective, ε, n, the value, both
/// models inline and x's spec; version 1 when x is its spec, version 2 with the extra key
/// `x_runs` ([[token, count], …], x itself) when x is explicit.
nlohmann::json SearchWitnessToJson(const SearchOptions& options, const SearchCandidate& witness);

/// A parsed search witness.
struct SearchWitness {
  SearchObjective objective = SearchObjective::kSimRatio;
  double eps = 0.0;
  std::uint64_t n = 0;
  SearchCandidate candidate;  ///< objective = the stored value
};

/// Strict parse of SearchWitnessToJson's output (versions 1 and 2; `x_runs` only in version 2);
/// InputError naming `where` and the key (an unknown objective: the known names).
SearchWitness SearchWitnessFromJson(const nlohmann::json& json, const std::string& where);

/// Longest x (and largest n) a search witness may hold (docs/formats.md §6.1).
inline constexpr std::uint64_t kMaxSearchWitnessLength = 10'000'000;

/// The options as `search --json` records them.
io::Json SearchOptionsToJson(const SearchOptions& options);

}  // namespace ltsim
