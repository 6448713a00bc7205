// A search that maximises the certified first disagreement T*(f, g, ε) over two-layer pairs of a
// fixed class, and `refute --layers 2` on top of it (docs/refute.md §8).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/bounds/registry.h"
#include "ltsim/core/types.h"
#include "ltsim/io/recheck.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// The two-layer class searched (docs/refute.md §8.1): sizes, modes and the two scale limits.
struct TwoLayerClass {
  int alphabet = 2;      ///< S
  int period = 1;        ///< Δ
  int locality = 1;      ///< τ (both layers' local bias has τ + 1 entries)
  int width = 6;         ///< d
  int heads = 1;         ///< H₁, the first layer's heads
  int second_heads = 1;  ///< H₂, the second layer's heads
  int mlp_width = 1;     ///< m, units of each layer's MLP (≥ 1: the mechanism uses one)
  BiasScaling bias_scaling = BiasScaling::kNone;  ///< the first layer's (`log`: φ·ln i)
  std::vector<Attention> modes = {Attention::kHardmax, Attention::kSoftmax};  ///< first layer
  std::vector<Attention> second_modes = {Attention::kHardmax, Attention::kSoftmax};
  int precision_bits = 8;  ///< p of `finite` layers
  /// L₀: OutputScale(f), OutputScale(g) ≤ L₀.
  double max_scale = 1.0;
  /// B: a `softmax` or `finite` layer's LayerLogitScale ≤ B (+∞: unbounded).
  double max_logit = std::numeric_limits<double>::infinity();
};

/// R₁ = R₀(1 + Σ_{h∈1} ‖O_h‖)(1 + ‖B₁‖‖A₁‖) + ‖B₁‖‖b₁‖, an a-priori bound of ‖y¹_j‖ at every
/// position (docs/model.md §4.7), for a two-layer model.
double FirstLayerRadius(const Transformer& model);

/// The output scale of a two-layer model, Ω·R₁·(1 + Σ_{h∈2} ‖O_h‖) with Ω = ReadoutLipschitz:
/// ‖f(x) − f(z)‖_∞ ≤ 2·OutputScale(f) for any strings x, z (docs/refute.md §8.1).
double OutputScale(const Transformer& model);

/// Λ_ℓ = max_h (‖M_h‖₂·R² + max_t |φ_h[t]|) for layer ℓ ∈ {0, 1}, R = R₀ (first layer) or R₁
/// (second): every logit of the layer lies in [−Λ_ℓ, Λ_ℓ] (times ln i on the bias under `log`
/// scaling).
double LayerLogitScale(const Transformer& model, int layer);

/// InputError (one line naming the option) for a class outside the searchable range.
void ValidateTwoLayerClass(const TwoLayerClass& cls);

/// True when the model has the class's sizes and modes and meets its limits (1e-9 relative).
bool InTwoLayerClass(const TwoLayerClass& cls, const Transformer& model);

struct TwoLayerEvaluation;

struct TwoLayerSearchOptions {
  TwoLayerClass cls;
  double eps = 0.05;
  std::uint64_t max_length = 100;  ///< N: T* is certified up to N by the path search
  double separation = 2.0;         ///< κ: a pair counts only when a string has gap ≥ κε
  std::uint64_t budget = 300;      ///< T* evaluations (path-search threshold runs)
  int iterations = 29;             ///< proposals per climb (0: no climbs, random starts only)
  /// The evaluation cap of each threshold run (ThresholdOptions::max_evaluations): a run it stops
  /// is certified up to its checked_up_to only (the pair then counts as censored there).
  std::uint64_t threshold_evaluations = 50'000;
  std::uint64_t seed = 1;
  int threads = 0;                   ///< oneTBB arena (0: every core); never changes the result
  bool random_only = false;          ///< the baseline: every evaluation a fresh random start
  double time_budget = 0.0;          ///< wall seconds after which no evaluation starts (0: none)
  std::uint64_t shrink_budget = 20;  ///< evaluations for shrinking: min(this, budget/10)
  /// Called after each climb (serialised): climbs done, climbs in all, evaluations, best score.
  std::function<void(int, int, std::uint64_t, double)> progress;
  /// `refute` only: true when a pair refutes the bound. Then a refuting pair ranks above every
  /// non-refuting one (in the climbs, the choice of the best pair and shrinking), whatever the
  /// scores (docs/refute.md §8.4).
  std::function<bool(const Transformer&, const Transformer&, const TwoLayerEvaluation&)> refutes;
};

