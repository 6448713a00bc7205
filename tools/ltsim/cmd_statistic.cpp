// `ltsim statistic STRING`: Lemma 5.3's test-function averages over x and over z
// (docs/theory.md §4.4).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "ltsim/check/lemma53.h"
#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"
#include "method_options.h"
#include "output.h"

namespace ltsim::cli {
namespace {

struct StatisticArgs {
  std::string string;
  SandwichOptions options;
  std::string model;
  double lipschitz = 0.0;
  int locality = 0;
  int alphabet = 0;
  bool json = false;
  // Which of the optional flags were given.
  const CLI::Option* lipschitz_flag = nullptr;
  const CLI::Option* locality_flag = nullptr;
  const CLI::Option* alphabet_flag = nullptr;
};

void Validate(const StatisticArgs& args) {
  const bool random = args.lipschitz_flag->count() > 0;
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
  std::cout << fmt::format("  x: {}  (T = {})\n", args.string, r.x_length);
  std::cout << fmt::format("  z: |z| = {} (target {}); {}\n", r.z_length, args.options.length,
                           r.simulation.detail);
  std::cout << fmt::format("  p: {}\n\n", p.name());
  std::cout << fmt::format("  average over x   (1/T) Σ p        {}\n", Show(r.average_x));
  std::cout << fmt::format("  average over z   (1/|z|) Σ p      {}\n", Show(r.average_z));
  std::cout << fmt::format("  difference       sup-norm         {}\n", Show(r.difference));
  std::cout << fmt::format("  reference rate   (G+L)(τ+1)/n^⅓   {}\n", Show(r.reference_rate));
}

void RunStatistic(const StatisticArgs& args) {
  Validate(args);
  const auto x = OpenSource(args.string);
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
  args.json ? PrintJsonResult(args, *p, result) : PrintTable(args, *p, result);
}

}  // namespace

void AddStatisticCommand(CLI::App& app) {
  auto args = std::make_shared<StatisticArgs>();
  CLI::App* cmd = app.add_subcommand(
      "statistic",
      "Lemma 5.3: average a test function over the positions of x and of z, and compare.");
  cmd->add_option("STRING", args->string, "x: text, .u8, .u16 or iid:length=N,alphabet=S,seed=K")
      ->required();
  AddMethodOptions(cmd, args->options);
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
  cmd->callback([args] { RunStatistic(*args); });
}

}  // namespace ltsim::cli
