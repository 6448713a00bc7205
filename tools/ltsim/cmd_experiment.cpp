// `ltsim experiment paper`: needed length vs ω, p, S and k on the constructed models (§6).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/study/experiment.h"
#include "ltsim/study/fit_report.h"
#include "number_list.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct ExperimentArgs {
  std::string omegas = "1,2,4,8", primes = "2,3,5,7", alphabets = "2,3,4", ks = "1,2,3";
  std::string input = "uniform", out;
  ExperimentOptions options;
  bool json = false;
};

std::vector<int> ParseIntegers(const std::string& text, const std::string& option) {
  std::vector<int> values;
  for (double v : ParseNumberList(text, option)) {
    if (v != std::floor(v) || std::abs(v) > 1e6)
      throw InputError(option + ": '" + fmt::format("{}", v) + "' is not an integer");
    values.push_back(static_cast<int>(v));
  }
  return values;
}

ExperimentOptions BuildOptions(const ExperimentArgs& args) {
  ExperimentOptions o = args.options;
  o.omegas = ParseNumberList(args.omegas, "--omegas");
  o.primes = ParseIntegers(args.primes, "--primes");
  o.alphabets = ParseIntegers(args.alphabets, "--alphabets");
  o.ks = ParseIntegers(args.ks, "--ks");
  o.input = ParseInputKind(args.input);
  return o;
}

// "ω" for omega; the other parameters print as they are named.
std::string Symbol(const std::string& parameter) { return parameter == "omega" ? "ω" : parameter; }

std::string NeededList(const ExperimentTrend& t) {
  std::string out;
  for (std::size_t i = 0; i < t.values.size(); ++i)
    out += fmt::format("{}{} → {}", i ? ", " : "", Show(t.values[i]), t.needed[i]);
  return out;
}

std::string Verdict(const ExperimentTrend& t) {
  return std::string(TrendName(t.trend.trend)) + " (" + t.trend.reason + ")";
}

Json SamplesJson(const std::vector<Sample>& samples) {
  Json out = Json::array();
  for (const Sample& s : samples)
    out.push_back({{"needed_length", s.value},
                   {"censored", s.censoring != Censoring::kNone},
                   {"censoring", CensoringName(s.censoring)}});
  return out;
}

Json ExperimentJson(const ExperimentResult& r) {
  const ExperimentOptions& o = r.options;
  Json doc;
  doc["context"] = ReproducibleContext("experiment paper", o.seed);
  doc["options"] = ExperimentOptionsToJson(o);
  doc["definition"] =
      "one-layer tasks: frequency simulator, NeededLength(f, f) (binary search on n_j = "
      "ceil((tau+2)*2^(j/4))), max over the x seeds; kgram: the smallest grid n, scanned "
      "upwards, at which |f(x) - f(z)| <= kgram_eps for every simulator seed; |x| when none";
  doc["rows"] = Json::array();
  for (const ExperimentRow& row : r.rows)
    doc["rows"].push_back(
        {{"task", row.task},
         {"parameter", row.parameter},
         {"value", row.value},
         {"method", row.method},
         {"eps", row.eps},
         {"needed_length", row.needed},
         {"reached", row.reached},
         {"sim_at_fixed", Number(row.sim_at_fixed)},
         {"label", "simulator on found x (neither bound)"},
         {"samples", SamplesJson(row.samples)},
         {"min", Number(row.spread.min)},
         {"median", Number(row.spread.median)},
         {"max", Number(row.spread.max)},
         {"censored", row.censoring != Censoring::kNone},
         {"censoring", CensoringName(row.censoring)},
         {"x_seed", row.x_seed},
         {"witness_file", row.witness_file.empty() ? Json(nullptr) : Json(row.witness_file)}});
  doc["trends"] = Json::array();
  for (const ExperimentTrend& t : r.trends) {
    Json trend = {{"task", t.task},
                  {"parameter", t.parameter},
                  {"values", t.values},
                  {"needed_lengths", t.needed},
                  {"slope", Number(t.estimate.exponent)},
                  {"lower", Number(t.estimate.ci ? t.estimate.ci->first : NAN)},
                  {"upper", Number(t.estimate.ci ? t.estimate.ci->second : NAN)},
                  {"intercept", Number(t.estimate.intercept)},
                  {"rises", t.rises},
                  {"monotone", t.monotone},
                  {"trend", TrendName(t.trend.trend)},
                  {"trend_reason", t.trend.reason}};
    AppendEstimate(
        trend, t.estimate,
        {EstimateField::kCi, EstimateField::kPointsUsed, EstimateField::kPointsCensored});
    trend["label"] = "simulator on found x: fitted exponent (neither bound)";
    doc["trends"].push_back(trend);
  }
  return doc;
}

std::string Csv(const ExperimentResult& r) {
  std::string csv =
      "task,parameter,value,method,eps,needed_length,reached,sim_at_fixed,min,median,max,"
      "censored,x_seed,witness_file\n";
  for (const ExperimentRow& row : r.rows)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", row.task, row.parameter,
                       row.value, row.method, row.eps, row.needed, row.reached ? 1 : 0,
                       row.sim_at_fixed, row.spread.min, row.spread.median, row.spread.max,
                       row.censoring != Censoring::kNone ? 1 : 0, row.x_seed, row.witness_file);
  return csv;
}