/// One pair's certified T* and separation.
struct TwoLayerEvaluation {
  bool valid = false;
  std::string note;                                 ///< why not valid
  std::optional<std::uint64_t> first_disagreement;  ///< certified T* ≤ N
  std::uint64_t checked_up_to = 0;  ///< every string of every length ≤ this is decided
  bool capped = false;              ///< the exact region ends before N (by `censored_by`'s cause)
  /// Why T* is censored below N: "threshold_evaluations" (the run's evaluation cap),
  /// "path_search_length" (the path search's own length/memory limit), "" (not censored, or at N).
  std::string censored_by;
  std::vector<Run> witness;  ///< a string of length T* with gap > ε
  double gap = 0.0;
  double sup_gap = 0.0;         ///< the largest gap found on a probe string
  std::vector<Run> sup_string;  ///< the string attaining it
  bool separated = false;       ///< sup_gap ≥ κε
  double score = 0.0;           ///< what the climbs maximise (docs/refute.md §8.3)
  std::uint64_t threshold_evaluations = 0;
  /// Set when CertifyTwoLayerPastN certified the pair further: the length and evaluation cap of
  /// that path-search run (what a replay re-runs; 0 when the search's own run decided it).
  std::uint64_t past_n_max_length = 0, past_n_max_evaluations = 0;
};

/// Certified T* by the two-layer path search (never its random sampler) and the separation
/// search over probe strings (plus `hints`). InputError-free: a pair the threshold refuses is
/// invalid with a note. Pure; any thread.
TwoLayerEvaluation EvaluateTwoLayerPair(const TwoLayerSearchOptions& options, const Transformer& f,
                                        const Transformer& g,
                                        const std::vector<std::vector<Run>>& hints = {});

struct TwoLayerClimb {
  int index = 0;
  Transformer f, g;
  TwoLayerEvaluation best;
  std::vector<double> trajectory;      ///< best score after each evaluation
  std::vector<int> applied, accepted;  ///< per proposal kind (TwoLayerProposalNames)
};

struct TwoLayerSearchResult {
  TwoLayerSearchOptions options;
  std::vector<TwoLayerClimb> climbs;
  int best = 0;  ///< by score, lowest index on ties
  std::uint64_t evaluations = 0;
  std::uint64_t shrink_evaluations = 0;
  int shrink_accepted = 0;
  bool stopped_by_time = false;
  /// 50-digit recheck of the best pair: agrees or differs, with the two gaps' digits.
  RecheckStatus recheck_status = RecheckStatus::kNone;
  std::string recheck_gap, recheck_sup_gap;
  double seconds = 0.0;
};

/// The largest evaluation budget accepted (checked before anything is allocated).
inline constexpr std::uint64_t kMaxTwoLayerBudget = 1'000'000;

/// InputError (one line naming the option) for options outside the searchable range (the class,
/// N ∈ [1, 5000], budget ∈ [1, kMaxTwoLayerBudget], threshold cap ≥ 1, finite ε > 0, finite
/// κ > 1).
void ValidateTwoLayerSearch(const TwoLayerSearchOptions& options);

/// The proposal kinds, in order (docs/refute.md §8.2).
const std::vector<std::string>& TwoLayerProposalNames();

/// The climbs (or the random baseline) in parallel; identical for any thread count unless the
/// time budget stopped it.
TwoLayerSearchResult RunTwoLayerSearch(const TwoLayerSearchOptions& options);

/// InputError naming --bound for an expression that does not parse or is NaN for every
/// two-layer pair (one in L or gamma, which are undefined for two layers); the tl_* constants of
/// PairConstants are allowed.
void ValidateTwoLayerRefuteBound(const std::string& bound);

