// `ltsim statistic STRING`: Lemma 5.3's test-function averages over x and over z
// (docs/theory.md §4.4).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "help.h"
#include "ltsim/check/lemma53.h"
#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"
#include "ltsim/study/fit_report.h"
#include "ltsim/study/statistic_attack.h"
#include "method_options.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct StatisticArgs {
  std::string string;
  SandwichOptions options;
  ZLengthOptions z_length;
  std::string model;
  double lipschitz = 0.0;
  int locality = 0;
  int alphabet = 0;
  bool json = false;
  bool adversarial = false, sweep = false;
  AttackOptions attack;
  std::string methods = "markov,blocks,uniform,truncate", lengths = "16,160,1600,16000",
              inputs = "uniform,markov,periodic,runs,long-runs,stride", out;
  AttackSweepOptions sweep_options;
  // Which of the optional flags were given.
  const CLI::Option* lipschitz_flag = nullptr;
  const CLI::Option* locality_flag = nullptr;
  const CLI::Option* alphabet_flag = nullptr;
  const CLI::Option* iterations_flag = nullptr;
  const CLI::Option* restarts_flag = nullptr;
};

void Validate(const StatisticArgs& args) {
  if (args.sweep) return;
  if (args.string.empty()) throw InputError("STRING: required (unless --sweep)");
  RequireZLength(args.z_length);
  const bool random = args.lipschitz_flag->count() > 0;
  if (args.adversarial) {
    if (!random) throw InputError("--adversarial: needs --lipschitz L (the class searched)");
    return;
  }
  if (random == !args.model.empty())
    throw InputError("--lipschitz / --model: give exactly one (a random test function or a model)");
  if (!random && args.locality_flag->count() > 0)
    throw InputError("--locality: only with --lipschitz (a model gives its own τ)");
  if (!random && args.alphabet_flag->count() > 0)
    throw InputError("--alphabet: only with --lipschitz (a model gives its own alphabet)");
}

// S of the random family: --alphabet, else 1 + the largest token of x (one pass).
int AlphabetOf(const StatisticArgs& args, const Source& x) {
  if (args.alphabet_flag->count() > 0) return args.alphabet;
  int largest = 0;
  auto reader = x.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    if (chunk.kind == Chunk::Kind::kRun) {
      largest = std::max<int>(largest, chunk.run.token);
      continue;
    }
    for (std::size_t k = 0; k < chunk.size; ++k) largest = std::max<int>(largest, chunk.at(k));
  }
  return largest + 1;
}

Json FunctionJson(const TestFunction& p) {
  Json f;
  f["name"] = p.name();
  f["alphabet"] = p.alphabet();
  f["locality"] = p.locality();
  f["dimension"] = p.dimension();
  f["size_bound"] = Number(p.size_bound());
  f["lipschitz"] = Number(p.lipschitz());
  return f;
}

void PrintJsonResult(const StatisticArgs& args, const TestFunction& p, const Lemma53Result& r) {
  Json doc;
  doc["context"] = Context("statistic", args.options.seed);
  doc["method"] = r.method;
  doc["target_length"] = args.options.length;
  doc["block_length"] = args.options.block_length;
  doc["x_length"] = r.x_length;
  doc["z_length"] = r.z_length;
  doc["function"] = FunctionJson(p);
  doc["average_x"] = Array(r.average_x);
  doc["average_z"] = Array(r.average_z);
  doc["difference"] = Number(r.difference);
  doc["reference_rate"] = Number(r.reference_rate);
  doc["detail"] = r.simulation.detail;
  PrintJson(doc);
}

void PrintTable(const StatisticArgs& args, const TestFunction& p, const Lemma53Result& r) {
  std::cout << fmt::format("ltsim statistic   seed {}   method {}\n", args.options.seed, r.method);
  std::cout << fmt::format("  x: {}  (T = {})\n", ShownString(args.string, args.options.seed),
                           r.x_length);
  std::cout << fmt::format("  z: |z| = {} (target {}); {}\n", r.z_length, args.options.length,
                           r.simulation.detail);
  std::cout << fmt::format("  p: {}\n\n", p.name());
  std::cout << fmt::format("  average over x   (1/T) Σ p        {}\n", Show(r.average_x));
  std::cout << fmt::format("  average over z   (1/|z|) Σ p      {}\n", Show(r.average_z));
  std::cout << fmt::format("  difference       sup-norm         {}\n", Show(r.difference));
  std::cout << fmt::format("  reference rate   (G+L)(τ+1)/n^⅓   {}\n", Show(r.reference_rate));
}

