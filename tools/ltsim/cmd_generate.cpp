// `ltsim generate SPEC --out FILE`: materialise a generated string as text, .u8 or .u16.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "ltsim/io/output_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim::cli {
namespace {

struct GenerateArgs {
  std::string spec;
  std::string out;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void RunGenerate(const GenerateArgs& args) {
  io::RefuseOutputIsInput(args.out, {args.spec});
  const auto source = OpenSource(args.spec);
  if (EndsWith(args.out, ".u8"))
    WriteBinary(*source, args.out, 1);
  else if (EndsWith(args.out, ".u16"))
    WriteBinary(*source, args.out, 2);
  else
    WriteRunLengthText(*source, args.out);
  std::cout << fmt::format("wrote {} ({} tokens) from {}\n", args.out, source->length(),
                           source->name());
}

}  // namespace

void AddGenerateCommand(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Write a string (e.g. iid:length=N,alphabet=S,seed=K) to a file.");
  cmd->add_option("SPEC", args->spec, "string spec or file to convert")->required();
  cmd->add_option("--out", args->out, "output: .u8, .u16, anything else run-length text")
      ->required();
  cmd->callback([args] { RunGenerate(*args); });
}

}  // namespace ltsim::cli
