// `ltsim sweep`: needed length against one parameter, the fitted exponent vs Thm 4.1's, PNGs.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/dist/dist.h"
#include "ltsim/study/sweep.h"
#include "number_list.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct SweepArgs {
  std::string parameter, values, input = "stress", out, method = "search";
  SweepOptions options;
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
  if (!parameter || *parameter == StudyParameter::kN)
    throw InputError("--parameter: unknown '" + args.parameter + "'" +
                     DidYouMean(args.parameter, known) + " (known: " + list + ")");
  options.parameter = *parameter;
  options.values = ParseNumberList(args.values, "--values");
  options.input = ParseInputKind(args.input);
  if (args.method != "search" && args.method != "random")
    throw InputError("--strategy: unknown '" + args.method + "'" +
                     DidYouMean(args.method, {"search", "random"}) + " (known: search, random)");
  options.search = args.method == "search";
  return options;
}

std::string MethodName(const SweepOptions& o) {
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

Json FitJson(const ExponentFit& fit) {
  return {{"slope", Number(fit.slope)},
          {"intercept", Number(fit.intercept)},
          {"lower", Number(fit.lower)},
          {"upper", Number(fit.upper)},
          {"level", 0.95},
          {"standard_error", Number(fit.standard_error)},
          {"points", fit.points}};
}

Json PointJson(const SweepPoint& p) {
  Json pairs = Json::array();
  for (const SweepPair& q : p.pairs)
    pairs.push_back({{"index", q.index},
                     {"seed", q.seed},
                     {"needed_length", q.needed},
                     {"reached", q.reached},
                     {"sim_at_fixed", Number(q.sim_at_fixed)},
                     {"x_length", q.x_length},
                     {"x_explicit", q.x_explicit},
                     {"accepted", q.accepted},
                     {"gamma", Number(q.constants.at("gamma"))},
                     {"L", Number(q.constants.at("L"))}});
  const SweepPair& w = p.pairs[p.witness];
  return {{"value", p.value},
          {"fit_x", Number(p.fit_x)},
          {"needed_length", p.needed},
          {"reached", w.reached},
          {"witness", {{"pair", w.index}, {"seed", w.seed}}},
          {"sim_at_fixed", Number(p.sim_at_fixed)},
          {"bound", Number(p.bound)},
          {"frequency_bound", Number(p.ours)},
          {"ratio", Number(p.ratio)},
          {"pairs", pairs}};
}

Json SweepJson(const SweepResult& r) {
  const SweepOptions& o = r.options;
  Json doc;
  doc["context"] = Context("sweep", o.seed);
  doc["options"] = SweepOptionsToJson(o);
  doc["method"] = MethodName(o);
  doc["fit_kind"] = FitKind(o);
  doc["fit_x"] = o.parameter == StudyParameter::kScale    ? "L (largest over the point's pairs)"
                 : o.parameter == StudyParameter::kMargin ? "1/gamma"
                                                          : ParameterName(o.parameter);
  doc["points"] = Json::array();
  for (const SweepPoint& p : r.points) doc["points"].push_back(PointJson(p));
  doc["fit"] = FitJson(r.fit);
  doc["paper_exponent"] = r.paper_exponent;
  const SweepPoint& c = r.points[r.constant_point];
  doc["empirical_constant"] = {{"value", Number(r.empirical_constant)},
                               {"point", r.constant_point},
                               {"pair", c.witness},
                               {"seed", c.pairs[c.witness].seed}};
  return doc;
}

std::string Csv(const SweepResult& r) {
  std::string csv =
      "value,fit_x,needed_length,reached,witness_pair,witness_seed,sim_at_fixed,"
      "bound,frequency_bound,ratio,method\n";
  const char* method = r.options.search ? "search" : "random";
  for (const SweepPoint& p : r.points) {
    const SweepPair& w = p.pairs[p.witness];
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", p.value, p.fit_x, p.needed,
                       w.reached ? 1 : 0, w.index, w.seed, p.sim_at_fixed, p.bound, p.ours, p.ratio,
                       method);
  }
  return csv;
}

