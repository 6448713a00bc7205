// `ltsim sweep`: needed length against one parameter, the fitted exponent vs Thm 4.1's, PNGs.
// Three quantities, labelled everywhere (docs/statistics.md §5): the simulator on found x (what
// the sweep measures), the upper side (the construction's certified length) and the paper.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "commands.h"
#include "common_options.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/dist/dist.h"
#include "ltsim/model/model_file.h"
#include "ltsim/study/fit_report.h"
#include "ltsim/study/sweep.h"
#include "number_list.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string parameter, values, input = "stress", out, method = "search";
  SweepOptions options;
  std::vector<std::string> user_pair;  // --pair F G
  const CLI::Option* strategy_flag = nullptr;
  bool json = false;
  DistArgs dist;
};

SweepOptions BuildOptions(const SweepArgs& args) {
  SweepOptions options = args.options;
  // Theorem 4.1's parameters (n is Lemma 5.3's, for `tightness --theorem 5.3`).
  std::vector<std::string> known;
  std::string list;
  for (StudyParameter p : SweepParameters()) {
    known.emplace_back(ParameterName(p));
    list += (list.empty() ? "" : ", ") + known.back();
  }
  const auto parameter = kStudyParameterNames.Find(args.parameter);
  if (!parameter || std::find(SweepParameters().begin(), SweepParameters().end(), *parameter) ==
                        SweepParameters().end())
    throw InputError("--parameter: unknown '" + args.parameter + "'" +
                     DidYouMean(args.parameter, known) + " (known: " + list + ")");
  options.parameter = *parameter;
  options.values = ParseNumberList(args.values, "--values");
  options.input = ParseInputKind(args.input);
  if (args.method != "search" && args.method != "random")
    throw InputError("--strategy: unknown '" + args.method + "'" +
                     DidYouMean(args.method, {"search", "random"}) + " (known: search, random)");
  options.search = args.method == "search";
  if (!args.user_pair.empty()) {
    auto user = std::make_shared<UserPair>();
    user->f_file = args.user_pair[0];
    user->g_file = args.user_pair[1];
    user->f = ReadModel(user->f_file);
    user->g = ReadModel(user->g_file);
    options.pair = std::move(user);
    // A user's pair is measured as given: K inputs a point, unless a search was asked for
    // (which the library refuses, naming --strategy).
    if (args.strategy_flag->count() == 0) options.search = false;
  }
  return options;
}

std::string MethodName(const SweepOptions& o) {
  if (o.pair)
    return fmt::format("the pair {} {} as given, on K = {} inputs x", o.pair->f_file,
                       o.pair->g_file, o.pairs);
  return o.search ? fmt::format(
                        "search (K = {} hill climbs of {} proposals, objective needed, "
                        "proposals logits)",
                        o.pairs, o.iterations)
                  : fmt::format("random (max over K = {} random pairs)", o.pairs);
}

std::string FitKind(const SweepOptions& o) {
  return FitsInverseValue(o.parameter) ? "ln n = a + b/gamma (log-linear in 1/gamma)"
                                       : "ln n = a + b ln x (log-log)";
}

constexpr const char* kSimulatorLabel = "simulator on found x";
constexpr const char* kUpperLabel = "upper side";
constexpr const char* kPaperLabel = "paper";

Json SpreadJson(const Spread& s) {
  return {{"min", Number(s.min)}, {"median", Number(s.median)}, {"max", Number(s.max)}};
}

// An exponent is shown only with its interval: a slope through fewer points is no measurement.
Json EstimateJson(const ExponentEstimate& e) {
  Json j;
  AppendEstimate(
      j, e,
      {EstimateField::kExponentWithInterval, EstimateField::kCi, EstimateField::kLevel,
       EstimateField::kTInterval, EstimateField::kBootstrapInterval, EstimateField::kPoints,
       EstimateField::kPointsUsed, EstimateField::kPointsCensored, EstimateField::kReason});
  return j;
}

