// `ltsim threshold F G --eps e --max-length N`: the first length where f and g differ by > ε.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "common_options.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/eval/precise.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/raw_threshold_search.h"
#include "ltsim/threshold/threshold.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

// Lengths shown in the text table (the last ones searched).
constexpr std::size_t kTableRows = 10;

// Set by SIGINT/SIGTERM: the search stops and prints what it has certified (exit 130).
std::atomic<bool> g_stop{false};
extern "C" void OnThresholdSignal(int) { g_stop.store(true); }

struct ThresholdArgs {
  std::string f, g;
  ThresholdOptions options;
  std::string out;
  bool json = false;
  DistArgs dist;
  bool no_prune = false;
  bool no_paths = false;
  bool quiet = false;
};

Json RunsJson(const std::vector<Run>& runs) {
  Json out = Json::array();
  for (const Run& run : runs) out.push_back({run.token, run.count});
  return out;
}

Json ViewJson(const JointView& view) {
  return {{"alphabet", view.alphabet},
          {"period", view.period},
          {"locality", view.locality},
          {"types", view.alphabet * view.period}};
}

std::string PruningText(const ThresholdResult& r) {
  if (!r.pruned) return "none: every statistic evaluated";
  return fmt::format(
      "certified cell bound (docs/theory.md §11): {} statistics evaluated, the other {} lie in "
      "cells whose bound on |f - g| is <= eps (at the first disagreement: <= the largest gap "
      "there); the largest bound of a pruned cell was {}",
      r.statistics_evaluated, r.statistics_pruned, Show(r.max_pruned_bound));
}

std::string PathsText(const ThresholdResult& r) {
  return fmt::format(
      "paths of first-layer nodes (docs/theory.md §11.5): every string up to length {} "
      "evaluated, then {} sets of paths over a DAG of {} nodes, {} settled by a certified bound "
      "on |f - g| (<= eps; at the first disagreement: <= the largest gap there), {} enumerated, "
      "{} dynamic programmes; {} strings evaluated in all",
      r.paths.enumerated_up_to, r.paths.sets, r.paths.nodes, r.paths.sets_pruned, r.paths.leaves,
      r.paths.programs, r.evaluations);
}

Json ThresholdJson(const ThresholdArgs& args, const ThresholdResult& r) {
  const bool found = r.first_disagreement.has_value();
  Json doc;
  doc["context"] = Context("threshold", args.options.seed, r.threads);
  doc["method"] = ThresholdMethodName(r.method);
  doc["epsilon"] = args.options.epsilon;
  doc["max_length"] = args.options.max_length;
  doc["view"] = ViewJson(r.view);
  doc["first_disagreement"] = found ? Json(*r.first_disagreement) : Json(nullptr);
  doc["gap"] = found ? Number(r.gap) : Json(nullptr);
  doc["witness"] = found ? RunsJson(r.witness) : Json(nullptr);
  doc["witness_text"] = found ? Json(RunLengthText(r.witness)) : Json(nullptr);
  doc["f_witness"] = found ? Array(r.f_witness) : Json(nullptr);
  doc["g_witness"] = found ? Array(r.g_witness) : Json(nullptr);
  doc["checked_up_to"] = r.checked_up_to;
  doc["exhaustive"] = r.exhaustive;
  doc["exhaustive_up_to"] = r.exhaustive_up_to;
  doc["samples_per_length"] = r.samples_per_length;
  doc["evaluations"] = r.evaluations;
  doc["tolerance"] = {{"relative", kThresholdGapTolerance},
                      {"rule", "gap > eps + relative * max(1, |f|_inf, |g|_inf)"}};
  doc["recheck"] = found ? Json{{"status", kRecheckClaimNames.Name(r.recheck.status)},
                                {"digits", kPreciseDigits},
                                {"precise_gap", r.recheck.precise_gap},
                                {"note", r.recheck.note}}
                         : Json(nullptr);
  if (r.method == ThresholdMethod::kStatistics) {
    doc["search_period"] = r.search_period > 0 ? Json(r.search_period) : Json(r.view.period);
    doc["statistics_total"] = r.statistics_total;
    doc["statistics_evaluated"] = r.statistics_evaluated;
    doc["statistics_pruned"] = r.statistics_pruned;
    doc["statistics_precise"] = r.statistics_precise;
    doc["pruning"] = PruningText(r);
    doc["cells"] = r.cells;
    doc["cells_pruned"] = r.cells_pruned;
    doc["max_pruned_bound"] = r.pruned ? Number(r.max_pruned_bound) : Json(nullptr);
  }
  if (r.method == ThresholdMethod::kPaths) {
    doc["paths"] = {{"nodes", r.paths.nodes},
                    {"enumerated_up_to", r.paths.enumerated_up_to},
                    {"sets", r.paths.sets},
                    {"sets_pruned", r.paths.sets_pruned},
                    {"leaves", r.paths.leaves},
                    {"programs", r.paths.programs},
                    {"limit_length", r.paths.limit_length}};
    doc["pruning"] = PathsText(r);
  }
  doc["min_length"] = r.min_length;
  doc["complete"] = r.complete;
  doc["stopped_by"] =
      r.stopped == ThresholdStop::kNone ? Json(nullptr) : Json(ThresholdStopName(r.stopped));
  doc["threads"] = r.threads;
  Json gaps = Json::array(), uppers = Json::array();
  for (double gap : r.max_gap_per_length) gaps.push_back(Number(gap));
  for (double gap : r.gap_upper_per_length) uppers.push_back(Number(gap));
  // max_gap_per_length is kept as it was: the same lower bounds as gap_lower_per_length.
  doc["max_gap_per_length"] = gaps;
  doc["gap_lower_per_length"] = gaps;
  doc["gap_upper_per_length"] = uppers;
  return doc;
}