std::vector<std::string> Split(const std::string& text, const char* flag) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    if (item.empty()) throw InputError(std::string(flag) + ": empty item in '" + text + "'");
    out.push_back(item);
    item.clear();
  }
  return out;
}

constexpr const char* kAttackLabel =
    "measurement on particular inputs: the largest statistic error found over bounded "
    "(G = 1) L-Lipschitz test functions, a lower bound on the supremum the lemma bounds";

void RunAdversarial(const StatisticArgs& args) {
  auto progress = std::make_shared<Progress>("statistic --adversarial", "tokens");
  const auto x = WithProgress(OpenSource(args.string, args.options.seed), progress);
  AttackOptions o = args.attack;
  o.method = args.options.method;
  o.length = args.options.length;
  o.seed = args.options.seed;
  o.block_length = args.options.block_length;
  o.lipschitz = args.lipschitz;
  o.locality = args.locality;
  o.alphabet = AlphabetOf(args, *x);
  std::unique_ptr<Transformer> model;
  if (!args.model.empty()) {
    model = std::make_unique<Transformer>(ReadModel(args.model));
    o.models = {model.get()};
  }
  const AttackResult r = AttackStatistic(*x, o);
  progress->Finish();
  if (args.json) {
    Json doc;
    doc["context"] = Context("statistic --adversarial", o.seed);
    doc["label"] = kAttackLabel;
    doc["method"] = o.method;
    doc["length"] = o.length;
    doc["x_length"] = r.x_length;
    doc["z_length"] = r.z_length;
    doc["lipschitz"] = o.lipschitz;
    doc["locality"] = o.locality;
    doc["alphabet"] = o.alphabet;
    doc["adversarial_error"] = r.adversarial;
    doc["rechecked"] = r.rechecked;
    // An upper bound on the error of every function of the class on these x and z
    // (docs/lemma53.md §4).
    doc["certified_upper"] = r.certified;
    doc["random_best"] = r.random_best;
    doc["random_functions"] = o.random_functions;
    doc["reference_rate"] = r.reference_rate;
    doc["windows"] = r.windows;
    doc["function"] = r.function;
    PrintJson(doc);
    return;
  }
  std::cout << fmt::format(
      "statistic --adversarial: {} at n = {} on |x| = {} (|z| = {}), L = {}, tau = {}, seed {}\n"
      "  adversarial error      {}   (rechecked through the averages: {})\n"
      "  transport bound        {}   (certified over the whole class on these x and z: "
      "docs/lemma53.md §4)\n"
      "  best of {} random cos  {}\n  reference rate (G+L)(tau+1)/n^(1/3)  {}\n  function: {}\n"
      "  ({})\n",
      o.method, o.length, r.x_length, r.z_length, o.lipschitz, o.locality, o.seed,
      Show(r.adversarial), Show(r.rechecked), Show(r.certified), o.random_functions,
      Show(r.random_best), Show(r.reference_rate), r.function, kAttackLabel);
}

