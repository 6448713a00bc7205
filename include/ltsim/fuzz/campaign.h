// `ltsim fuzz`: a parallel, reproducible, resumable property-testing campaign over random pairs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/core/work.h"
#include "ltsim/fuzz/case_runner.h"
#include "ltsim/gen/model_generator.h"

namespace ltsim {

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
};

/// InputError naming the option (by its campaign.json key) when the options cannot run: an
/// empty mix (layers, modes, pairs, inputs, methods), an unknown method, layers other than 1
/// and 2, min above max, non-positive limits, ε or the Lemma 5.3 constant not finite and
/// positive, δ outside [0, 1]. RunCampaign calls it, fresh or resumed.
void ValidateCampaignOptions(const CampaignOptions& options);

/// Options ↔ JSON (the campaign file a resumed run reads back).
nlohmann::ordered_json CampaignOptionsToJson(const CampaignOptions& options);
CampaignOptions CampaignOptionsFromJson(const nlohmann::json& json, const std::string& where);

/// The case of index i: a pure function of (options, i).
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

/// summary.json's document: a context block (version, seed, options) and the summary.
nlohmann::ordered_json CampaignSummaryToJson(const CampaignOptions& options,
                                             const CampaignSummary& summary, int threads);

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
CampaignReport RunCampaign(const CampaignOptions& options, bool resume,
                           const std::atomic<bool>& stop, const ProgressFn& progress,
                           ItemDealer& dealer = LocalDealer());

/// Reads DIR/campaign.json (for --resume).
CampaignOptions ReadCampaignOptions(const std::string& dir);

}  // namespace ltsim
