// A search that maximises the raw first disagreement T*(f, g, ε) over one-layer pairs of a fixed
// class under hard constraints (docs/refute.md): certified lower bounds on the training length.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/io/json.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {

/// The class searched: every pair has these sizes, and the constraints hold for f and g.
struct PairClass {
  int alphabet = 2;                                      ///< S
  int period = 1;                                        ///< Δ
  int locality = 0;                                      ///< τ
  int width = 4;                                         ///< d
  int heads = 2;                                         ///< H (one layer)
  int mlp_width = 1;                                     ///< m (0: no MLP)
  std::vector<Attention> modes = {Attention::kHardmax};  ///< allowed attention modes
  int precision_bits = 8;                                ///< p of `finite` layers
  double min_margin = 0.0;     ///< γ₀: γ(f), γ(g) ≥ γ₀ for `finite` layers
  double max_lipschitz = 1.0;  ///< L₀: L(f), L(g) ≤ L₀
  /// B: for `softmax` and `finite` layers, LogitScale(model) ≤ B (+∞: unbounded). Bounds every
  /// logit |q·M_h·k + φ_h[t]| by B, so no key's weight is more than e^(2B) times another's.
  double max_logit = std::numeric_limits<double>::infinity();
};

/// The logit scale Λ = max_h (‖M_h‖₂·R₀² + max_t |φ_h[t]|), R₀ = max_{s,r} ‖E_s + P_r‖ (the
/// terms of ln C(f) that bound the logits, docs/model.md §4.7): every logit lies in [−Λ, Λ].
double LogitScale(const Transformer& model);

/// InputError (one line naming the option) for a class outside the searchable range.
void ValidatePairClass(const PairClass& cls);

/// Brings a model of the class back onto the constraints: the readout is scaled so that
/// L ≤ L₀, a `softmax` or `finite` layer's logits (qk and bias) down so that LogitScale ≤ B,
/// and a `finite` layer's up so that γ ≥ γ₀. Returns false when it cannot (γ = 0 impossible
/// to raise, or γ₀ and B incompatible: both are linear in the logits).
bool ProjectOntoClass(const PairClass& cls, Transformer& model);

/// True when the model has the class's sizes and satisfies its constraints (1e-9 relative).
bool InClass(const PairClass& cls, const Transformer& model);

/// The constraints' check and T* of one pair, with what certifies it.
struct RawEvaluation {
  bool valid = false;  ///< in the class and FindThreshold accepted the pair
  std::string note;    ///< why not valid
  std::optional<std::uint64_t> first_disagreement;  ///< T* ≤ N, or none up to N
  std::uint64_t checked_up_to = 0;
  /// The N of the FindThreshold run that certified this result (the search's N, or a longer
  /// one after CertifyPastCap; checked_up_to when that run stopped on its budget): a replay
  /// re-runs FindThreshold up to it.
  std::uint64_t certified_max_length = 0;
  std::vector<Run> witness;        ///< a string of length T* with gap > ε
  double gap = 0.0;                ///< its gap
  double largest_gap_below = 0.0;  ///< max gap over all strings shorter than T*
  /// The largest gap found on any string (the T* witness scaled up, and a search over the
  /// statistics of long lengths), and the statistic attaining it.
  double sup_gap = 0.0;
  std::optional<TypeCounts> sup_statistic;
  bool separated = false;        ///< sup_gap ≥ κε
  double score = 0.0;            ///< what the climb maximises (docs/refute.md)
  std::uint64_t statistics = 0;  ///< statistics FindThreshold evaluated
  /// The threshold was stopped by RawSearchOptions::evaluation_seconds (censored at
  /// checked_up_to, a result that depends on timing).
  bool stopped_by_time = false;
  /// The threshold was stopped by RawSearchOptions::evaluation_cap (censored at checked_up_to);
  /// cleared when CertifyPastCap certifies further.
  bool censored_by_cap = false;
};

/// Why a censored evaluation's exact region ends where it does (docs/refute.md §3): the search's
/// evaluation cap ("threshold_evaluations"), a time budget ("time_budget"), or nullopt (not
/// censored, or censored at the length it was to be certified to: N, or the target of
/// certification past N).
std::optional<std::string> RawCensoredBy(const RawEvaluation& evaluation);

/// Where the climbs start (docs/refute.md §3): random pairs of the class, the built-in families
/// that fit it (docs/families.md), or both (the families first, then random pairs).
enum class RawStarts { kRandom, kFamilies, kBoth };

/// "random", "families", "both".
const char* RawStartsName(RawStarts starts);