// The pair's point witness (`ltsim replay` re-runs it) relative to the output directory (so
// the outputs are the same bytes wherever they are written), null without --out-dir.
// The adaptive |x| of a pair: [[|x|, needed n], …] (empty with |x| fixed).
Json XSteps(const SweepPair& q) {
  Json steps = Json::array();
  for (const auto& [length, needed] : q.x_steps) steps.push_back(Json::array({length, needed}));
  return steps;
}

Json WitnessFile(const SweepPair& q) {
  return q.witness_file.empty() ? Json(nullptr) : Json(q.witness_file);
}

std::string WitnessPath(const SweepOptions& o, const SweepPair& q) {
  return (fs::path(o.out_dir) / q.witness_file).string();
}

Json PointJson(const SweepPoint& p) {
  Json pairs = Json::array();
  for (const SweepPair& q : p.pairs)
    pairs.push_back(
        {{"index", q.index},
         {"seed", q.seed},
         {"needed_length", q.needed},
         {"reached", q.reached},
         {"censoring", CensoringName(q.censoring)},
         {"sim_at_fixed", Number(q.sim_at_fixed)},
         {"x_length", q.x_length},
         {"x_explicit", q.x_explicit},
         {"accepted", q.accepted},
         {"x_steps", XSteps(q)},
         {"x_stop", q.x_stop.empty() ? Json(nullptr) : Json(q.x_stop)},
         {"gamma", Number(q.constants.at("gamma"))},
         {"L", Number(q.constants.at("L"))},
         {"t_hard", std::isnan(q.log2_t_hard) ? Json(nullptr) : Number(std::exp2(q.log2_t_hard))},
         {"hardmax_regime", q.hardmax_regime},
         {"upper_side", Number(q.upper_side)},
         {"witness_file", WitnessFile(q)}});
  const SweepPair& w = p.pairs[p.witness];
  Json simulator = SpreadJson(p.spread);
  simulator["censoring"] = CensoringName(p.censoring);
  simulator["censored"] = p.censoring != Censoring::kNone;
  simulator["samples"] = Json::array();
  for (const Sample& s : p.simulator.samples) simulator["samples"].push_back(Number(s.value));
  simulator["in_fit"] = p.in_fit;
  simulator["excluded"] = p.excluded;
  Json upper = SpreadJson(p.upper_spread);
  upper["certified_length"] = Number(p.upper_spread.max);
  return {{"value", p.value},
          {"fit_x", Number(p.fit_x)},
          {"needed_length", p.needed},
          {"reached", w.reached},
          {"witness", {{"pair", w.index}, {"seed", w.seed}}},
          {"sim_at_fixed", Number(p.sim_at_fixed)},
          {"bound", Number(p.bound)},
          {"frequency_bound", Number(p.ours)},
          {"ratio", Number(p.ratio)},
          {"hardmax_regime", p.hardmax_regime},
          {"t_hard", Number(p.t_hard)},
          {kSimulatorLabel, simulator},
          {kUpperLabel, upper},
          {kPaperLabel, {{"bound", Number(p.bound)}}},
          {"pairs", pairs},
          {"witness_file", WitnessFile(w)}};
}

std::string UpperSource(const SweepOptions& o) {
  return o.parameter == StudyParameter::kMargin
             ? "max(frequency-length, thm4.1-hardmax 2^(p/gamma)) [ours]: the construction's "
               "certified |z| (its certificate holds from T_hard on)"
             : "frequency-length [ours]: the construction's certified |z|";
}

