// `ltsim simulate`: build z from x with a named method and write it as run-length text.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>

#include "commands.h"
#include "help.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/check/two_layer_bound.h"
#include "ltsim/core/error.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"
#include "method_options.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct SimulateArgs {
  std::vector<std::string> models;
  std::string string;
  std::string out;
  SandwichOptions options;
  ZLengthOptions z_length;
  bool json = false;
};

void RunSimulate(const SimulateArgs& args) {
  RequireZLength(args.z_length);
  if (args.models.size() > 2)
    throw InputError(fmt::format("--model: give one or two models, not {}", args.models.size()));
  std::vector<std::string> inputs = args.models;
  inputs.push_back(args.string);
  io::RefuseOutputIsInput(args.out, inputs);
  std::vector<Transformer> models;
  for (const std::string& path : args.models) models.push_back(ReadModel(path));
  // Different alphabets named by file (the output counts may differ here).
  if (models.size() == 2 && models[0].alphabet != models[1].alphabet)
    CheckPair(models[0], models[1], args.models[0], args.models[1]);
  std::vector<const Transformer*> pointers;
  for (const Transformer& model : models) pointers.push_back(&model);
  auto progress = std::make_shared<Progress>("simulate", "tokens");
  const auto x = WithProgress(OpenSource(args.string, args.options.seed), progress);
  const Simulation z = RunSimulation(pointers, *x, args.options);
  progress->Finish();
  WriteRunLengthText(*MakeRunSource(z.z, "z"), args.out);
  // With `--out -` z is standard output, and the summary goes to stderr.
  std::ostream& report = args.out == "-" ? std::cerr : std::cout;
  if (args.json) {
    Json doc;
    doc["context"] = Context("simulate", args.options.seed);
    doc["method"] = args.options.method;
    doc["x_length"] = x->length();
    doc["z_length"] = z.length;
    doc["runs"] = z.z.size();
    doc["eta"] = Number(z.eta);
    doc["theta"] = Number(z.theta);
    doc["out"] = args.out;
    doc["detail"] = z.detail;
    // Per model a certified bound on ‖m(x) − m(z)‖_∞: L·η for one layer (when the method
    // claims η), the two-layer bound of docs/theory.md §4.7 for two; certified_bound is the
    // largest (NaN when some model has none).
    Json bounds = Json::array();
    double largest = 0.0;
    const auto zs = MakeRunSource(z.z, "z");
    for (const Transformer& model : models) {
      double b = std::numeric_limits<double>::quiet_NaN();
      if (model.layers.size() == 1) b = LipschitzConstant(model) * z.eta;
      if (model.layers.size() == 2) b = CertifyTwoLayerSimulation(model, *x, *zs).bound;
      bounds.push_back(Number(b));
      largest = std::isnan(b) || std::isnan(largest) ? std::nan("") : std::max(largest, b);
    }
    doc["certified_bound"] = Number(largest);
    doc["certified_bounds"] = bounds;
    report << doc.dump(2) << "\n";
    return;
  }
  report << fmt::format("seed {}  method {}\n", args.options.seed, args.options.method);
  report << fmt::format("x  {}  (T = {})\n", x->name(), x->length());
  report << fmt::format("z  {}  (|z| = {}, {} runs, target {})\n",
                        args.out == "-" ? "stdout" : args.out, z.length, z.z.size(),
                        args.options.length);
  report << fmt::format("   {}\n", z.detail);
}

}  // namespace

void AddSimulateCommand(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Build a short z from a long x for one or two models and write it.");
  cmd->add_option("--model", args->models, "model file (give one or two, each after --model)")
      ->required()
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  args->z_length = AddMethodOptions(cmd, args->options);
  cmd->add_option("STRING", args->string, kStringHelp)->required();
  cmd->add_option("--out", args->out,
                  "the file z is written to (run-length text); `-`: stdout, the summary then "
                  "on stderr")
      ->required();
  cmd->add_flag("--json", args->json, "print the summary as JSON");
  SetExamples(cmd, {"ltsim simulate --model corpus/models/pair/f.json --model "
                    "corpus/models/pair/g.json corpus/strings/default.txt --z-length 2000 --out "
                    "z.txt"});
  cmd->callback([args] { RunSimulate(*args); });
}

}  // namespace ltsim::cli