struct RawSearchOptions {
  PairClass cls;
  double eps = 0.05;
  std::uint64_t max_length = 400;  ///< N: T* is searched exactly up to N (FindThreshold)
  /// κ: a pair counts only when some certified string has a gap ≥ κε (docs/refute.md: without
  /// it, T* is gamed by gaps that creep up to just above ε).
  double separation = 2.0;
  std::uint64_t budget = 200;  ///< evaluations of T* (FindThreshold calls)
  int iterations = 24;         ///< proposals per hill climb (restarts = budget/(iterations+1))
  std::uint64_t seed = 1;
  int threads = 0;           ///< oneTBB arena size (0 = all cores); never changes the result
  bool random_only = false;  ///< the baseline: every evaluation a fresh random pair
  bool family_seeds = true;  ///< false: every climb starts from a random pair (= kRandom)
  RawStarts starts = RawStarts::kBoth;  ///< where climbs start (family_seeds = false: kRandom)
  /// Wall-clock seconds after which no evaluation starts (0: none). A run the deadline stops
  /// keeps every finished evaluation; which ones finished depends on timing, so such a result
  /// is flagged (RawSearchResult::stopped_by_time) and is not reproducible byte for byte.
  double time_budget = 0.0;
  /// Set by a time-budgeted search (RunRawSearch): the seconds an evaluation's exact threshold
  /// may still run (at least 0.5). A threshold it stops certifies the lengths it finished: the
  /// pair counts as censored there (RawEvaluation::stopped_by_time) and the run as stopped by
  /// time. Null (the default, and --time-budget 0): no limit, every result reproducible.
  std::function<double()> evaluation_seconds;
  /// Set by RunRawSearch for its own evaluations (climbs and shrinking): the exact threshold's
  /// evaluation cap (3·10⁶ statistics). A pair whose threshold needs more counts as censored at
  /// the last length it certified (RawEvaluation::censored_by_cap). 0 (the default: given pairs,
  /// family seeds): the threshold's own default cap, a pair then certified to N.
  std::uint64_t evaluation_cap = 0;
  /// The evaluation cap RunRawSearch gives its own evaluations (evaluation_cap above): 3·10⁶
  /// statistics; tests lower it to censor pairs cheaply.
  std::uint64_t search_evaluation_cap = 3'000'000;
  /// The evaluation cap of an untimed certification run past N (CertifyPastCap with no time
  /// budget): the exact threshold's default, 4·10⁹ statistics; a run it stops leaves the pair
  /// censored by "threshold_evaluations". Timed runs have no evaluation cap. Tests lower it.
  std::uint64_t certify_evaluation_cap = 4'000'000'000;
  /// The order in which climbs' results are ranked for the reported best and kept while
  /// shrinking (larger is better, compared lexicographically); empty: by score.
  std::function<std::array<double, 3>(const Transformer&, const Transformer&, const RawEvaluation&)>
      rank;
  /// Evaluations reserved (out of budget) for shrinking the best pair: min(this, budget/10).
  std::uint64_t shrink_budget = 40;
  /// Called after each climb (in completion order, from any thread, serialised): climbs done,
  /// climbs in all, evaluations spent, best score so far, seconds. Never changes the result.
  std::function<void(int, int, std::uint64_t, double, double)> progress;
};

/// Evaluates a pair: class check, FindThreshold up to N, separation search (seeded from the
/// options and the statistics count, plus the `hints` tried first). Pure; any thread.
RawEvaluation EvaluateRawPair(const RawSearchOptions& options, const Transformer& f,
                              const Transformer& g, const std::vector<TypeCounts>& hints = {});

/// Evaluates a pair as given, with no class check (a user's pair): FindThreshold up to N and
/// the separation search of EvaluateRawPair over the statistics of f's alphabet, period and
/// locality, the separation gap ≥ κε decided in 50 digits (as a replay decides it). InputError
/// naming `f_name` and `g_name` unless f and g are one-layer models with
/// the same alphabet, period and locality. Pure; any thread.
RawEvaluation EvaluateGivenPair(const RawSearchOptions& options, const Transformer& f,
                                const Transformer& g, const std::string& f_name,
                                const std::string& g_name);

/// One hill climb's outcome.
struct RawRestart {
  int index = 0;
  std::string start;  ///< "random" or "family NAME"
  Transformer f, g;
  RawEvaluation best;
  std::vector<double> trajectory;     ///< best score after each evaluation
  std::vector<int> accepted_by_kind;  ///< proposals that raised the score, per kind
  std::vector<int> applied_by_kind;   ///< proposals that applied (were evaluated), per kind
};

/// The 50-digit recheck of a result: the gap at the T* witness (must exceed ε) and at the
/// separation statistic (must reach κε), recomputed in PreciseReal (eval/precise.h).
struct RawRecheck {
  RecheckStatus status = RecheckStatus::kNone;  ///< agrees or differs
  std::string gap_text, sup_gap_text;           ///< 40 significant digits
};

struct RawSearchResult {
  RawSearchOptions options;
  std::vector<RawRestart> restarts;
  int best_restart = 0;           ///< by options.rank (score when empty), lowest index on ties
  std::uint64_t evaluations = 0;  ///< T* evaluations spent (≤ budget), shrinking included
  /// Shrinking of the best pair (ShrinkRestart): evaluations spent, simplifications kept.
  std::uint64_t shrink_evaluations = 0;
  int shrink_accepted = 0;
  RawRecheck recheck;            ///< of the best pair, after shrinking
  bool stopped_by_time = false;  ///< the time budget stopped climbs or shrinking early
  int restarts_run = 0;          ///< climbs that evaluated at least their start
  double seconds = 0.0;          ///< wall time of the search (never in a reproducible output)
};