Json SweepJson(const SweepResult& r) {
  const SweepOptions& o = r.options;
  Json doc;
  doc["context"] = ReproducibleContext("sweep", o.seed);
  doc["options"] = SweepOptionsToJson(o);
  doc["method"] = MethodName(o);
  doc["fit_kind"] = FitKind(o);
  doc["fit_x"] = o.parameter == StudyParameter::kScale    ? "L (largest over the point's pairs)"
                 : o.parameter == StudyParameter::kMargin ? "1/gamma"
                                                          : ParameterName(o.parameter);
  doc["points"] = Json::array();
  for (const SweepPoint& p : r.points) doc["points"].push_back(PointJson(p));
  doc["fit"] = SlopeFitJson(r.simulator);
  doc["paper_exponent"] = r.paper_exponent;
  Json simulator = EstimateJson(r.simulator);
  simulator["what"] =
      "the frequency simulator's needed length on each pair's found x (neither bound); "
      "censored points and points outside the hardmax regime never enter the fit";
  simulator["trend"] = TrendName(r.trend.trend);
  simulator["trend_reason"] = r.trend.reason;
  simulator["monotone"] = r.trend.monotone;
  simulator["points_outside_regime"] = r.points_outside_regime;
  doc[kSimulatorLabel] = simulator;
  Json upper = EstimateJson(r.upper_side);
  upper["what"] = UpperSource(o);
  doc[kUpperLabel] = upper;
  doc[kPaperLabel] = {{"exponent", r.paper_exponent},
                      {"what", o.parameter == StudyParameter::kMargin
                                   ? "thm4.1-hardmax 2^(p/gamma): b = p ln 2"
                                   : "thm4.1-length L^2 Delta^7 S^6 tau^2 / eps^2"}};
  doc["hardmax_regime_margin"] = kHardmaxRegimeMargin;
  const std::string warning = HardmaxRegimeWarning(r);
  doc["warnings"] = warning.empty() ? Json::array() : Json::array({warning});
  // No uncensored sample: no constant, and no pair attains it.
  const bool constant = !std::isnan(r.empirical_constant);
  const SweepPair& c = r.points[r.constant_point].pairs[r.constant_pair];
  doc["empirical_constant"] = {
      {"value", Number(r.empirical_constant)},
      {"point", constant ? Json(r.constant_point) : Json(nullptr)},
      {"pair", constant ? Json(r.constant_pair) : Json(nullptr)},
      {"seed", constant ? Json(c.seed) : Json(nullptr)},
      {"what", "max over uncensored samples of needed length / the point's bound"},
      {"witness_file", constant ? WitnessFile(c) : Json(nullptr)}};
  return doc;
}

// The legacy columns keep their positions; the labelled ones follow.
std::string Csv(const SweepResult& r) {
  std::string csv =
      "value,fit_x,needed_length,reached,witness_pair,witness_seed,sim_at_fixed,"
      "bound,frequency_bound,ratio,method,simulator_min,simulator_median,simulator_max,"
      "simulator_censoring,simulator_in_fit,hardmax_regime,t_hard,upper_side_median,paper,"
      "witness_file\n";
  const char* method = r.options.search ? "search" : "random";
  for (const SweepPoint& p : r.points) {
    const SweepPair& w = p.pairs[p.witness];
    csv +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.value,
                    p.fit_x, p.needed, w.reached ? 1 : 0, w.index, w.seed, p.sim_at_fixed, p.bound,
                    p.ours, p.ratio, method, p.spread.min, p.spread.median, p.spread.max,
                    CensoringName(p.censoring), p.in_fit ? 1 : 0, p.hardmax_regime ? 1 : 0,
                    p.t_hard, p.upper_spread.median, p.bound, w.witness_file);
  }
  return csv;
}

std::string ShowEstimate(const ExponentEstimate& e) {
  if (!e.ci)
    return fmt::format("no exponent ({}; {} of {} points fitted)", e.reason, e.points_used,
                       e.points);
  return fmt::format("{} (95% CI [{}, {}], {} of {} points fitted)", Show(e.exponent),
                     Show(e.ci->first), Show(e.ci->second), e.points_used, e.points);
}

