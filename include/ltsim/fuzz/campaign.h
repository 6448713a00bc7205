// `ltsim fuzz`: a parallel, reproducible, resumable property-testing campaign over random pairs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ltsim/core/work.h"
#include "ltsim/fuzz/case_runner.h"
#include "ltsim/gen/model_generator.h"

namespace ltsim {

/// A user's pair that a campaign tests instead of drawing pairs (`ltsim fuzz --pair F G`): the
/// two models and the files they were read from (reported, not read again: campaign.json holds
/// the models inline, so a resumed campaign and its witnesses need no other file).
struct UserPair {
  Transformer f, g;
  std::string f_file, g_file;
};

/// What a campaign draws from and checks. Every case's randomness derives from (seed, case
/// index) alone, so the results do not depend on `threads`.
struct CampaignOptions {
  std::uint64_t seed = 1;
  std::uint64_t cases = 100;
  double time_budget = 0.0;  ///< seconds; 0 = none (stops between batches when exceeded)
  int threads = 0;           ///< 0 = every core
  std::string out;           ///< output directory
  // The mix, drawn uniformly per case.
  std::vector<int> layers = {1};
  std::vector<Attention> modes = {Attention::kHardmax, Attention::kFinite, Attention::kSoftmax};
  std::vector<PairKind> pairs = {PairKind::kIndependent, PairKind::kPerturbed, PairKind::kModeSwap,
                                 PairKind::kPrunedHead};
  std::vector<InputKind> inputs = {InputKind::kUniform, InputKind::kDirichlet, InputKind::kSparse,
                                   InputKind::kMarkov,  InputKind::kPeriodic,  InputKind::kStress};
  std::vector<std::string> methods = {"frequency", "frequency-agnostic", "markov", "blocks"};
  std::uint64_t min_length = 2000, max_length = 20000;  ///< |x|
  std::uint64_t min_target = 300, max_target = 3000;    ///< n
  int max_alphabet = 4, max_width = 6, max_period = 3, max_locality = 2, max_heads = 3;
  double epsilon = 1e-3;        ///< ε of the transfer property
  double lemma_constant = 1.0;  ///< C of the Lemma 5.3 check
  double delta = 0.01;          ///< δ of perturbed pairs
  /// A user's pair: every case takes these models and draws only its input, method and
  /// lengths (DrawCase); layers, modes, pairs, the max_* and δ are then unused. Null: random
  /// pairs.
  std::shared_ptr<const UserPair> pair;
};

/// Largest values of the options (docs/formats.md §6.1).
inline constexpr std::uint64_t kMaxCampaignCases = 1'000'000'000'000;
inline constexpr int kMaxCampaignThreads = 1024;
inline constexpr std::uint64_t kMaxCampaignLength = 10'000'000;  ///< |x| and n
inline constexpr int kMaxCampaignAlphabet = 1024, kMaxCampaignWidth = 64, kMaxCampaignPeriod = 64,
                     kMaxCampaignLocality = 16, kMaxCampaignHeads = 16;
/// campaign.json: as a witness, which holds the same two models inline (a user's pair).
inline constexpr std::uint64_t kMaxCampaignFileBytes = std::uint64_t{256} << 20;
inline constexpr std::size_t kMaxCaseLineBytes = 1 << 20;  ///< a line of cases.jsonl

/// Options ↔ JSON (the campaign file a resumed run reads back). Reading is strict
/// (io::JsonReader: unknown or missing keys, integers that are not integers in range) and
/// ends with ValidateCampaignOptions; errors name `source` and the key. A user's pair is the
/// key `pair`: {f_file, g_file, f, g} with both models inline (`with_models` false: the file
/// names alone, as summary.json reports them).
nlohmann::ordered_json CampaignOptionsToJson(const CampaignOptions& options,
                                             bool with_models = true);
CampaignOptions CampaignOptionsFromJson(const nlohmann::ordered_json& json,
                                        const std::string& source);

/// OptionError naming the option by its campaign.json key (the command line maps it to its
/// flag) unless every option is in range: cases, lengths and targets ≥ 1 and ordered,
/// non-empty mixes of known names, the max_* within their limits, ε, C and δ finite and
/// positive, threads ≤ kMaxCampaignThreads; a user's pair must read one alphabet and have as
/// many outputs (InputError naming both files, CheckPair). RunCampaign calls it, fresh or resumed;
/// CampaignOptionsFromJson reports its errors naming the file.
void ValidateCampaignOptions(const CampaignOptions& options);

/// One line of cases.jsonl as the summary reads it back.
struct CaseRecord {
  struct Check {
    Property property = Property::kSandwich;
    bool holds = true;
    double ratio = 0.0;                            ///< observed/bound; +∞ for "inf" and for null
    RecheckStatus recheck = RecheckStatus::kNone;  ///< kNone when not rechecked
  };
  std::uint64_t index = 0;
  bool error = false;               ///< the case could not run its method
  bool dirichlet = false;           ///< its input was Dirichlet
  double sim_f = 0.0, gap_x = 0.0;  ///< NaN when null
  std::vector<Check> checks;
};

/// Reads line `number` (from 0) of FILE = cases.jsonl strictly: a complete line that is not
/// the case record of index `number` is an InputError naming "FILE:LINE".
CaseRecord ReadCaseLine(std::string_view line, const std::string& file, std::uint64_t number);

/// The case of index i: a pure function of (options, i). With a user's pair, the pair itself
/// and an input family, length, method and target length drawn from the stream
/// `fuzz/pair-case` (plus `fuzz/input`, `fuzz/sim`, `fuzz/function`; docs/design.md §4);
/// `frequency` is drawn only for one-layer pairs.
CaseSpec DrawCase(const CampaignOptions& options, std::uint64_t index);

/// Progress as the campaign goes: cases done, total, refutations, elapsed seconds.
using ProgressFn = std::function<void(std::uint64_t, std::uint64_t, std::uint64_t, double)>;

/// One property over a campaign's cases (summary.json's "properties" entry).
struct PropertySummary {
  Property property = Property::kSandwich;
  std::uint64_t cases = 0;        ///< cases where it applied
  std::uint64_t refutations = 0;  ///< refuted after the recheck (confirmed or skipped)
  std::uint64_t confirmed = 0, unconfirmed = 0, recheck_skipped = 0;
  /// The worst observed/bound ratio (+∞ when a bound was 0 and observed > 0) and its case;
  /// absent when the property never applied.
  std::optional<double> worst_ratio;
  std::optional<std::uint64_t> worst_case;
};

/// What summary.json says, as a value: computed from cases.jsonl, so a resumed campaign has
/// the same summary as an uninterrupted one.
struct CampaignSummary {
  std::uint64_t cases = 0;
  std::uint64_t cases_with_input_errors = 0;
  bool interrupted = false;
  std::vector<PropertySummary> properties;  ///< in Property order
  std::uint64_t dirichlet_cases = 0;        ///< cases with Dirichlet inputs and a gap
  double dirichlet_mean_gap_x = 0, dirichlet_mean_sim_f = 0;
  /// Refutations of the properties that state theorems (IsTheoremProperty).
  std::uint64_t TheoremRefutations() const;
  /// Refutations of every property, the sanity check included.
  std::uint64_t AllRefutations() const;
};

/// summary.json's document: a context block (version, seed, options; no thread count, so the
/// file is the same bytes for any --threads) and the summary.
nlohmann::ordered_json CampaignSummaryToJson(const CampaignOptions& options,
                                             const CampaignSummary& summary);

/// How a campaign ended.
struct CampaignReport {
  std::uint64_t cases_done = 0;
  std::uint64_t refutations = 0;
  bool interrupted = false;  ///< stopped by `stop` or the time budget before `cases`
  CampaignSummary summary;
};

/// Runs cases [done, cases) in batches on oneTBB (InputError when not resuming and DIR
/// already holds a campaign, so no earlier results are mixed in or lost) (done = the cases already
/// in DIR/cases.jsonl when `resume`), appending each batch in case order to DIR/cases.jsonl and
/// writing DIR/witnesses/<hash>.witness.json for every refutation before its case line, so
/// an interrupted run leaves valid files. Stops between batches when `stop` becomes true or
/// the time budget is spent. Writes DIR/campaign.json (the options) at the start and
/// DIR/summary.json (context, and per property: cases, refutations, worst observed/bound
/// ratio with its case) at the end, computed from cases.jsonl so a resumed campaign ends with
/// the same files as an uninterrupted one.
///
/// The cases are items of `dealer` (core/work.h), in batches of 64: under MPI every rank
/// computes batches and rank 0 alone writes; on a shard run nothing is written (the shard file
/// holds the cases). The files are the same bytes for any dealer, rank count and threads.
/// `started(done)` is called once the directory has been checked (on --resume: every complete
/// line of cases.jsonl read back), before any case runs, so a caller can print its header
/// only for a campaign that will run.
CampaignReport RunCampaign(const CampaignOptions& options, bool resume,
                           const std::atomic<bool>& stop, const ProgressFn& progress,
                           ItemDealer& dealer = LocalDealer(),
                           const std::function<void(std::uint64_t)>& started = {});

/// Reads DIR/campaign.json (for --resume).
CampaignOptions ReadCampaignOptions(const std::string& dir);

}  // namespace ltsim
