// ltsim's help formatter, examples, `ltsim help` and the suggestions of parse errors (help.h).
#include "help.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"

namespace ltsim::cli {
namespace {

constexpr std::size_t kNameColumn = 30;
constexpr const char* kExamplesTitle =
    "Examples (from the repository root, on the bundled corpus):";

std::map<const CLI::App*, std::vector<std::string>>& ExampleTable() {
  static std::map<const CLI::App*, std::vector<std::string>> table;
  return table;
}

// Greedy word wrap of one paragraph to `width` columns, every line after the first indented.
std::string Wrap(const std::string& text, std::size_t width, std::size_t indent,
                 std::size_t first_used = 0) {
  std::istringstream words(text);
  std::string out, word;
  std::size_t used = first_used;
  bool line_start = true;
  while (words >> word) {
    // UTF-8 continuation bytes take no column.
    std::size_t columns = 0;
    for (unsigned char c : word) columns += (c & 0xC0) != 0x80;
    if (!line_start && used + 1 + columns > width) {
      out += "\n" + std::string(indent, ' ');
      used = indent;
      line_start = true;
    }
    if (!line_start) out += ' ', ++used;
    out += word;
    used += columns;
    line_start = false;
  }
  return out;
}

// Lines that start with two spaces (examples, tables) stay as they are; the rest is wrapped.
std::string WrapBlock(const std::string& text, std::size_t width) {
  std::istringstream lines(text);
  std::string out, line;
  while (std::getline(lines, line)) {
    if (line.starts_with("  ") || line.empty())
      out += line + "\n";
    else
      out += Wrap(line, width, 0) + "\n";
  }
  return out;
}

std::size_t Columns(const std::string& s) {
  std::size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80;
  return columns;
}

// A plain placeholder for an option's value, never CLI11's type and validator names
// ("INT:POSITIVE"): N for whole numbers, X for reals, a word for the rest.
std::string Placeholder(const CLI::Option* opt) {
  static const std::map<std::string, std::string> kByName = {
      {"out", "FILE"},       {"out-dir", "DIR"},        {"resume", "DIR"},
      {"model", "FILE"},     {"method", "M"},           {"methods", "M"},
      {"set", "NAME=VALUE"}, {"bound", "EXPR"},         {"values", "V1,V2,…"},
      {"omegas", "W1,W2,…"}, {"primes", "P1,P2,…"},     {"alphabets", "S1,S2,…"},
      {"ks", "K1,K2,…"},     {"replay", "FILE"},        {"no-match", "POLICY"},
      {"objective", "NAME"}, {"proposals", "NAME"},     {"input", "FAMILY"},
      {"parameter", "NAME"}, {"strategy", "NAME"},      {"kgram-method", "M"},
      {"shard", "I/K"},      {"shard-out", "FILE"},     {"out-f", "FILE"},
      {"out-g", "FILE"},     {"parameters", "P1,P2,…"}, {"z-lengths", "N1,N2,…"},
      {"theorem", "4.1"},    {"inputs", "FAMILY,…"}};
  const std::vector<std::string> names = opt->get_lnames();
  if (!names.empty()) {
    const auto it = kByName.find(names.front());
    if (it != kByName.end()) return it->second;
  }
  std::string type = opt->get_type_name();
  const auto cut = type.find_first_of(":{ ");
  if (cut != std::string::npos) type = type.substr(0, cut);
  std::string placeholder = type == "INT" || type == "UINT" ? "N" : type == "FLOAT" ? "X" : "VALUE";
  if (opt->get_expected_max() == CLI::detail::expected_max_vector_size)
    placeholder += opt->get_delimiter() == ',' ? ",…" : " …";
  return placeholder;
}

// An example command broken at spaces into lines of at most kHelpWidth columns, continued
// with " \" so that it can be pasted into a shell as it is.
std::string ExampleLines(const std::string& example) {
  constexpr std::size_t kIndent = 2, kContinued = 6;
  // Words, a single-quoted argument kept whole ('text:0^1000 1 1' is one word).
  std::vector<std::string> list;
  std::istringstream split(example);
  for (std::string w; split >> w;) {
    const bool open = !list.empty() && std::count(list.back().begin(), list.back().end(), '\'') % 2;
    if (open)
      list.back() += " " + w;
    else
      list.push_back(w);
  }
  std::string out(kIndent, ' ');
  std::size_t used = kIndent;
  bool first = true;
  for (const std::string& word : list) {
    if (!first && used + 1 + word.size() + 2 > kHelpWidth) {
      out += " \\\n" + std::string(kContinued, ' ');
      used = kContinued;
      first = true;
    }
    if (!first) out += ' ', ++used;
    out += word;
    used += word.size();
    first = false;
  }
  return out + "\n";
}

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App* app) const override {
    const std::string desc = app->get_description();
    return desc.empty() ? std::string() : Wrap(desc, kHelpWidth, 0) + "\n";
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    // A flag (--json, --help) has no type name and takes no value.
    if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";
    return " " + Placeholder(opt);
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (opt->get_required()) desc += " (required)";
    const std::string def = opt->get_default_str();
    if (!def.empty() && !opt->get_type_name().empty() && desc.find("default") == std::string::npos)
      desc += " (default " + def + ")";
    return desc;
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    const std::string name =
        "  " + make_option_name(opt, is_positional) + (is_positional ? "" : make_option_opts(opt));
    const std::string desc = make_option_desc(opt);
    std::string out = name;
    const std::size_t used = Columns(name);
    if (used + 2 > kNameColumn) {
      out += "\n" + std::string(kNameColumn, ' ');
    } else {
      out += std::string(kNameColumn - used, ' ');
    }
    return out + Wrap(desc, kHelpWidth, kNameColumn, kNameColumn) + "\n";
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    const std::string name = "  " + sub->get_display_name(true);
    std::string out = name;
    const std::size_t used = Columns(name);
    out += used + 2 > kNameColumn ? "\n" + std::string(kNameColumn, ' ')
                                  : std::string(kNameColumn - used, ' ');
    return out + Wrap(sub->get_description(), kHelpWidth, kNameColumn, kNameColumn) + "\n";
  }

  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = app->get_footer();
    return footer.empty() ? std::string() : WrapBlock(footer, kHelpWidth);
  }
};

