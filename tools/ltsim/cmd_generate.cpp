// `ltsim generate SPEC --out FILE`: materialise a generated string as text, .u8 or .u16.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/io/output_file.h"
#include "ltsim/strings/sources.h"
#include "output.h"

namespace ltsim::cli {
namespace {

struct GenerateArgs {
  std::string spec;
  std::string out;
  std::uint64_t seed = 1;  // of an iid spec without seed=
  bool json = false;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void RunGenerate(const GenerateArgs& args) {
  io::RefuseOutputIsInput(args.out, {args.spec});
  const auto source = OpenSource(args.spec, args.seed);
  std::string format = "text";
  if (EndsWith(args.out, ".u8")) {
    WriteBinary(*source, args.out, 1);
    format = "u8";
  } else if (EndsWith(args.out, ".u16")) {
    WriteBinary(*source, args.out, 2);
    format = "u16";
  } else {
    WriteRunLengthText(*source, args.out);
  }
  // With `--out -` the string is standard output, and the summary goes to stderr.
  std::ostream& report = args.out == "-" ? std::cerr : std::cout;
  if (args.json) {
    Json doc;
    doc["context"] = Context("generate", args.seed);
    doc["out"] = args.out;
    doc["format"] = format;
    doc["length"] = source->length();
    doc["source"] = source->name();
    report << doc.dump(2) << "\n";
    return;
  }
  report << fmt::format("wrote {} ({} tokens) from {}\n", args.out, source->length(),
                        source->name());
}

}  // namespace

void AddGenerateCommand(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Write a string (e.g. iid:length=N,alphabet=S,seed=K) to a file.");
  cmd->add_option("SPEC", args->spec, std::string("the string to write; ") + kStringHelp)
      ->required();
  cmd->add_option("--out", args->out,
                  "output file: .u8, .u16, anything else run-length text; `-`: stdout (as text), "
                  "the summary "
                  "then on stderr")
      ->required();
  AddSeed(cmd, args->seed, "an iid: string given without seed=");
  cmd->add_flag("--json", args->json, "print what was written as JSON");
  SetExamples(cmd, {"ltsim generate iid:length=100000,alphabet=3,seed=7 --out x.u8",
                    "ltsim generate 'text:0^1000 1 1' --out x.txt"});
  cmd->callback([args] { RunGenerate(*args); });
}

}  // namespace ltsim::cli