// threshold.csv: per length its bracket of the largest gap (empty: not certified there).
std::string Csv(const ThresholdResult& r) {
  const auto cell = [](double v) { return std::isfinite(v) ? fmt::format("{:.17g}", v) : ""; };
  std::string csv = "length,gap_lower,gap_upper\n";
  for (std::size_t k = 0; k < r.max_gap_per_length.size(); ++k)
    csv += fmt::format("{},{},{}\n", k + 1, cell(r.max_gap_per_length[k]),
                       cell(k < r.gap_upper_per_length.size() ? r.gap_upper_per_length[k] : NAN));
  return csv;
}

std::string Coverage(const ThresholdResult& r) {
  // Statistics whose double gap could round across ε + tolerance were decided in 50 digits.
  const std::string precise =
      r.statistics_precise > 0
          ? fmt::format(
                "; {} decided in 50 digits, their double gap being within its rounding "
                "bound of eps (docs/theory.md §8.7)",
                r.statistics_precise)
          : std::string();
  if (r.exhaustive && r.pruned)
    return "exact: every statistic evaluated or covered by a certified bound" + precise;
  if (r.exhaustive && r.method == ThresholdMethod::kPaths)
    return "exact: every string evaluated or covered by a certified bound over sets of paths, "
           "in double precision (no rounding bound for two-layer models, docs/theory.md §8.7)";
  if (r.exhaustive && r.method == ThresholdMethod::kStatistics)
    return "exact: every string of every length checked" + precise;
  if (r.exhaustive)
    return "every string of every length checked, in double precision (no rounding bound for "
           "two-layer models, docs/theory.md §8.7)";
  if (r.method == ThresholdMethod::kPaths)
    return fmt::format(
        "exact up to length {} (paths; the path search's limit), then {} random strings a length",
        r.exhaustive_up_to, r.samples_per_length);
  return fmt::format("every string up to length {}, then {} random strings a length",
                     r.exhaustive_up_to, r.samples_per_length);
}

