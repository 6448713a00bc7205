// `ltsim eval MODEL STRING`: f(x) by the fastest exact evaluator.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/model_file.h"
#include "output.h"

namespace ltsim::cli {
namespace {

struct EvalArgs {
  std::string model;
  std::string string;
  bool json = false;
};

void RunEval(const EvalArgs& args) {
  const Transformer model = ReadModel(args.model);
  const auto x = OpenSource(args.string);
  const Vector output = Evaluate(model, *x);
  if (args.json) {
    Json doc;
    doc["context"] = Context("eval", 0);
    doc["output"] = Array(output);
    doc["length"] = x->length();
    PrintJson(doc);
    return;
  }
  std::cout << fmt::format("f(x) = {}   (model {}, T = {})\n", Show(output),
                           model.name.empty() ? args.model : model.name, x->length());
}

}  // namespace

void AddEvalCommand(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Evaluate a model on a string (one pass for one-layer models, any length).");
  cmd->add_option("MODEL", args->model, "model file (ltsim-model JSON)")->required();
  cmd->add_option("STRING", args->string,
                  "string: text (s or s^c tokens), .u8, .u16, or iid:length=N,alphabet=S,seed=K")
      ->required();
  cmd->add_flag("--json", args->json, "print {\"output\": [...], \"length\": T} as JSON");
  cmd->callback([args] { RunEval(*args); });
}

}  // namespace ltsim::cli
