// Help that teaches: wrapped text, plain placeholders, examples, `ltsim help CMD`, suggestions.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ltsim::cli {

/// What a STRING argument may be (every command that reads one says the same).
constexpr const char* kStringHelp =
    "x: a file (text of tokens `s` or `s^c`, .u8, .u16), `-` for stdin, `text:TOKENS` inline "
    "(e.g. 'text:0^1000 1 1'), or iid:length=N,alphabet=S[,seed=K][,probs=w0/w1/…] (probs are "
    "weights, normalised to sum 1; without seed=K the command's --seed)";

/// Width help text is wrapped to.
constexpr std::size_t kHelpWidth = 100;

/// Installs ltsim's formatter on `app`; subcommands added afterwards inherit it. Options show
/// a plain placeholder (`--seed N`, `--eps X`), never CLI11's validator names, and their
/// defaults in words; descriptions and footers are wrapped to kHelpWidth columns.
void UseHelpFormatter(CLI::App& app);

/// Sets the "Examples" of a command's --help: each line a command that runs from the
/// repository root on the bundled corpus (the CLI tests run every one). `notes` follow them.
void SetExamples(CLI::App* cmd, const std::vector<std::string>& examples,
                 const std::string& notes = "");

/// The examples SetExamples gave `cmd` (empty if none).
std::vector<std::string> Examples(const CLI::App* cmd);

/// Adds `ltsim help [CMD [SUB]]`: the same text as `ltsim CMD [SUB] --help`.
void AddHelpCommand(CLI::App& app);

/// The subcommand path named by argv ("sandwich", "experiment paper"; "" for none), for
/// pointing an error to `ltsim PATH --help`.
std::string CommandPath(const CLI::App& app, int argc, const char* const* argv);

/// The deepest subcommand named by argv (the app itself when none).
const CLI::App* CommandOf(const CLI::App& app, int argc, const char* const* argv);

/// The first argv word that starts with "--" and is not an option of `cmd` (without any
/// "=VALUE"), or "".
std::string UnknownFlag(const CLI::App& cmd, int argc, const char* const* argv);

/// " (did you mean '--max-length'?)" for UnknownFlag: the closest visible flag by edit distance
/// (DidYouMean), else the one flag that the word abbreviates or extends (`--max-len`,
/// `--epsilon` → `--eps`; at least 3 letters after "--" in common), or "".
std::string SuggestFlag(const CLI::App& cmd, int argc, const char* const* argv);

/// The names of `app`'s subcommands (for suggestions).
std::vector<std::string> SubcommandNames(const CLI::App& app);

/// Adds a hidden old spelling `old_name` of option `new_name` that writes into `target`;
/// when used, stderr gets one line "ltsim: OLD is deprecated…: use NEW…" after the run.
/// `meaning` (optional) says what the old spelling meant when it differs.
template <typename T>
CLI::Option* AddDeprecated(CLI::App* cmd, const std::string& old_name, T& target,
                           const std::string& new_name, const std::string& meaning = "");

/// Queues the deprecation note for `old_name` (once per run).
void NoteDeprecated(const std::string& old_name, const std::string& new_name,
                    const std::string& meaning);

/// Prints the queued notes on stderr: called once the command has run (exit 0 or 1), so a
/// bad-input error, found while parsing or while running, stays one line.
void FlushDeprecationNotes();

/// The spelling of `flag` this command line used: its old spelling if that was given (so an
/// error names what the user typed), else `flag` itself.
std::string AsTyped(const std::string& flag);

/// Drops the queued notes (the run ended with an error line instead).
void DiscardDeprecationNotes();

template <typename T>
CLI::Option* AddDeprecated(CLI::App* cmd, const std::string& old_name, T& target,
                           const std::string& new_name, const std::string& meaning) {
  CLI::Option* option = cmd->add_option(old_name, target, "deprecated: use " + new_name);
  option->group("");
  option->each([old_name, new_name, meaning](const std::string&) {
    NoteDeprecated(old_name, new_name, meaning);
  });
  return option;
}

}  // namespace ltsim::cli
