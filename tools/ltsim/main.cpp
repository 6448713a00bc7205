// ltsim: parse → validate → build options → run, with one error funnel (docs/design.md §7, §3).
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"
#include "ltsim/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "ltsim: limit transformers, short simulating strings and the length-generalization "
      "sandwich (Izzo–Nichani–Lee, ICLR 2026)."};
  app.set_version_flag("--version", std::string("ltsim ") + LTSIM_VERSION);
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
    std::cerr << "ltsim: " << e.what() << " (see ltsim --help)\n";
    return 2;
  } catch (const ltsim::InputError& e) {
    std::cerr << "ltsim: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "ltsim: out of memory (the input asks for more than this machine holds)\n";
    return 2;
  } catch (const std::exception& e) {
    // Not expected: bad input is reported as InputError. Still one line, not a crash.
    std::cerr << "ltsim: unexpected error: " << e.what() << "\n";
    return 2;
  }
  return exit_code;
}
