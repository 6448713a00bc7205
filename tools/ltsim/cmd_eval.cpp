// `ltsim eval MODEL STRING`: f(x) by the fastest exact evaluator (`--batch LIST`: many strings).
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/model_file.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct EvalArgs {
  std::string model;
  std::string string;
  std::string batch;
  std::uint64_t seed = 1;  // of iid specs without seed= (the only randomness of eval)
  bool json = false;
};

// The STRING specs of a batch file: one a line, blank lines and `#` lines skipped.
std::vector<std::string> ReadBatch(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open batch file");
  std::vector<std::string> specs;
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    specs.push_back(line.substr(first, last - first + 1));
  }
  if (in.bad()) throw InputError(path + ": cannot read batch file");
  if (specs.empty()) throw InputError(path + ": batch file lists no string");
  return specs;
}

// One model read once, every string of the batch evaluated in order: a line each, JSON lines
// {"string", "length", "output"} with --json (the context block is the first line).
void RunBatch(const Transformer& model, const EvalArgs& args) {
  const std::vector<std::string> specs = ReadBatch(args.batch);
  if (args.json) std::cout << Json{{"context", Context("eval", args.seed)}}.dump() << "\n";
  for (const std::string& spec : specs) {
    const auto x = OpenSource(spec, args.seed);
    const CheckedOutput checked = EvaluateChecked(model, *x);
    const Vector& output = checked.output;
    if (args.json) {
      Json line;
      line["string"] = spec;
      if (spec.starts_with("iid:")) line["x"] = x->name();  // with the seed it used
      line["length"] = x->length();
      line["output"] = Array(output);
      line["precise"] = checked.precise;
      std::cout << line.dump() << "\n";
    } else {
      std::cout << fmt::format("{}  T = {}  f(x) = {}\n", spec, x->length(), Show(output));
    }
  }
}

void RunEval(const EvalArgs& args) {
  const Transformer model = ReadModel(args.model);
  if (!args.batch.empty() && !args.string.empty())
    throw InputError("eval: give STRING or --batch LIST, not both");
  if (args.batch.empty() && args.string.empty())
    throw InputError("eval: missing STRING (or --batch LIST)");
  if (!args.batch.empty()) return RunBatch(model, args);
  auto progress = std::make_shared<Progress>("eval", "tokens");
  const auto x = WithProgress(OpenSource(args.string, args.seed), progress);
  const CheckedOutput checked = EvaluateChecked(model, *x);
  const Vector& output = checked.output;
  progress->Finish();
  // Where doubles cannot hold the model (docs/theory.md §8.7) the 50-digit values are printed.
  if (checked.precise)
    std::cerr << fmt::format(
        "eval: the double evaluation's rounding bound exceeds 1e-9·max(1, |f(x)|): the outputs "
        "are the 50-digit evaluation's{} (docs/theory.md §8.7)\n",
        std::isfinite(checked.error_bound)
            ? fmt::format(", within {:.3g}", checked.error_bound)
            : std::string(", which may still be wrong: an attention decision lies within its "
                          "rounding"));
  if (args.json) {
    Json doc;
    doc["context"] = Context("eval", args.seed);
    doc["x"] = x->name();  // an iid spec spelled with the seed it used
    doc["output"] = Array(output);
    doc["length"] = x->length();
    doc["precise"] = checked.precise;
    doc["rounding_bound"] = Number(checked.error_bound);
    PrintJson(doc);
    return;
  }
  std::cout << fmt::format("f(x) = {}   (model {}, T = {}{})\n", Show(output),
                           model.name.empty() ? args.model : model.name, x->length(),
                           args.string.starts_with("iid:") ? ", x = " + x->name() : "");
}

}  // namespace

void AddEvalCommand(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Evaluate a model on a string (one pass for one-layer models, any length).");
  cmd->add_option("MODEL", args->model, "model file (ltsim-model JSON or .safetensors)")
      ->required();
  cmd->add_option("STRING", args->string, kStringHelp);
  cmd->add_option("--batch", args->batch,
                  "file listing one STRING a line: evaluates each, one output line a string");
  AddSeed(cmd, args->seed, "iid: strings given without seed=");
  cmd->add_flag("--json", args->json, "print {\"output\": [...], \"length\": T} as JSON");
  SetExamples(cmd, {"ltsim eval corpus/models/pair/f.json corpus/strings/default.txt",
                    "ltsim eval corpus/models/pair/f.json 'text:0^1000 1 1' --json"});
  cmd->callback([args] { RunEval(*args); });
}

}  // namespace ltsim::cli
