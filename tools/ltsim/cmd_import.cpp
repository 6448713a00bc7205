// `ltsim import IN --out OUT.json`: a model file (safetensors or JSON) rewritten as ltsim-model
// JSON.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/model/safetensors.h"

namespace ltsim::cli {
namespace {

struct ImportArgs {
  std::string in;
  std::string out;
};

void RunImport(const ImportArgs& args) {
  // Up front: the model must survive, and the JSON written must be readable under its name (a
  // path ending in .safetensors is read as safetensors).
  io::RefuseOutputIsInput(args.out, {args.in});
  if (IsSafetensorsPath(args.out))
    throw InputError("--out " + args.out +
                     ": import writes ltsim-model JSON, which a .safetensors name would not be "
                     "read as; name it .json");
  const Transformer model = ReadModel(args.in);
  WriteModel(model, args.out);
  std::cout << fmt::format("wrote {} ({} layers, d = {}, S = {}) from {}\n", args.out,
                           model.layers.size(), model.width, model.alphabet, args.in);
}

}  // namespace

void AddImportCommand(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import", "Rewrite a model (e.g. a trained .safetensors file, docs/python.md) as JSON.");
  cmd->add_option("IN", args->in, "model file (.safetensors or ltsim-model JSON)")->required();
  cmd->add_option("--out", args->out, "ltsim-model JSON file to write")->required();
  SetExamples(cmd, {"ltsim import corpus/models/pair/f.json --out f.json"});
  cmd->callback([args] { RunImport(*args); });
}

}  // namespace ltsim::cli