void PrintTable(const SweepResult& r) {
  const SweepOptions& o = r.options;
  std::cout << fmt::format("sweep {} over {} values, |x| = {}, seed {}\n",
                           ParameterName(o.parameter), o.values.size(), o.x_length, o.seed);
  std::cout << fmt::format("pairs per point: {}\n", MethodName(o));
  std::cout << fmt::format(
      "{}: the frequency simulator's needed n on each pair's x, min/median/max over the {} "
      "pairs (neither bound)\n{}: {}\n{}: Thm 4.1's bound ({})\n",
      kSimulatorLabel, o.pairs, kUpperLabel, UpperSource(o), kPaperLabel,
      o.parameter == StudyParameter::kMargin ? "max(thm4.1-hardmax, thm4.1-length)"
                                             : "thm4.1-length");
  std::cout << fmt::format("{:>10} {:>28} {:>9} {:>12} {:>12} {:>12} {:>8}  {}\n",
                           ParameterName(o.parameter), "simulator on found x", "censored",
                           "upper side", "paper", "sim@n=" + std::to_string(o.fixed_n), "worst",
                           "in fit");
  for (const SweepPoint& p : r.points) {
    const SweepPair& w = p.pairs[p.witness];
    const std::string spread =
        fmt::format("{} / {} / {}", Show(p.spread.min), Show(p.spread.median), Show(p.spread.max));
    std::cout << fmt::format("{:>10} {:>28} {:>9} {:>12} {:>12} {:>12} {:>8}  {}\n", Show(p.value),
                             spread,
                             p.censoring == Censoring::kNone ? "-" : CensoringName(p.censoring),
                             Show(p.upper_spread.median), Show(p.bound), Show(p.sim_at_fixed),
                             fmt::format("k={}{}", w.index, w.reached ? "" : "+"),
                             p.in_fit ? "yes" : "no: " + p.excluded);
  }
  std::cout << fmt::format("exponent   {}: {} vs paper {} ({}, in {})\n", kSimulatorLabel,
                           ShowEstimate(r.simulator), Show(r.paper_exponent), FitKind(o),
                           o.parameter == StudyParameter::kScale ? "L"
                           : o.parameter == StudyParameter::kMargin
                               ? "1/gamma; paper p ln 2 from 2^(p/gamma)"
                               : ParameterName(o.parameter));
  std::cout << fmt::format("trend      {}: {} ({})\n", kSimulatorLabel, TrendName(r.trend.trend),
                           r.trend.reason);
  std::cout << fmt::format("exponent   {}: {}\n", kUpperLabel, ShowEstimate(r.upper_side));
  const SweepPair& c = r.points[r.constant_point].pairs[r.constant_pair];
  if (std::isnan(r.empirical_constant))
    std::cout << "constant   max needed/bound over uncensored pairs: none (every pair is "
                 "censored)\n";
  else
    std::cout << fmt::format(
        "constant   max needed/bound over uncensored pairs = {} at {} = {}, pair {}{}\n",
        Show(r.empirical_constant), ParameterName(o.parameter),
        Show(r.points[r.constant_point].value), r.constant_pair,
        c.witness_file.empty() ? "" : " (" + WitnessPath(o, c) + ")");
  if (!r.points.front().pairs.front().witness_file.empty())
    std::cout << fmt::format(
        "witnesses  one per pair: {}/{}/p<i>_m<k>.point.json (ltsim replay "
        "FILE re-runs one)\n",
        o.out_dir, ParameterName(o.parameter));
  std::cout << "(censored above, + = no n < |x| met ε: the needed length is at least |x|; below = "
               "the grid's first n met ε: at most that n. A censored point is a bound and never "
               "fitted)\n";
}

}  // namespace