void RunSweep(const StatisticArgs& args) {
  AttackSweepOptions o = args.sweep_options;
  o.methods = Split(args.methods, "--methods");
  o.lengths.clear();
  for (const std::string& n : Split(args.lengths, "--z-lengths")) {
    try {
      o.lengths.push_back(std::stoull(n));
    } catch (const std::exception&) {
      throw InputError("--z-lengths: '" + n + "' is not a length");
    }
  }
  o.inputs.clear();
  for (const std::string& i : Split(args.inputs, "--inputs")) o.inputs.push_back(ParseInputKind(i));
  o.lipschitz = args.lipschitz_flag->count() ? args.lipschitz : 1.0;
  o.locality = args.locality;
  if (args.alphabet_flag->count()) o.alphabet = args.alphabet;
  o.seed = args.options.seed;
  if (args.iterations_flag->count()) o.iterations = args.attack.iterations;
  if (args.restarts_flag->count()) o.restarts = args.attack.restarts;
  // --out-dir locked and checked before any work, written as one set (io/output_dir.h).
  std::unique_ptr<io::OutputSet> set;
  if (!args.out.empty()) set = std::make_unique<io::OutputSet>(args.out, "statistic --sweep");
  const AttackSweepResult r = RunAttackSweep(o);
  Json doc;
  doc["context"] = ReproducibleContext("statistic --sweep", o.seed);
  doc["label"] = kAttackLabel;
  doc["options"] = AttackSweepOptionsToJson(o);
  doc["paper_rate"] = -1.0 / 3;
  doc["series"] = Json::array();
  std::string csv = "method,input,n,min,median,max,censored,rate,ci_low,ci_high,certified_upper\n";
  for (const AttackSeries& s : r.series) {
    Json points = Json::array();
    for (std::size_t j = 0; j < s.points.size(); ++j) {
      const SeriesPoint& p = s.points[j];
      const Spread spread = SampleSpread(p);
      Json errors = Json::array();
      for (const Sample& e : p.samples) errors.push_back(e.value);
      const bool censored = PointCensoring(p) != Censoring::kNone;
      points.push_back({{"n", p.value},
                        {"errors", errors},
                        {"min", spread.min},
                        {"median", spread.median},
                        {"max", spread.max},
                        {"censored", censored},
                        {"certified_upper", Number(s.certified[j])}});
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", s.method, s.input, p.value,
                         spread.min, spread.median, spread.max, censored ? 1 : 0, s.rate.exponent,
                         s.rate.ci ? s.rate.ci->first : NAN, s.rate.ci ? s.rate.ci->second : NAN,
                         s.certified[j]);
    }
    Json rate;
    AppendEstimate(rate, s.rate,
                   {EstimateField::kExponent, EstimateField::kCi, EstimateField::kReason});
    doc["series"].push_back(
        {{"method", s.method}, {"input", s.input}, {"rate", rate}, {"points", points}});
  }
  doc["markov_rate_verdict"] = r.markov_rate_verdict;
  doc["beats_markov_everywhere"] = r.beats_markov_everywhere;
  Report(
      doc, csv, args.json,
      [&] {
        std::cout << fmt::format(
            "statistic --sweep: adversarial error vs n, |x| = {}, L = {}, tau = {}, seed {} "
            "({})\n",
            o.x_length, o.lipschitz, o.locality, o.seed, kAttackLabel);
        std::cout << fmt::format("{:<10} {:<10} {:>26}  {}\n", "method", "input",
                                 "rate b in err ~ n^b [CI]",
                                 "per n: median error found (lower side) / certified bound "
                                 "(upper side, these x and z)");
        for (const AttackSeries& s : r.series) {
          std::string errs;
          for (std::size_t j = 0; j < s.points.size(); ++j)
            errs += fmt::format("{}:{}/{} ", Show(s.points[j].value),
                                Show(SampleSpread(s.points[j]).median), Show(s.certified[j]));
          std::cout << fmt::format("{:<10} {:<10} {:>26}  {}\n", s.method, s.input,
                                   s.rate.ci
                                       ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", s.rate.exponent,
                                                     s.rate.ci->first, s.rate.ci->second)
                                       : "no CI",
                                   errs);
        }
        std::cout << "markov (the rule of docs/statistics.md §4, as tightness --theorem 5.3): "
                  << r.markov_rate_verdict << "\n";
        std::string beats;
        for (const std::string& m : r.beats_markov_everywhere) beats += m + " ";
        std::cout << "schemes faster than markov on every input family tried: "
                  << (beats.empty() ? "none" : beats) << "\n";
      },
      set.get(), "statistic", LTSIM_PLOT_STATISTIC_SCRIPT);
}

void RunStatistic(const StatisticArgs& args) {
  Validate(args);
  if (args.sweep) return RunSweep(args);
  if (args.adversarial) return RunAdversarial(args);
  auto progress = std::make_shared<Progress>("statistic", "tokens");
  const auto x = WithProgress(OpenSource(args.string, args.options.seed), progress);
  std::unique_ptr<Transformer> model;
  std::unique_ptr<TestFunction> p;
  std::vector<const Transformer*> models;
  if (args.model.empty()) {
    p = std::make_unique<RandomLipschitzFunction>(args.options.seed, AlphabetOf(args, *x),
                                                  args.locality, args.lipschitz);
  } else {
    model = std::make_unique<Transformer>(ReadModel(args.model));
    models.push_back(model.get());
    p = std::make_unique<FirstLayerFunction>(*model);
  }
  const Lemma53Result result = RunLemma53(*x, *p, models, args.options);
  progress->Finish();
  args.json ? PrintJsonResult(args, *p, result) : PrintTable(args, *p, result);
}

}  // namespace

