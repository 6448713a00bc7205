// Command-line tests of `--help` and `ltsim help`: every command, examples, plain wrapped text,
// and the suggestions of parse errors.
#include <regex>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

constexpr std::size_t kHelpWidth = 100;  // tools/ltsim/help.h

class HelpTest : public CliTest {
 protected:
  std::vector<std::string> AllCommands() const;
};

// "sandwich", "construct kgram", … : every command and subcommand `ltsim --help` lists.
std::vector<std::string> HelpTest::AllCommands() const {
  std::vector<std::string> all, todo = {""};
  while (!todo.empty()) {
    const std::string path = todo.back();
    todo.pop_back();
    std::vector<std::string> args;
    std::istringstream words(path);
    for (std::string w; words >> w;) args.push_back(w);
    args.push_back("--help");
    const Result r = Run(args);
    std::istringstream lines(r.out);
    bool in_list = false;
    for (std::string line; std::getline(lines, line);) {
      if (line == "Subcommands:") {
        in_list = true;
        continue;
      }
      if (!in_list) continue;
      if (line.empty() || line[0] != ' ') break;
      if (line.size() < 3 || line[2] == ' ') continue;  // a wrapped description line
      std::istringstream first(line);
      std::string name;
      first >> name;
      const std::string child = path.empty() ? name : path + " " + name;
      all.push_back(child);
      todo.push_back(child);
    }
  }
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream words(path);
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

std::size_t Columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

TEST_F(HelpTest, EveryCommandHasHelpWithExamplesAndPlainWrappedText) {
  const std::vector<std::string> commands = AllCommands();
  // The 14 commands of README's table, and the subcommands of construct and experiment.
  for (const char* expected :
       {"eval", "info", "simulate", "sandwich", "generate", "construct", "statistic", "threshold",
        "constants", "sweep", "experiment", "fuzz", "replay", "search", "help", "construct kgram",
        "construct modp-task", "construct simple-task", "experiment paper"})
    EXPECT_NE(std::find(commands.begin(), commands.end(), expected), commands.end()) << expected;
  // CLI11's type and validator names (INT:POSITIVE, TEXT:{a,b}, [1 - 64]) never show.
  const std::regex validator(
      R"((\b(INT|UINT|FLOAT|TEXT)\b)|:POSITIVE|:NONNEGATIVE|:\{|\[\d+ - \d+\]|REQUIRED)");
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    std::vector<std::string> args = Split(command);
    args.push_back("--help");
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Examples (from the repository root"), std::string::npos) << r.out;
    EXPECT_FALSE(std::regex_search(r.out, validator)) << r.out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(Columns(line), kHelpWidth) << line;
    // `ltsim help CMD` prints the same text.
    std::vector<std::string> help = {"help"};
    for (const std::string& w : Split(command)) help.push_back(w);
    const Result same = Run(help);
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(same.out, r.out);
  }
  ExpectInputError({"help", "sandwhich"}, "did you mean 'sandwich'?");
}

TEST_F(CliTest, MistypedNamesGetSuggestions) {
  ExpectInputError({"sandwhich"}, "unknown command 'sandwhich' (did you mean 'sandwich'?)");
  ExpectInputError({"thresold"}, "did you mean 'threshold'?");
  ExpectInputError({"sandwich", kModelF, kModelG, kDefaultString, "--z-lenght", "10"},
                   "did you mean '--z-length'?");
  ExpectInputError({"fuzz", "--case", "1", "--sed", "3"}, "did you mean '--seed'?");
  ExpectInputError(
      {"sandwich", kModelF, kModelG, kDefaultString, "--z-length", "10", "--method", "frequncy"},
      "did you mean 'frequency'?");
  ExpectInputError({"sweep", "--parameter", "period", "--values", "1,2", "--strategy", "serch"},
                   "did you mean 'search'?");
  // A model file with a mistyped key.
  Json model = Json::parse(ReadFile(kModelF));
  model["alphabt"] = model["alphabet"];
  model.erase("alphabet");
  const std::string bad = Temp("bad.json", model.dump());
  ExpectInputError({"info", bad}, "did you mean 'alphabet'?");
}

TEST_F(CliTest, AnErrorAboutAFlagPointsToTheCommandsHelp) {
  ExpectInputError({"sandwich", kModelF, kModelG, kDefaultString, "--bogus"},
                   "(see ltsim sandwich --help)");
  ExpectInputError(
      {"sandwich", kModelF, kModelG, kDefaultString, "--z-length", "10", "--method", "bogus"},
      "(see ltsim sandwich --help)");
  ExpectInputError({"experiment", "paper", "--ks", "1.5"}, "(see ltsim experiment paper --help)");
  ExpectInputError({"info", kModelF, "--frobnicate"}, "(see ltsim info --help)");
}

}  // namespace
}  // namespace ltsim::cli_test
