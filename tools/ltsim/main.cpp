// ltsim: parse → validate → build options → run, with one error funnel (docs/design.md §7, §3).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/core/version.h"
#include "ltsim/dist/dist.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"
#include "strict_numbers.h"

namespace {

// "(see ltsim CMD --help)" for the command argv names.
std::string SeeHelp(const CLI::App& app, int argc, char** argv) {
  const std::string path = ltsim::cli::CommandPath(app, argc, argv);
  return " (see ltsim " + (path.empty() ? "" : path + " ") + "--help)";
}

// CLI11's parse errors, made one line with a suggestion for a mistyped flag.
std::string ParseErrorLine(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::string message = e.what();
  for (char& c : message)
    if (c == '\n') c = ' ';
  // CLI11 names a hidden option (an old spelling) "": its validator names it instead.
  if (message.starts_with(": ")) message = message.substr(2);
  const CLI::App* cmd = ltsim::cli::CommandOf(app, argc, argv);
  // A mistyped flag is the cause of whatever CLI11 reports then ("--max-length is required"
  // for `--max-lenght 10`): name it as typed.
  const std::string unknown = ltsim::cli::UnknownFlag(*cmd, argc, argv);
  if (!unknown.empty()) message = "unknown flag '" + unknown + "'";
  const std::string path = ltsim::cli::CommandPath(app, argc, argv);
  return (path.empty() ? "" : path + ": ") + message + ltsim::cli::SuggestFlag(*cmd, argc, argv) +
         SeeHelp(app, argc, argv);
}

// An error as one line of bounded length, whatever input it echoes (a key, a tensor name, a
// value: control characters escaped, cut after kMaxErrorCharacters).
constexpr std::size_t kMaxErrorCharacters = 1000;
std::string OneLine(const std::string& message) {
  return ltsim::io::Printable(message, kMaxErrorCharacters);
}

// Error lines come from rank 0 alone (every rank parses the same command line, so every rank
// meets the same bad input); the others' are swallowed.
std::ostream& Error() {
  static std::ostringstream discard;
  if (ltsim::dist::Rank() != 0) {
    discard.str("");
    return discard;
  }
  return std::cerr << "ltsim: ";
}

// Parses and runs one command line (argv[0] is the program); the exit code.
int RunCommandLine(int argc, char** argv) {
  CLI::App app{
      "ltsim: limit transformers, short simulating strings and the length-generalization "
      "sandwich (Izzo–Nichani–Lee, ICLR 2026). Start with `tools/demo.sh`, then the guided "
      "tour in README.md; `ltsim help CMD` explains one command.",
      "ltsim"};
  ltsim::cli::UseHelpFormatter(app);
  ltsim::cli::SetExamples(&app,
                          {"ltsim sandwich corpus/models/pair/f.json corpus/models/pair/g.json "
                           "corpus/strings/default.txt --z-length 2000",
                           "ltsim help sandwich"});
  app.set_version_flag("--version", std::string("ltsim ") + ltsim::kVersion +
                                        "\nMPI: " + ltsim::dist::MpiDescription());
  app.require_subcommand(1);
  int exit_code = 0;
  ltsim::cli::AddCommands(app, exit_code);
  // `merge` re-runs the shards' command line with their items (dist_options.h).
  ltsim::cli::AddMergeCommand(app, exit_code, [&](const std::vector<std::string>& args) {
    std::vector<std::string> words = {argv[0]};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> pointers;
    for (std::string& w : words) pointers.push_back(w.data());
    return RunCommandLine(static_cast<int>(pointers.size()), pointers.data());
  });
  ltsim::cli::AddHelpCommand(app);
  ltsim::cli::RequireStrictNumbers(app);
  // `ltsim` alone: the help with the list of commands, on stderr since nothing ran (exit 2).
  if (argc == 1) {
    if (ltsim::dist::Rank() == 0)
      std::cerr << app.help() << "\nltsim: give a command (`ltsim help CMD` explains one)\n";
    return 2;
  }
  try {
    const auto named = [&](const CLI::App* sub) { return sub->check_name(argv[1]); };
    if (argc >= 2 && argv[1][0] != '-' && app.get_subcommands(named).empty())
      throw ltsim::InputError(std::string("unknown command '") + argv[1] + "'" +
                              ltsim::DidYouMean(argv[1], ltsim::cli::SubcommandNames(app)) +
                              " (see ltsim --help)");
    app.parse(argc, argv);
    // The old spellings' notes once the command has run: an error instead stays one line.
    if (ltsim::dist::Rank() == 0) ltsim::cli::FlushDeprecationNotes();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    ltsim::cli::DiscardDeprecationNotes();
    Error() << OneLine(ParseErrorLine(app, e, argc, argv)) << "\n";
    return 2;
  } catch (const ltsim::OptionError& e) {
    ltsim::cli::DiscardDeprecationNotes();
    // The library names the option by its field; on the command line it is a flag.
    Error() << OneLine(ltsim::cli::FlagMessage(e) + SeeHelp(app, argc, argv)) << "\n";
    return 2;
  } catch (const ltsim::InputError& e) {
    ltsim::cli::DiscardDeprecationNotes();
    // An error about a flag names it as typed (an old spelling) and points to the help.
    std::string message = e.what();
    if (message.starts_with("--")) {
      const std::size_t end = message.find_first_of(": ");
      const std::string flag = message.substr(0, end);
      message = ltsim::cli::AsTyped(flag) + message.substr(flag.size());
    }
    Error() << OneLine(message +
                       (message.starts_with("--") ? SeeHelp(app, argc, argv) : std::string()))
            << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A file-system call that failed on a path the user gave: the path and the reason.
    ltsim::cli::DiscardDeprecationNotes();
    Error() << OneLine(e.path1().string() + ": " + e.code().message()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    Error() << "out of memory (the input asks for more than this machine holds)\n";
    return 2;
  } catch (const std::exception& e) {
    // Not expected: bad input is reported as InputError. Still one line, not a crash.
    Error() << OneLine(std::string("unexpected error: ") + e.what()) << "\n";
    return 2;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI only when an MPI launcher started us (dist.h): the plain binary never initialises it.
  ltsim::dist::Session mpi(&argc, &argv);
  if (ltsim::dist::Size() > 1) {
    ltsim::SetCurrentDealer(&ltsim::dist::MpiDealer());
    // Rank 0 prints: the other ranks' standard output goes nowhere.
    if (ltsim::dist::Rank() != 0 && !std::freopen("/dev/null", "w", stdout)) return 2;
  }
  // A signal ends the run without destructors: the temporary files of outputs being written
  // are removed first (a command that stops cleanly on a signal installs its own handlers).
  ltsim::io::RemoveTemporaryFilesOnSignals();
  ltsim::cli::SetCommandLine(argc, argv);
  const int code = RunCommandLine(argc, argv);
  if (ltsim::dist::Size() > 1 && ltsim::dist::Interrupted()) {
    // Everything finished is written; a rank may be dead, so MPI_Finalize could hang.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ltsim::dist::AbortAll(code);
  }
  return code;
}