void AddStatisticCommand(CLI::App& app) {
  auto args = std::make_shared<StatisticArgs>();
  CLI::App* cmd = app.add_subcommand(
      "statistic",
      "Lemma 5.3: average a test function over the positions of x and of z, and compare.");
  cmd->add_option("STRING", args->string, std::string(kStringHelp) + " (not with --sweep)");
  args->z_length = AddMethodOptions(cmd, args->options);
  cmd->get_option("--method")->default_val("markov");
  args->lipschitz_flag = cmd->add_option(
      "--lipschitz", args->lipschitz,
      "test function: random a·cos(<b,μ> + c), G = 1, ℓ1-Lipschitz constant L (seeded by --seed)");
  args->locality_flag =
      cmd->add_option("--locality", args->locality, "τ of the random test function (default 0)");
  args->alphabet_flag = cmd->add_option(
      "--alphabet", args->alphabet, "S of the random test function (default: largest token + 1)");
  cmd->add_option("--model", args->model, "test function: the first-layer outputs of this model");
  cmd->add_flag("--json", args->json, "print every number as JSON");
  cmd->add_flag("--adversarial", args->adversarial,
                "search bounded L-Lipschitz test functions s_w·clamp(<b_w, mu> - theta_w) for the "
                "largest error at n (with --lipschitz; --model then only supplies the models of a "
                "model-aware method), against --random-functions random ones (docs/lemma53.md)");
  args->iterations_flag =
      cmd->add_option("--iterations", args->attack.iterations,
                      "hill-climb proposals per window (default 150; --sweep 60)");
  args->restarts_flag = cmd->add_option("--restarts", args->attack.restarts,
                                        "climbs per window (default 2; --sweep 1)");
  cmd->add_option("--random-functions", args->attack.random_functions,
                  "random cos functions of the baseline (default 16)");
  cmd->add_flag("--sweep", args->sweep,
                "the adversarial error over --z-lengths per --methods and --inputs, with the "
                "fitted rate b (error ~ n^b), CIs and censoring; no STRING");
  cmd->add_option("--methods", args->methods,
                  "--sweep: schemes (default markov,blocks,uniform,truncate)");
  cmd->add_option("--z-lengths", args->lengths,
                  "--sweep: the grid of z lengths n, ≥ 3 (default 16,160,1600,16000)");
  AddDeprecated(cmd, "--lengths", args->lengths, "--z-lengths");
  cmd->add_option("--inputs", args->inputs,
                  "--sweep: input families (default uniform,markov,periodic,runs,long-runs,stride: "
                  "the last three adapt to n, docs/lemma53.md §2)");
  cmd->add_option("--x-length", args->sweep_options.x_length, "--sweep: |x| (default 320000)");
  cmd->add_option("--search-x", args->sweep_options.x_search,
                  "--sweep: also search x per scheme, n and z seed, K hill-climb moves of its "
                  "generator from the worst fixed family (family 'searched'; default 0: off)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--seeds", args->sweep_options.seeds, "--sweep: z seeds per point (default 2)");
  AddThreads(cmd, args->sweep_options.threads)
      ->description("--sweep: oneTBB threads, 0 = every core (never changes the result)");
  AddOutDir(cmd, args->out,
            "--sweep: write statistic.json, statistic.csv and statistic.png (error against n) in "
            "this directory");
  SetExamples(cmd, {"ltsim statistic corpus/strings/default.txt --z-length 5000 --lipschitz 2",
                    "ltsim statistic corpus/strings/default.txt --method blocks --z-length 5000 "
                    "--model corpus/models/pair/g.json",
                    "ltsim statistic corpus/strings/default.txt --z-length 500 --lipschitz 2 "
                    "--adversarial --iterations 20",
                    "ltsim statistic --sweep --z-lengths 16,160,1600 --methods markov,blocks "
                    "--inputs uniform --x-length 20000 --iterations 10",
                    "ltsim statistic --sweep --z-lengths 16,160,1600 --methods markov,truncate "
                    "--inputs uniform --x-length 20000 --iterations 10 --search-x 4"});
  cmd->callback([args] {
    SetCommandFlags({{"lengths", "--z-lengths"}});  // the library's keys (commands.h)
    RunStatistic(*args);
  });
}

}  // namespace ltsim::cli