void PrintVerdict(const ThresholdArgs& args, const ThresholdResult& r) {
  const double eps = args.options.epsilon;
  if (!r.first_disagreement) {
    const std::string from =
        r.min_length > 1 ? fmt::format(" from length {}", r.min_length) : std::string();
    if (r.checked_up_to < r.min_length) {
      std::cout << fmt::format("  stopped by the {} before any length{} was certified\n",
                               ThresholdStopName(r.stopped), from);
      return;
    }
    std::cout << fmt::format(
        "  no disagreement > ε = {}{} up to length {} ({}){}\n", Show(eps), from, r.checked_up_to,
        Coverage(r),
        r.complete ? ""
                   : fmt::format("; stopped by the {} before {}", ThresholdStopName(r.stopped),
                                 args.options.max_length));
    return;
  }
  std::cout << fmt::format("  first disagreement at T = {}: gap {} > ε = {} ({})\n",
                           *r.first_disagreement, Show(r.gap), Show(eps), Coverage(r));
  std::cout << fmt::format("  witness: {}\n", RunLengthText(r.witness));
  std::cout << fmt::format("  f(witness) = {}   g(witness) = {}\n", Show(r.f_witness),
                           Show(r.g_witness));
  std::cout << fmt::format("  {}-digit recheck: {} (precise gap {}; {})\n", kPreciseDigits,
                           kRecheckClaimNames.Name(r.recheck.status), r.recheck.precise_gap,
                           r.recheck.note);
}

void PrintTable(const ThresholdArgs& args, const ThresholdResult& r) {
  std::cout << fmt::format("ltsim threshold   seed {}   method {}\n", args.options.seed,
                           ThresholdMethodName(r.method));
  std::cout << fmt::format("  f: {}   g: {}\n", args.f, args.g);
  std::cout << fmt::format("  joint view: S = {}, Δ* = {}, τ* = {};  {} evaluations, {} threads\n",
                           r.view.alphabet, r.view.period, r.view.locality, r.evaluations,
                           r.threads);
  if (r.method == ThresholdMethod::kStatistics)
    std::cout << fmt::format("  pruning: {}\n", PruningText(r));
  if (r.method == ThresholdMethod::kPaths) std::cout << fmt::format("  search: {}\n", PathsText(r));
  std::cout << "\n";
  // Each length's largest gap max_x |f(x) - g(x)| lies in [attained, certified upper bound].
  std::cout << fmt::format("  {:>10}  {:>16}  {:>16}\n", "length T",
                           "max |f-g| >=", "max |f-g| <=");
  const std::size_t n = r.max_gap_per_length.size();
  const std::size_t first =
      std::max<std::size_t>(r.min_length - 1, n > kTableRows ? n - kTableRows : 0);
  for (std::size_t k = first; k < n; ++k) {
    const double gap = r.max_gap_per_length[k], upper = r.gap_upper_per_length[k];
    std::cout << fmt::format(
        "  {:>10}  {:>16}  {:>16}{}\n", k + 1,
        std::isnan(gap) ? std::string("(none evaluated)") : Show(gap),
        std::isnan(upper) ? std::string("(no bound)") : Show(upper),
        r.first_disagreement && k + 1 == *r.first_disagreement ? "   > ε" : "");
  }
  std::cout
      << "  (>= : attained by an evaluated string; <= : certified bound on every string of that "
         "length)\n\n";
  PrintVerdict(args, r);
}

// The size of the search (every statistic of lengths n … N, the up-front estimate of the work
// a full enumeration would do) and an ETA from the progress so far. --no-prune: the remaining
// statistics are known. The pruned search: its time is extrapolated as a power of T fitted to
// the last two progress points.
class Eta {
 public:
  Eta(const JointView& view, bool prune, std::uint64_t min_length, std::uint64_t max_length)
      : view_(view), prune_(prune), n_(min_length), N_(max_length) {}

  std::string operator()(std::uint64_t done, double seconds) {
    // The up-front size of the search: every statistic of every length n … N.
    if (all_ < 0.0) all_ = Work(n_, N_);
    const std::string size = fmt::format("of {:.3g} statistics", all_);
    if (done >= N_ || seconds <= 0.0) return size;
    std::string what;
    double left = 0.0;
    if (!prune_) {
      const double work = Work(n_, done);
      if (work <= 0.0) return size;
      left = seconds * (all_ - work) / work;
    } else {
      // t(T) ∝ T^p through the last two points (p clamped to [1, 4]: the work of a window
      // grows at least with its lengths).
      double p = 1.0;
      if (last_done_ > 0 && done > last_done_ && seconds > last_seconds_ && last_seconds_ > 0.0)
        p = std::clamp(std::log(seconds / last_seconds_) /
                           std::log(static_cast<double>(done) / static_cast<double>(last_done_)),
                       1.0, 4.0);
      last_done_ = done;
      last_seconds_ = seconds;
      left = seconds * (std::pow(static_cast<double>(N_) / static_cast<double>(done), p) - 1.0);
      what = fmt::format(" (extrapolated as T^{:.1f})", p);
    }
    return fmt::format("{}, ETA {}{}", size, Duration(left), what);
  }

