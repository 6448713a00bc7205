// `ltsim certify F G --eps e`: agreement within ε at every length, or the exact first
// disagreement (docs/theory.md §12).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/raw_threshold_search.h"
#include "ltsim/threshold/certify.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct CertifyArgs {
  std::string f, g;
  CertifyOptions options;
  bool json = false;
  bool quiet = false;
};

Json StatisticJson(const CertifyStatistic& s) {
  if (s.length == 0) return nullptr;
  Json out{{"length", s.length}, {"gap", Number(s.gap)}};
  if (!s.counts.far.empty()) {
    out["far_counts"] = s.counts.far;  // joint types κ = r·S + s
    Json suffix = Json::array();
    for (Token t : s.counts.suffix) suffix.push_back(t);
    out["suffix"] = suffix;
  }
  return out;
}

int ExitCode(CertifyVerdict v) {
  return v == CertifyVerdict::kAgrees ? 0 : v == CertifyVerdict::kDisagrees ? 1 : 3;
}

void PrintJsonResult(const CertifyArgs& args, const CertifyResult& r) {
  Json doc;
  doc["context"] = Context("certify", args.options.seed, UsedThreads(args.options.threads));
  doc["seed"] = args.options.seed;
  doc["verdict"] = CertifyVerdictName(r.verdict);
  doc["epsilon"] = args.options.epsilon;
  doc["view"] = {{"alphabet", r.view.alphabet},
                 {"period", r.view.period},
                 {"locality", r.view.locality},
                 {"types", r.view.alphabet * r.view.period}};
  doc["first_disagreement"] = r.first_disagreement ? Json(*r.first_disagreement) : Json(nullptr);
  doc["first_disagreement_at_most"] =
      r.first_disagreement_at_most ? Json(*r.first_disagreement_at_most) : Json(nullptr);
  doc["witness_text"] = r.witness.empty() ? Json(nullptr) : Json(RunLengthText(r.witness));
  doc["witness_gap"] = r.witness.empty() ? Json(nullptr) : Number(r.witness_gap);
  doc["sup_gap_lower"] = Number(r.sup_gap_lower);
  doc["sup_gap_lower_statistic"] = StatisticJson(r.lower_statistic);
  doc["sup_gap_upper"] = Number(r.sup_gap_upper);
  doc["exact_up_to"] = r.exact_up_to;
  doc["exact_bound"] = Number(r.exact_bound);
  doc["limit_bound"] = Number(r.limit_bound);
  doc["tolerance"] = r.tolerance;
  doc["identical_models"] = r.identical;
  doc["reason"] = r.reason.empty() ? Json(nullptr) : Json(r.reason);
  // What stopped an undecided search (null: none), and why the last incomplete exact run ended.
  doc["stopped_by"] =
      r.stopped_by == CertifyStop::kNone ? Json(nullptr) : Json(CertifyStopName(r.stopped_by));
  doc["exact_stopped_by"] = r.exact_stopped == ThresholdStop::kNone
                                ? Json(nullptr)
                                : Json(ThresholdStopName(r.exact_stopped));
  doc["exact_stopped_at"] =
      r.exact_stopped == ThresholdStop::kNone ? Json(nullptr) : Json(r.exact_stopped_at);
  doc["exact_stopped_confirming"] = r.exact_stopped_confirming;
  doc["time_budget"] = args.options.time_budget;
  doc["boxes"] = r.boxes;
  doc["threshold_runs"] = r.threshold_runs;
  doc["threshold_evaluations"] = r.threshold_evaluations;
  doc["seconds"] = r.seconds;
  PrintJson(doc);
}

void PrintText(const CertifyArgs& args, const CertifyResult& r) {
  const double eps = args.options.epsilon;
  std::cout << fmt::format("ltsim certify   seed {}   ε = {}\n", args.options.seed, Show(eps));
  std::cout << fmt::format("  f: {}   g: {}\n", args.f, args.g);
  std::cout << fmt::format("  joint view: S = {}, Δ* = {}, τ* = {}\n", r.view.alphabet,
                           r.view.period, r.view.locality);
  if (r.identical)
    std::cout << "  f and g have the same parameters (names and meta aside): |f(x) - g(x)| = 0 "
                 "for every string, no search needed (docs/theory.md §12.10)\n";
  std::cout << fmt::format(
      "  lengths ≤ {}: exact threshold ({} runs, {} evaluations), certified bound {}\n",
      r.exact_up_to, r.threshold_runs, r.threshold_evaluations, Show(r.exact_bound));
  std::cout << fmt::format("  longer lengths: limit search over {} boxes, certified bound {}\n",
                           r.boxes, Show(r.limit_bound));
  std::cout << fmt::format(
      "  sup over every length of |f - g|: attained {} (a string has it), "
      "certified bound {}\n",
      Show(r.sup_gap_lower), Show(r.sup_gap_upper));
  if (r.exact_stopped != ThresholdStop::kNone && r.stopped_by != CertifyStop::kTimeBudget) {
    if (r.exact_stopped_confirming)
      std::cout << fmt::format(
          "  the exact run confirming the limit search's disagreement stopped at length {} ({}); "
          "lengths ≤ {} were searched completely\n",
          r.exact_stopped_at, ThresholdStopName(r.exact_stopped), r.exact_up_to);
    else
      std::cout << fmt::format("  the exact threshold stopped at length {} ({}); T0 stays there\n",
                               r.exact_stopped_at, ThresholdStopName(r.exact_stopped));
  }
  std::cout << "\n";
  switch (r.verdict) {
    case CertifyVerdict::kAgrees:
      std::cout << fmt::format(
          "  agrees at every length: |f(x) - g(x)| ≤ {} for every string x (certified; ε = {})\n",
          Show(r.sup_gap_upper), Show(eps));
      break;
    case CertifyVerdict::kDisagrees:
      if (r.first_disagreement)
        std::cout << fmt::format("  disagrees: first disagreement at T* = {} (exact), gap {} > ε\n",
                                 *r.first_disagreement, Show(r.witness_gap));
      else
        std::cout << fmt::format(
            "  disagrees: a string of length {} has gap {} > ε; T* ≤ {} lies beyond the exact "
            "threshold's limit\n",
            *r.first_disagreement_at_most, Show(r.witness_gap), *r.first_disagreement_at_most);
      if (!r.witness.empty()) std::cout << fmt::format("  witness: {}\n", RunLengthText(r.witness));
      break;
    case CertifyVerdict::kUndecided:
      std::cout << fmt::format(
          "  undecided ({}): the supremum lies in [{} (attained), {} (certified)], which holds "
          "ε = {}; tolerance {}\n",
          r.reason, Show(r.sup_gap_lower), Show(r.sup_gap_upper), Show(eps), Show(r.tolerance));
      if (r.stopped_by == CertifyStop::kTimeBudget)
        std::cout << fmt::format(
            "  stopped by the time budget ({} s): lengths ≤ {} exact, longer ones bounded by the "
            "limit search's {} boxes so far; both numbers above are certified\n",
            Show(args.options.time_budget), r.exact_up_to, r.boxes);
      break;
  }
}