void AddSweepCommand(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd =
      app.add_subcommand("sweep",
                         "Vary one parameter, measure the frequency simulator's needed length on "
                         "K pairs per point found by a short search (default) or drawn at random "
                         "(min/median/max, censored at |x| or the grid floor), fit its exponent "
                         "over the uncensored points and show it beside the construction's "
                         "certified length (upper side) and Thm 4.1's L²Δ⁷|Σ|⁶τ²/ε² (margin: "
                         "2^(p/γ)).");
  cmd->add_option("--parameter", args->parameter,
                  "scale (weight scale; fitted against L), alphabet, period, locality, eps or "
                  "margin (γ of finite-precision pairs; fitted as ln n against 1/γ)")
      ->required();
  cmd->add_option("--values", args->values, "comma-separated grid, e.g. 2,3,4")->required();
  cmd->add_option("--eps", args->options.eps, "ε (default 0.01)");
  cmd->add_option("--pairs", args->options.pairs,
                  "K per point: search restarts or random pairs (default 4)");
  cmd->add_option("--pair", args->user_pair,
                  "measure this one-layer pair F G (model files) as given instead of drawn "
                  "pairs: only --parameter eps, K = --pairs inputs x a point")
      ->expected(2);
  args->strategy_flag =
      cmd->add_option("--strategy", args->method,
                      "how the worst pair of a point is found: search (default: K hill climbs per "
                      "point, structure and x move, L fixed) or random (max over K random pairs)");
  AddDeprecated(cmd, "--method", args->method, "--strategy",
                "in sweep it named the search strategy, not a simulator");
  cmd->add_option("--iterations", args->options.iterations,
                  "proposals per hill climb with --strategy search (default 16)");
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--precision", args->options.precision_bits,
                  "p bits of the margin sweep's finite attention (default 8)");
  AddSeed(cmd, args->options.seed);
  cmd->add_option("--x-length", args->options.x_length,
                  "|x| (default 20000; finite attention needs |x| >= 4·2^(p/γ), else the point is "
                  "marked outside the hardmax regime and not fitted)");
  cmd->add_option(
      "--max-x-length", args->options.max_x_length,
      "grow each pair's x ×4 from --x-length until its needed n stops growing, reaches "
      "the upper side or |x| reaches this cap; the pair keeps its worst |x| (default 0: "
      "|x| fixed)");
  cmd->add_option("--z-length", args->options.fixed_n,
                  "the length n of z at which sim is also recorded (default 500)");
  AddDeprecated(cmd, "--fixed-n", args->options.fixed_n, "--z-length");
  cmd->add_option(
      "--grid", args->options.base.grid,
      "weight grid 2^-k (default 1: coarse grids tie logits, so maximal sets have several types)");
  cmd->add_option("--delta", args->options.delta, "g = f + δ·N(0, 1) (default 0.01)");
  cmd->add_option("--input", args->input, "input family of x (default stress)");
  AddOutDir(cmd, args->out,
            "write sweep.json, sweep.csv, sweep.png and sweep.svg in this directory, and a "
            "point witness per pair, <parameter>/p<i>_m<k>.point.json (ltsim replay FILE)");
  cmd->add_flag("--json", args->json, "print the JSON document instead of the table");
  AddDistOptions(cmd, args->dist);
  SetExamples(cmd, {"ltsim sweep --parameter period --values 1,2,3 --pairs 2 --x-length 1500 "
                    "--z-length 100",
                    "ltsim sweep --parameter margin --values 1,2,4 --pairs 2 --strategy random "
                    "--x-length 1500 --json",
                    "ltsim sweep --pair corpus/models/pair/f.json corpus/models/pair/g.json "
                    "--parameter eps --values 0.05,0.1,0.2 --pairs 2 --x-length 3000"});
  cmd->callback([args] {
    SetCommandFlags({{"precision_bits", "--precision"}});  // the library's keys (commands.h)
    CommandDealer dealer(args->dist);
    SweepOptions options = BuildOptions(*args);
    // The process that writes locks and checks --out-dir before any work and writes into a
    // staging directory swapped in whole at the end (io/output_dir.h); the others only need
    // to know that witnesses are wanted (their items then carry the models).
    std::unique_ptr<io::OutputSet> set;
    if (!args->out.empty() && dealer.Reduces())
      set = std::make_unique<io::OutputSet>(args->out, "sweep");
    options.out_dir = set ? set->staging() : args->out;  // a point witness per pair
    options.dealer = &dealer.get();  // the (point, pair) cells, over MPI ranks or shards
    // This process's share of the cells (rank 0 alone prints under MPI).
    Progress progress("sweep", "pairs");
    if (dist::Rank() == 0) options.progress = progress.Callback();
    SweepResult r = RunSweep(options);
    progress.Finish();
    if (!dealer.Reduces()) return dealer.FinishShard();
    if (set) r.options.out_dir = set->dir();  // what the table names
    const std::string warning = HardmaxRegimeWarning(r);
    if (!warning.empty()) std::cerr << "ltsim sweep: warning: " << warning << "\n";
    Report(
        SweepJson(r), Csv(r), args->json, [&] { PrintTable(r); }, set.get(), "sweep",
        LTSIM_PLOT_SCRIPT);
  });
}

}  // namespace ltsim::cli
