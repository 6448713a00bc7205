// Targeted search for counterexamples: hill climbing over model pairs, then shrinking (theory.md
// §7).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/fuzz/input_generator.h"
#include "ltsim/fuzz/model_generator.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What a search maximises and how. The objectives (SearchObjectives):
///   needed-length  NeededLength(f, g, x, ε) / max(frequency-length [ours], τ + 2) at the
///                  pair's constants (theory.md §2: the construction's own |z| ~
///                  Δ·D(D+τ)·(L/ε)²; above 1, the construction needs longer strings than it
///                  claims). τ + 2 is the needed-length grid's floor, so L → 0 cannot inflate
///                  the ratio. The needed length is capped at |x|: a capped value is a lower
///                  bound.
///   sim-ratio      max(sim_f, sim_g) / ε of the frequency simulator at |z| = n.
///   sim-over-eta   max over f, g of sim / (L·η_achieved) at |z| = n (theory.md §2: ‖f(x) −
///                  f(z)‖ ≤ L·η; above 1 refutes the Lipschitz bound). 0 where L·η = 0.
/// A pair for which the simulator cannot build z scores −∞ (never accepted).
struct SearchOptions {
  std::string objective = "sim-ratio";
  double eps = 0.01;
  std::uint64_t n = 200;  ///< |z| of sim-ratio and sim-over-eta
  int restarts = 4;       ///< R independent hill climbs
  int iterations = 20;    ///< I proposals per restart
  std::uint64_t seed = 0;
  int threads = 0;     ///< oneTBB arena size; 0 = all cores. Never changes the result.
  double step = 0.25;  ///< σ of the Gaussian step on every weight
  /// Each step is rounded to a multiple of this (0: no rounding). Dyadic steps keep grid
  /// pairs on a dyadic grid, so exact logit ties (large maximal sets) survive the climb.
  double step_grid = 0.125;
  bool perturb_f = false;  ///< also step f's weights (otherwise only g moves)
  double delta = 0.01;     ///< the starting pair: g = f + δ·N(0, 1) (perturbed kind)
  InputSpec input = [] {
    InputSpec spec;
    spec.kind = InputKind::kStress;
    spec.length = 2000;
    return spec;
  }();  ///< x's spec; its seed is drawn per restart, its alphabet is the model's
  /// One layer, hardmax, grid weights for the starting pair (layers/attention are forced).
  ModelSpec base = [] {
    ModelSpec spec;
    spec.alphabet = 2;
    spec.locality = 1;
    spec.heads = 2;
    spec.grid = 1.0;
    return spec;
  }();
};

/// A point of the search: the pair, the input spec and its objective.
struct SearchCandidate {
  Transformer f, g;
  InputSpec input;
  double objective = 0.0;
};

/// One restart's hill climb.
struct SearchRestart {
  int index = 0;
  std::uint64_t seed = 0;          ///< StreamSeed(seed, "search", index): all its randomness
  std::vector<double> trajectory;  ///< best objective after 0, 1, …, I proposals (monotone)
  int accepted = 0;                ///< proposals kept
  SearchCandidate best;
};

/// What shrinking removed, and the shrunk witness (objective ≥ the reported value).
struct ShrinkResult {
  SearchCandidate candidate;
  int heads_removed = 0;
  int scalings = 0;  ///< times all weights of f and g were scaled by 0.9
  int halvings = 0;  ///< times |x| was halved
};

/// Everything a search reports.
struct SearchResult {
  SearchOptions options;
  std::vector<SearchRestart> restarts;  ///< by index
  int best_restart = 0;                 ///< the first restart attaining the largest objective
  ShrinkResult shrunk;                  ///< of restarts[best_restart].best
};

/// The objective names, in order: needed-length, sim-ratio, sim-over-eta.
const std::vector<std::string>& SearchObjectives();

/// The objective of (f, g) on the input `input` (see SearchOptions). Pure; any thread.
/// InputError for an unknown objective name.
double EvaluateObjective(const std::string& objective, const Transformer& f, const Transformer& g,
                         const InputSpec& input, double eps, std::uint64_t n);

/// One hill climb: a seeded perturbed pair, then I Gaussian proposals, each kept only when it
/// increases the objective. A pure function of (options, restart).
SearchRestart HillClimb(const SearchOptions& options, int restart);

/// Greedy shrinking of `best` (heads one at a time, weights ×0.9, |x| halved), keeping each
/// change only when the objective stays ≥ best.objective.
ShrinkResult Shrink(const SearchOptions& options, const SearchCandidate& best);

/// R hill climbs in parallel (oneTBB; identical for any thread count), the best, shrunk.
/// InputError for bad options.
SearchResult RunSearch(const SearchOptions& options);

/// A replayable witness: format `ltsim-search-witness` version 1, the objective, ε, n, the
/// value, both models inline and x's spec.
nlohmann::json SearchWitnessToJson(const SearchOptions& options, const SearchCandidate& witness);

/// A parsed search witness.
struct SearchWitness {
  std::string objective;
  double eps = 0.0;
  std::uint64_t n = 0;
  SearchCandidate candidate;  ///< objective = the stored value
};

/// Strict parse of SearchWitnessToJson's output; InputError naming `where` and the key.
SearchWitness SearchWitnessFromJson(const nlohmann::json& json, const std::string& where);

}  // namespace ltsim