void PrintTable(const ExperimentResult& r) {
  const ExperimentOptions& o = r.options;
  std::cout << fmt::format(
      "experiment paper: |x| = {}, input {}, seed {}; one-layer: frequency, ε = {}, max over {} "
      "x; kgram: {}, ε = {}, all of {} z seeds\n",
      o.x_length, InputKindName(o.input), o.seed, o.eps, o.seeds, o.kgram_method, o.kgram_eps,
      o.kgram_seeds);
  std::cout << "every n is the simulator on found x (neither a lower nor an upper bound)\n";
  std::cout << fmt::format("{:<12} {:>6} {:>7} {:>10} {:>10} {:>18} {:>14}\n", "task", "param",
                           "value", "method", "worst n", "min/median/max",
                           "sim@n=" + std::to_string(o.fixed_n));
  for (const ExperimentRow& row : r.rows)
    std::cout << fmt::format("{:<12} {:>6} {:>7} {:>10} {:>9}{} {:>18} {:>14}\n", row.task,
                             Symbol(row.parameter), Show(row.value), row.method, row.needed,
                             row.censoring == Censoring::kAbove   ? "+"
                             : row.censoring == Censoring::kBelow ? "-"
                                                                  : " ",
                             fmt::format("{}/{}/{}", Show(row.spread.min), Show(row.spread.median),
                                         Show(row.spread.max)),
                             Show(row.sim_at_fixed));
  for (const ExperimentTrend& t : r.trends) {
    std::cout << fmt::format(
        "{} {}: log-log slope {} (95% CI [{}, {}], censored points left out); with {}: {} "
        "(needed lengths {})\n",
        t.task, Symbol(t.parameter), Show(t.estimate.exponent),
        Show(t.estimate.ci ? t.estimate.ci->first : NAN),
        Show(t.estimate.ci ? t.estimate.ci->second : NAN), Symbol(t.parameter), Verdict(t),
        NeededList(t));
  }
  if (!r.rows.empty() && !r.rows.front().witness_file.empty())
    std::cout << fmt::format(
        "witnesses: one per row, {}/<task>-<parameter>/p<i>.point.json "
        "(ltsim replay FILE re-runs one)\n",
        o.out_dir);
  std::cout << "(+ = no n < |x| met ε: at least |x|; - = the grid's first n already met ε: at "
               "most that; both are bounds and never fitted. 'rises' needs an interval above 0 "
               "and a series monotone within its spread; docs/theory.md §6 expects it to rise "
               "with ω, Δ = p, S and k)\n";
}

}  // namespace

void AddExperimentCommand(CLI::App& app) {
  CLI::App* group = app.add_subcommand(
      "experiment", "The paper's experiments on the constructed models (docs/theory.md §6).");
  group->require_subcommand(1);
  SetExamples(group, {"ltsim experiment paper"});
  auto args = std::make_shared<ExperimentArgs>();
  CLI::App* cmd = group->add_subcommand(
      "paper",
      "Needed length vs ω (SimpleTask), p (ModPTask), S and k (k-gram): one table, log-log "
      "slopes and the check that it rises with each, as the paper reports.");
  cmd->add_option("--omegas", args->omegas, "SimpleTask ω values (default 1,2,4,8; '' skips)");
  cmd->add_option("--primes", args->primes, "ModPTask p values, k = 1 mod p (default 2,3,5,7)");
  cmd->add_option("--alphabets", args->alphabets, "k-gram S values at k = 2 (default 2,3,4)");
  cmd->add_option("--ks", args->ks, "k-gram k values at S = 2 (default 1,2,3)");
  cmd->add_option("--eps", args->options.eps, "ε of the one-layer tasks (default 0.01)");
  cmd->add_option("--kgram-eps", args->options.kgram_eps, "ε of the k-gram series (default 0.05)");
  cmd->add_option("--accuracy", args->options.accuracy, "SimpleTask MLP accuracy (default 1e-3)");
  cmd->add_option("--seeds", args->options.seeds, "x seeds per one-layer point (default 2)");
  cmd->add_option("--kgram-seeds", args->options.kgram_seeds,
                  "simulator seeds per k-gram n (default 3)");
  cmd->add_option("--kgram-method", args->options.kgram_method,
                  "markov or blocks (default markov)");
  AddSeed(cmd, args->options.seed, "every x and z");
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--x-length", args->options.x_length, "|x| (default 20000)");
  cmd->add_option("--z-length", args->options.fixed_n,
                  "the length n of z at which sim is also recorded (default 500)");
  AddDeprecated(cmd, "--fixed-n", args->options.fixed_n, "--z-length");
  cmd->add_option("--input", args->input, "input family of x (default uniform)");
  AddOutDir(cmd, args->out,
            "write experiment.json, experiment.csv and experiment.png in this directory, and a "
            "point witness per row, <task>-<parameter>/p<i>.point.json (ltsim replay FILE)");
  cmd->add_flag("--json", args->json, "print the JSON document instead of the table");
  SetExamples(cmd, {"ltsim experiment paper",
                    "ltsim experiment paper --omegas 1,8 --primes 2,7 --alphabets 2 --ks 1 "
                    "--x-length 2000 --json"});
  cmd->callback([args] {
    ExperimentOptions options = BuildOptions(*args);
    // --out-dir locked and checked before any work, written as one set (io/output_dir.h).
    std::unique_ptr<io::OutputSet> set;
    if (!args->out.empty()) set = std::make_unique<io::OutputSet>(args->out, "experiment paper");
    options.out_dir = set ? set->staging() : "";  // a point witness per row
    Progress progress("experiment", "rows");
    options.progress = progress.Callback();
    ExperimentResult r = RunExperiment(options);
    progress.Finish();
    if (set) r.options.out_dir = set->dir();  // what the table names
    Report(
        ExperimentJson(r), Csv(r), args->json, [&] { PrintTable(r); }, set.get(), "experiment",
        LTSIM_PLOT_EXPERIMENT_SCRIPT);
  });
}

}  // namespace ltsim::cli