int RunCertify(CertifyArgs args) {
  SetCommandFlags({{"initial_length", "--initial-length"},
                   {"max_exact_length", "--max-exact-length"},
                   {"max_boxes", "--max-boxes"},
                   {"tolerance", "--tolerance"},
                   {"time_budget", "--time-budget"}});
  const Transformer f = ReadModel(args.f);
  const Transformer g = ReadModel(args.g);
  CheckPair(f, g, args.f, args.g);  // names both files
  CertifyOptions options = args.options;
  std::shared_ptr<Progress> progress;
  if (!args.quiet) {
    progress = std::make_shared<Progress>("certify", "boxes");
    options.progress = [progress](std::uint64_t boxes, const std::string& line) {
      progress->Update(boxes, 0, line);
    };
  }
  const CertifyResult result = Certify(f, g, options);
  if (progress) progress->Finish();
  args.json ? PrintJsonResult(args, result) : PrintText(args, result);
  return ExitCode(result.verdict);
}

}  // namespace

void AddCertifyCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CertifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "certify",
      "One-layer pairs: agreement within ε at every length (certified), or the exact first "
      "disagreement T* with its witness.");
  SetExamples(
      cmd,
      {"ltsim certify corpus/models/pair/f.json corpus/models/pair/g.json --eps 0.1",
       "ltsim certify corpus/families/bump_s2.71_period2/f.json "
       "corpus/families/bump_s2.71_period2/g.json --eps 0.05 --json",
       "ltsim certify corpus/models/pair/f.json corpus/models/pair/f.json --eps 0"},
      fmt::format(
          "Lengths ≤ T0 are searched by the exact threshold (docs/theory.md §11); longer ones by a "
          "branch and bound over the frequencies n/F and 1/F of every context, whose certified "
          "bound covers every length > T0 up to infinity (docs/theory.md §12). Exit 0: agrees at "
          "every length (no string disagrees by the threshold's rule: sup_gap_upper ≤ ε + 1e-9); "
          "1: disagrees (first_disagreement = T*, exact, with "
          "witness_text); 3: undecided, the supremum's bracket [sup_gap_lower, sup_gap_upper] "
          "holds "
          "ε and is within --tolerance (reason \"tolerance\"), or --max-boxes was spent "
          "(\"budget\"), or --time-budget passed (\"time budget\", JSON stopped_by); 2: bad "
          "input. One-layer models with bias_scaling none; D* = S·Δ* ≤ {}, "
          "τ* ≤ {}, Δ*·S^(τ*+1) ≤ {} contexts; T* found exactly up to {}.",
          kThresholdMaxTypes, kThresholdMaxLocality, kCertifyMaxContexts, kThresholdMaxLength));
  cmd->add_option("F", args->f, "model f (one layer)")->required();
  cmd->add_option("G", args->g, "model g (same alphabet and number of outputs)")->required();
  cmd->add_option("--eps", args->options.epsilon, "ε ≥ 0: agreement means |f - g| ≤ ε")->required();
  AddSeed(cmd, args->options.seed, "printed; the decision uses no randomness");
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--initial-length", args->options.initial_length,
                  "T0 to start from (raised ×8 while a finite range of lengths blocks the "
                  "decision)")
      ->default_val(args->options.initial_length);
  cmd->add_option("--max-exact-length", args->options.max_exact_length,
                  "the largest T0, and the longest exact search for T*")
      ->default_val(args->options.max_exact_length);
  cmd->add_option("--tolerance", args->options.tolerance,
                  "undecided when the supremum's certified bracket around ε is this narrow")
      ->default_val(args->options.tolerance);
  cmd->add_option("--max-boxes", args->options.max_boxes,
                  "boxes of the limit search before it stops (undecided, reason budget)")
      ->default_val(args->options.max_boxes);
  cmd->add_option("--time-budget", args->options.time_budget,
                  "seconds (0: none): stop then with what is certified so far (undecided, reason "
                  "\"time budget\", JSON stopped_by; a decision reached before it stands)")
      ->default_val(args->options.time_budget);
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  cmd->add_flag("--json", args->json, "print every number as JSON");
  cmd->callback([args, &exit_code] { exit_code = RunCertify(*args); });
}

}  // namespace ltsim::cli