 private:
  static std::string Duration(double s) {
    if (s < 120) return fmt::format("{:.0f} s", s);
    if (s < 7200) return fmt::format("{:.0f} min", s / 60);
    return fmt::format("{:.1f} h", s / 3600);
  }
  double Work(std::uint64_t from, std::uint64_t to) const {
    double sum = 0.0;
    for (std::uint64_t t = from; t <= to; ++t)
      sum += static_cast<double>(CountStatistics(view_.alphabet, view_.period, view_.locality, t));
    return sum;
  }
  JointView view_;
  bool prune_;
  std::uint64_t n_, N_;
  std::uint64_t last_done_ = 0;
  double last_seconds_ = 0.0;
  double all_ = -1.0;
};

void RunThreshold(ThresholdArgs args, int& exit_code) {
  SetCommandFlags({{"max_length", "--max-length"},
                   {"min_length", "--min-length"},
                   {"time_budget", "--time-budget"},
                   {"samples_per_length", "--samples"}});
  const Transformer f = ReadModel(args.f);
  const Transformer g = ReadModel(args.g);
  CheckPair(f, g, args.f, args.g);  // names both files
  if (!args.out.empty() && !args.dist.shard.empty())
    throw OptionError("out-dir", "is not taken with --shard (`ltsim merge` prints the result)");
  CommandDealer dealer(args.dist);
  // --out-dir locked and checked before any work, written as one set (io/output_dir.h).
  std::unique_ptr<io::OutputSet> set;
  if (!args.out.empty() && dealer.Reduces())
    set = std::make_unique<io::OutputSet>(args.out, "threshold");
  ThresholdOptions options = args.options;
  options.dealer = &dealer.get();  // the lengths, over MPI ranks or shards
  options.prune = !args.no_prune;
  options.two_layer_paths = !args.no_paths;
  options.stop = &g_stop;
  std::signal(SIGINT, OnThresholdSignal);
  std::signal(SIGTERM, OnThresholdSignal);
  std::shared_ptr<Progress> progress;
  const bool one_layer = f.layers.size() == 1 && g.layers.size() == 1;
  if (!args.quiet && dealer.Reduces()) {
    progress = std::make_shared<Progress>("threshold", "lengths");
    std::shared_ptr<Eta> eta;
    if (one_layer && f.alphabet == g.alphabet) {
      // The work per length needs the view within the search's limits (else FindThreshold
      // refuses the pair before any progress).
      const JointView view = JointViewOf({&f, &g});
      if (static_cast<long long>(view.alphabet) * view.period <= kThresholdMaxTypes &&
          view.locality <= kThresholdMaxLocality)
        eta = std::make_shared<Eta>(view, options.prune, options.min_length, options.max_length);
    }
    options.progress = [progress, eta](std::uint64_t done, std::uint64_t total,
                                       std::uint64_t evaluations, double seconds) {
      const std::string left = eta ? (*eta)(done, seconds) : std::string();
      progress->Update(
          done, total,
          fmt::format("{} evaluations{}", evaluations, left.empty() ? "" : ", " + left));
    };
  }
  const ThresholdResult result = FindThreshold(f, g, options);
  if (progress) progress->Finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (result.stopped == ThresholdStop::kSignal) exit_code = 130;
  if (!dealer.Reduces()) return dealer.FinishShard();
  Report(
      ThresholdJson(args, result), Csv(result), args.json, [&] { PrintTable(args, result); },
      set.get(), "threshold", LTSIM_PLOT_THRESHOLD_SCRIPT);
}