/// True when a pair refutes a bound whose value at the pair's constants is `bound_value`: the
/// pair is valid and separated, the bound is finite and > 0, and the certified lower bound of T*
/// (T* itself, or checked_up_to + 1 when censored) exceeds it (docs/refute.md §8.4).
bool TwoLayerRefutes(const TwoLayerEvaluation& ev, double bound_value);

/// The index of the pair judged among `pairs`: the highest-scoring refuting pair when any
/// refutes (`refuting[i]`), else the highest-scoring pair; the lowest index on ties.
int SelectTwoLayerBest(const std::vector<TwoLayerEvaluation>& pairs,
                       const std::vector<bool>& refuting);

/// Why a verdict that is not a refutation is limited: the indices of the valid, separated pairs
/// whose T* is censored (no T* ≤ checked_up_to) at or below the bound at their constants
/// (`bound_values[i]`, finite and > 0), so their T* may still exceed it.
std::vector<int> TwoLayerCensoredBelowBound(const std::vector<TwoLayerEvaluation>& pairs,
                                            const std::vector<double>& bound_values);

/// The largest length CertifyTwoLayerPastN certifies to: the 50-digit two-layer evaluator's
/// limit, which the witness recheck and the replay need.
std::uint64_t TwoLayerPastNLimit();

/// Certifies a pair censored at the search's N (valid, separated or not, no T* ≤ N and not capped
/// by the evaluation cap or the path search's length limit) further, by one path-search run on one
/// thread from length 1 to min(target, TwoLayerPastNLimit()) (docs/refute.md §8.3): with
/// `seconds` > 0 that run has no evaluation cap and stops at the time budget between windows;
/// with `seconds` = 0 it stops at min(target, 4N) with the cap 16·`threshold_evaluations`. The
/// evaluation is updated only when the run decides more than the search's (a T*, or a longer
/// `checked_up_to`); returns whether it did. Deterministic unless the time budget stopped it, and
/// then `past_n_max_length` is the length it reached, so a replay reproduces it.
bool CertifyTwoLayerPastN(const TwoLayerSearchOptions& options, const Transformer& f,
                          const Transformer& g, TwoLayerEvaluation& ev, std::uint64_t target,
                          double seconds);

struct TwoLayerRefuteResult {
  TwoLayerSearchResult search;
  std::string bound;
  double bound_value = std::numeric_limits<double>::quiet_NaN();
  double ratio = std::numeric_limits<double>::quiet_NaN();  ///< T*/bound (censored: lower bound)
  bool refuted = false;
  ConstantMap constants;
  std::vector<std::string> limited_by;
  std::string limited_by_reason;
  int certified_past_cap = 0;  ///< censored pairs certified past N (CertifyTwoLayerPastN)
  double past_cap_seconds = 0.0;
};

/// Runs the search and judges its best pair against `bound` (as `refute` does, at the pair's
/// own constants: PairConstants, plus eps). With a time budget S the search starts no evaluation
/// after 2S/3; then up to 3 separated pairs censored at N below the bound at their constants are
/// certified past N (CertifyTwoLayerPastN) in the time left, before the verdict.
TwoLayerRefuteResult RunTwoLayerRefute(const TwoLayerSearchOptions& options,
                                       const std::string& bound);

/// The search's JSON (format `ltsim-two-layer-search`, version 1, `layers` 2): options, class,
/// the best pair's certified T*, witness, separating string, recheck and every climb; what
/// `search --layers 2` prints and writes.
nlohmann::json TwoLayerSearchToJson(const TwoLayerSearchResult& search);

/// The printed JSON (also DIR/refute.json): TwoLayerSearchToJson with the verdict's keys.
nlohmann::json TwoLayerRefuteToJson(const TwoLayerRefuteResult& result);

/// Replays a two-layer refute.json (f.json, g.json beside it): the path-search threshold with the
/// recorded N and cap, the separating string in 50 digits and the verdict must reproduce.
bool ReplayTwoLayerRefute(const std::string& path, std::string* report);

}  // namespace ltsim