/// Certifies a censored pair past the search's cap up to `target` (≤ kThresholdMaxLength) with
/// `threads` threads, stopping when it finds T* or certifies `target`: with a time limit
/// (`seconds` < 1e9), one FindThreshold run to `target` with `seconds` as its time budget (then
/// exact up to ThresholdResult::checked_up_to, flagged stopped_by_time); without, runs at N·4,
/// N·16, … up to `target`. Updates the evaluation's T*, witness, gap, largest gap below and
/// checked_up_to (the length up to which T* is now exact). Returns true when checked_up_to grew
/// or T* was found.
bool CertifyPastCap(const RawSearchOptions& options, const Transformer& f, const Transformer& g,
                    RawEvaluation& evaluation, std::uint64_t target, double seconds, int threads);

/// Simplifies a pair while keeping its rank (options.rank, else score) from decreasing, in a
/// fixed order of moves (per weight array of f and g: entries below 1% of the array's largest
/// set to 0, then every entry rounded to 3 significant digits), each projected onto the class
/// and evaluated like any proposal, at most `budget` evaluations. Returns moves kept; adds
/// the evaluations spent to *spent.
int ShrinkRestart(const RawSearchOptions& options, RawRestart& restart, std::uint64_t budget,
                  std::uint64_t* spent, const std::function<bool()>& stop = nullptr);

/// R hill climbs (or the random baseline) in parallel; identical for any thread count.
RawSearchResult RunRawSearch(const RawSearchOptions& options);

/// The starting pairs built from the families of docs/families.md that fit the class (sizes,
/// modes, L₀, ε, separation), each projected into the class; possibly empty.
std::vector<std::pair<std::string, std::pair<Transformer, Transformer>>> FamilySeeds(
    const RawSearchOptions& options);

/// Rechecks a pair's evaluation in 50 digits.
RawRecheck RecheckRaw(const RawSearchOptions& options, const Transformer& f, const Transformer& g,
                      const RawEvaluation& evaluation);

/// The replayable witness (format `ltsim-raw-search-witness`, version 1): options, both models,
/// T*, the witness runs, the separation statistic and the recheck.
nlohmann::json RawWitnessToJson(const RawSearchOptions& options, const Transformer& f,
                                const Transformer& g, const RawEvaluation& evaluation,
                                const RawRecheck& recheck);

/// What a replay re-checks: the pair, its ε, N and κ, the recorded T* and separation statistic.
struct ReplayInput {
  Transformer f, g;
  double eps = 0.0;
  std::uint64_t max_length = 1;  ///< the recorded certified_max_length (else max_length)
  double separation = 2.0;
  std::optional<std::uint64_t> first_disagreement;
  bool separated = false;
  std::optional<TypeCounts> sup_statistic;
  /// The other recorded results, as written (checked_up_to, witness_text, gap,
  /// largest_gap_below, sup_gap, sup_gap_length, recheck): each is recomputed and compared.
  nlohmann::json recorded = nlohmann::json::object();
};

/// Re-runs FindThreshold (T* must be the recorded one, its witness not unconfirmed in 50
/// digits), re-evaluates the separation statistic in 50 digits (gap ≥ κε must match
/// `separated`) and compares every other recorded result with its recomputed value
/// (fuzz/recorded.h: checked_up_to, the witness string, its gap, the largest gap below T*, the
/// separation gap and its length, the 50-digit recheck block). True when all reproduce;
/// `report` gets one line naming the fields that differ.
bool ReplayPair(const ReplayInput& input, std::string* report);

/// The separation statistic of a witness or refute.json (`{length, far, suffix}` in f's view);
/// InputError naming the source and key when it is malformed.
TypeCounts ReadStatistic(const io::JsonReader& statistic, const Transformer& f);

/// Fills `in`'s numbers (eps, max_length, separation, first_disagreement, separated,
/// sup_statistic) from a witness or refute.json; in.f and in.g must already be set (the
/// statistic is in f's view, and needs one-layer f and g of one alphabet, period and locality).
/// InputError naming the source and key when one is malformed.
void ReadReplayNumbers(const io::JsonReader& record, ReplayInput& in);

/// Reads a raw search witness (format ltsim-raw-search-witness, version 1) without replaying
/// it: both models validated, the numbers in range, the statistic in f's view. InputError
/// naming `source` and the key for a malformed document.
ReplayInput RawWitnessFromJson(const io::Json& doc, const std::string& source);

/// Re-evaluates a witness file (format ltsim-raw-search-witness): ReplayPair on its contents.
/// InputError naming the file and key for a malformed file.
bool ReplayRawWitness(const std::string& path, std::string* report);

/// "0^3 1 2^2", the run-length text of a string.
std::string RunLengthText(const std::vector<Run>& runs);

}  // namespace ltsim