const CLI::App* Child(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->check_name(name)) return sub;
  return nullptr;
}

}  // namespace

void UseHelpFormatter(CLI::App& app) { app.formatter(std::make_shared<HelpFormatter>()); }

void SetExamples(CLI::App* cmd, const std::vector<std::string>& examples,
                 const std::string& notes) {
  ExampleTable()[cmd] = examples;
  std::string footer = kExamplesTitle;
  footer += "\n";
  for (const std::string& e : examples) footer += ExampleLines(e);
  if (!notes.empty()) footer += "\n" + notes;
  cmd->footer(footer);
}

std::vector<std::string> Examples(const CLI::App* cmd) {
  const auto it = ExampleTable().find(cmd);
  return it == ExampleTable().end() ? std::vector<std::string>{} : it->second;
}

void AddHelpCommand(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app.add_subcommand("help", "Print the help of a command: ltsim help CMD.");
  help->add_option("CMD", *words, "a command, and its subcommand if it has some");
  SetExamples(help, {"ltsim help sandwich", "ltsim help experiment paper"});
  help->callback([&app, words] {
    const CLI::App* cmd = &app;
    std::string parent, path = app.get_name();
    for (const std::string& word : *words) {
      const CLI::App* sub = Child(*cmd, word);
      if (sub == nullptr)
        throw InputError("help: unknown command '" + word + "'" +
                         DidYouMean(word, SubcommandNames(*cmd)) + " (see " + path + " --help)");
      cmd = sub;
      parent = path;
      path += " " + word;
    }
    // As `--help` prints it: CLI11 appends the command's own name to its parents' path.
    std::cout << (cmd == &app ? app.help() : cmd->help(parent));
  });
}

const CLI::App* CommandOf(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* cmd = &app;
  for (int k = 1; k < argc; ++k) {
    const std::string word = argv[k];
    if (word.starts_with("-")) continue;
    const CLI::App* sub = Child(*cmd, word);
    if (sub == nullptr) {
      if (!cmd->get_subcommands({}).empty() && cmd == &app) break;
      continue;
    }
    cmd = sub;
  }
  return cmd;
}

std::string CommandPath(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> names;
  for (const CLI::App* cmd = CommandOf(app, argc, argv); cmd != nullptr && cmd != &app;
       cmd = cmd->get_parent())
    names.insert(names.begin(), cmd->get_name());
  std::string path;
  for (const std::string& name : names) path += (path.empty() ? "" : " ") + name;
  return path;
}

std::string UnknownFlag(const CLI::App& cmd, int argc, const char* const* argv) {
  for (int k = 1; k < argc; ++k) {
    std::string word = argv[k];
    if (!word.starts_with("--") || word == "--") continue;
    word = word.substr(0, word.find('='));
    bool known = false;
    for (const CLI::Option* opt : cmd.get_options())
      if (opt->check_lname(word.substr(2))) known = true;
    if (!known) return word;
  }
  return "";
}

std::string SuggestFlag(const CLI::App& cmd, int argc, const char* const* argv) {
  const std::string word = UnknownFlag(cmd, argc, argv);
  if (word.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->get_group().empty()) continue;  // deprecated spellings are not suggested
    for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
  }
  const std::string close = DidYouMean(word, names);
  if (!close.empty()) return close;
  // An abbreviation or an extension of exactly one flag: "--max-len", "--epsilon" ("--eps").
  constexpr std::size_t kMinCommon = 2 + 3;  // "--" and three letters
  std::string only;
  for (const std::string& name : names) {
    const bool prefix = name.size() >= kMinCommon && word.size() >= kMinCommon &&
                        (name.starts_with(word) || word.starts_with(name));
    if (!prefix || name == only) continue;
    if (!only.empty()) return "";  // ambiguous: no guess
    only = name;
  }
  return only.empty() ? "" : " (did you mean '" + only + "'?)";
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

namespace {
std::vector<std::string>& PendingNotes() {
  static std::vector<std::string> notes;
  return notes;
}
}  // namespace

namespace {
// New flag → the old spelling this run used for it.
std::map<std::string, std::string>& UsedOldSpellings() {
  static std::map<std::string, std::string> used;
  return used;
}
}  // namespace

std::string AsTyped(const std::string& flag) {
  const auto it = UsedOldSpellings().find(flag);
  return it == UsedOldSpellings().end() ? flag : it->second;
}

void NoteDeprecated(const std::string& old_name, const std::string& new_name,
                    const std::string& meaning) {
  UsedOldSpellings()[new_name.substr(0, new_name.find(' '))] = old_name;
  static std::set<std::string> noted;
  if (!noted.insert(old_name).second) return;
  PendingNotes().push_back("ltsim: " + old_name + " is deprecated" +
                           (meaning.empty() ? "" : " (" + meaning + ")") + ": use " + new_name +
                           "; the old spelling goes in the next version");
}

void FlushDeprecationNotes() {
  for (const std::string& note : PendingNotes()) std::cerr << note << "\n";
  PendingNotes().clear();
}

void DiscardDeprecationNotes() { PendingNotes().clear(); }

}  // namespace ltsim::cli