std::string LimitsText() {
  return fmt::format(
      "A disagreement is a gap > ε + {}·max(1, |f|, |g|) (rounding is not a disagreement); the "
      "witness is rechecked in {} digits. Limits, checked before searching: N ≤ {}. One-layer "
      "pairs (exact, over the sufficient statistics in the joint view Δ* = lcm, τ* = max): "
      "D* = S·Δ* ≤ {}, τ* ≤ {}; by default cells of statistics are pruned by a certified bound "
      "(docs/theory.md §11), Δ*·S^(τ*+1) ≤ {} contexts, stopping after --max-evaluations; with "
      "--no-prune every statistic is evaluated, at most {} over all lengths ≤ N. Two-layer "
      "pairs (exact, every string a path of first-layer nodes, sets of paths pruned by a "
      "certified bound, docs/theory.md §11.5): lengths whose DAG has at most {} nodes and fits "
      "the memory estimate of {} GiB, then --samples random strings a length, at most {} tokens "
      "in all; with --no-paths every string while Σ S^T ≤ {} (T ≤ {}), then random strings.",
      kThresholdGapTolerance, kPreciseDigits, kThresholdMaxLength, kThresholdMaxTypes,
      kThresholdMaxLocality, kThresholdMaxContexts, kThresholdMaxStatistics, kThresholdPathMaxNodes,
      kThresholdPathMaxBytes >> 30, kThresholdMaxRandomTokens, kThresholdExhaustiveStrings,
      kThresholdExhaustiveMaxLength);
}

}  // namespace

void AddThresholdCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ThresholdArgs>();
  CLI::App* cmd = app.add_subcommand(
      "threshold",
      "The smallest length T ≤ N with a string where |f(x) - g(x)| > ε: exact for one- and "
      "two-layer pairs within the limits, random strings beyond.");
  SetExamples(cmd,
              {"ltsim threshold corpus/models/pair/f.json corpus/models/pair/g.json --eps 0.1 "
               "--max-length 12",
               "ltsim threshold corpus/models/modp_task_p3_k1.json "
               "corpus/models/modp_task_p5_k0.json --eps 0.5 --max-length 12 --json",
               "ltsim threshold corpus/families/bump_s2.71_period2/f.json "
               "corpus/families/bump_s2.71_period2/g.json --eps 0.05 --max-length 40 --threads 2",
               "ltsim threshold corpus/models/pair/f.json corpus/models/pair/g.json --eps 0.6 "
               "--max-length 30 --no-prune"},
              LimitsText());
  cmd->add_option("F", args->f, "model f")->required();
  cmd->add_option("G", args->g, "model g (same alphabet and number of outputs)")->required();
  cmd->add_option("--eps", args->options.epsilon, "ε ≥ 0: a disagreement is a gap > ε")->required();
  cmd->add_option("--max-length", args->options.max_length,
                  "N, the longest length searched: lengths 1 … N")
      ->required();
  cmd->add_option("--min-length", args->options.min_length,
                  "n ≤ N: search lengths n … N only (a model trained at length n judged from n on)")
      ->default_val(1);
  cmd->add_option("--time-budget", args->options.time_budget,
                  "seconds (0: none): stop then and report what is certified so far (as Ctrl-C "
                  "or SIGTERM do, which exit 130)")
      ->default_val(0);
  AddSeed(cmd, args->options.seed, "the random search of two-layer pairs");
  cmd->add_option("--samples", args->options.samples_per_length,
                  "random strings a length beyond the exhaustive range (two-layer pairs)")
      ->default_val(100);
  AddThreads(cmd, args->options.threads);
  cmd->add_flag("--no-prune", args->no_prune,
                "evaluate every statistic (one-layer pairs) instead of pruning cells");
  cmd->add_flag("--no-paths", args->no_paths,
                "two-layer pairs: every string up to the exhaustive limit, then random strings, "
                "instead of the exact path search");
  cmd->add_option("--max-evaluations", args->options.max_evaluations,
                  "pruned search: stop after the window that passes this many evaluations")
      ->default_val(args->options.max_evaluations);
  cmd->add_option("--out-dir", args->out,
                  "write threshold.json, threshold.csv and threshold.png (the certified bracket "
                  "of the largest gap against length, ε and T* marked)");
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  cmd->add_flag("--json", args->json, "print every number as JSON");
  AddDistOptions(cmd, args->dist);
  cmd->callback([args, &exit_code] { RunThreshold(*args, exit_code); });
}

}  // namespace ltsim::cli
