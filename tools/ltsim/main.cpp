// ltsim: parse → validate → build options → run, with one error funnel (docs/design.md §7, §3).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "dist_options.h"
#include "ltsim/core/error.h"
#include "ltsim/dist/dist.h"
#include "strict_numbers.h"

namespace {

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
      "sandwich (Izzo–Nichani–Lee, ICLR 2026)."};
  app.set_version_flag("--version", std::string("ltsim ") + LTSIM_VERSION + "\nMPI: " +
                                        ltsim::dist::MpiDescription());
  app.require_subcommand(1);
  ltsim::cli::AddEvalCommand(app);
  ltsim::cli::AddInfoCommand(app);
  ltsim::cli::AddImportCommand(app);
  ltsim::cli::AddSimulateCommand(app);
  ltsim::cli::AddSandwichCommand(app);
  ltsim::cli::AddGenerateCommand(app);
  ltsim::cli::AddConstructCommand(app);
  ltsim::cli::AddStatisticCommand(app);
  ltsim::cli::AddThresholdCommand(app);
  ltsim::cli::AddConstantsCommand(app);
  ltsim::cli::AddSweepCommand(app);
  ltsim::cli::AddExperimentCommand(app);
  int exit_code = 0;
  ltsim::cli::AddFuzzCommand(app, exit_code);
  ltsim::cli::AddSearchCommand(app, exit_code);
  ltsim::cli::AddTightnessCommand(app, exit_code);
  ltsim::cli::AddRefuteCommand(app, exit_code);
  // `merge` re-runs the shards' command line with their items (dist_options.h).
  ltsim::cli::AddMergeCommand(app, exit_code, [&](const std::vector<std::string>& args) {
    std::vector<std::string> words = {argv[0]};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> pointers;
    for (std::string& w : words) pointers.push_back(w.data());
    return RunCommandLine(static_cast<int>(pointers.size()), pointers.data());
  });
  ltsim::cli::RequireStrictNumbers(app);
  try {
    const auto named = [&](const CLI::App* sub) { return sub->check_name(argv[1]); };
    if (argc >= 2 && argv[1][0] != '-' && app.get_subcommands(named).empty())
      throw ltsim::InputError(std::string("unknown command '") + argv[1] + "' (see ltsim --help)");
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    Error() << e.what() << " (see ltsim --help)\n";
    return 2;
  } catch (const ltsim::OptionError& e) {
    // The library names the option by its field; on the command line it is a flag.
    std::cerr << "ltsim: " << ltsim::cli::FlagForOption(e.option()) << ": " << e.rule() << "\n";
    return 2;
  } catch (const ltsim::InputError& e) {
    Error() << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    Error() << "out of memory (the input asks for more than this machine holds)\n";
    return 2;
  } catch (const std::exception& e) {
    // Not expected: bad input is reported as InputError. Still one line, not a crash.
    Error() << "unexpected error: " << e.what() << "\n";
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