void PrintTable(const SweepResult& r) {
  const SweepOptions& o = r.options;
  std::cout << fmt::format("sweep {} over {} values, |x| = {}, seed {}\n",
                           ParameterName(o.parameter), o.values.size(), o.x_length, o.seed);
  std::cout << fmt::format("worst case per point: {}\n", MethodName(o));
  std::cout << fmt::format("{:>10} {:>10} {:>8} {:>20} {:>12} {:>12} {:>12}\n",
                           ParameterName(o.parameter), "needed n", "witness", "seed",
                           "sim@n=" + std::to_string(o.fixed_n), "bound", "ratio");
  for (const SweepPoint& p : r.points) {
    const SweepPair& w = p.pairs[p.witness];
    std::cout << fmt::format("{:>10} {:>9}{} {:>8} {:>20} {:>12} {:>12} {:>12}\n", Show(p.value),
                             p.needed, w.reached ? " " : "+", w.index, w.seed, Show(p.sim_at_fixed),
                             Show(p.bound), Show(p.ratio));
  }
  std::cout << fmt::format(
      "exponent   measured {} (95% CI [{}, {}]) vs paper {} ({}, in {})\n", Show(r.fit.slope),
      Show(r.fit.lower), Show(r.fit.upper), Show(r.paper_exponent), FitKind(o),
      o.parameter == StudyParameter::kScale    ? "L"
      : o.parameter == StudyParameter::kMargin ? "1/gamma; paper p ln 2 from 2^(p/gamma)"
                                               : ParameterName(o.parameter));
  std::cout << fmt::format("constant   max needed/bound = {} at {} = {}\n",
                           Show(r.empirical_constant), ParameterName(o.parameter),
                           Show(r.points[r.constant_point].value));
  std::cout << "(+ = no n < |x| met ε: the needed length is at least |x|)\n";
}

}  // namespace

void AddSweepCommand(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd =
      app.add_subcommand("sweep",
                         "Vary one parameter, find the worst needed length per point (frequency "
                         "simulator) by a short search (default) or over random pairs, fit its "
                         "exponent and compare with Thm 4.1's L²Δ⁷|Σ|⁶τ²/ε² (margin: 2^(p/γ)).");
  cmd->add_option("--parameter", args->parameter,
                  "scale (weight scale; fitted against L), alphabet, period, locality, eps or "
                  "margin (γ of finite-precision pairs; fitted as ln n against 1/γ)")
      ->required();
  cmd->add_option("--values", args->values, "comma-separated grid, e.g. 2,3,4")->required();
  cmd->add_option("--eps", args->options.eps, "ε (default 0.01)");
  cmd->add_option("--pairs", args->options.pairs,
                  "K per point: search restarts or random pairs (default 4)");
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
  cmd->add_option("--x-length", args->options.x_length, "|x| (default 20000)");
  cmd->add_option("--z-length", args->options.fixed_n,
                  "the length n of z at which sim is also recorded (default 500)");
  AddDeprecated(cmd, "--fixed-n", args->options.fixed_n, "--z-length");
  cmd->add_option(
      "--grid", args->options.base.grid,
      "weight grid 2^-k (default 1: coarse grids tie logits, so maximal sets have several types)");
  cmd->add_option("--delta", args->options.delta, "g = f + δ·N(0, 1) (default 0.01)");
  cmd->add_option("--input", args->input, "input family of x (default stress)");
  AddOutDir(cmd, args->out, "write sweep.json, sweep.csv and sweep.png in this directory");
  cmd->add_flag("--json", args->json, "print the JSON document instead of the table");
  AddDistOptions(cmd, args->dist);
  SetExamples(cmd, {"ltsim sweep --parameter period --values 1,2,3 --pairs 2 --x-length 1500 "
                    "--z-length 100",
                    "ltsim sweep --parameter margin --values 1,2,4 --pairs 2 --strategy random "
                    "--x-length 1500 --json"});
  cmd->callback([args] {
    SetCommandFlags({{"precision_bits", "--precision"}});  // the library's keys (commands.h)
    CommandDealer dealer(args->dist);
    SweepOptions options = BuildOptions(*args);
    options.dealer = &dealer.get();  // the (point, pair) cells, over MPI ranks or shards
    // This process's share of the cells (rank 0 alone prints under MPI).
    Progress progress("sweep", "pairs");
    if (dist::Rank() == 0) options.progress = progress.Callback();
    const SweepResult r = RunSweep(options);
    progress.Finish();
    if (!dealer.Reduces()) return dealer.FinishShard();
    Report(
        SweepJson(r), Csv(r), args->json, [&] { PrintTable(r); }, args->out, "sweep",
        LTSIM_PLOT_SCRIPT);
  });
}

}  // namespace ltsim::cli
