// Every example of README and of every `--help` runs, and README's
// command table is one table (bug 1).
#include <regex>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

const std::string kTitle = "Examples (from the repository root, on the bundled corpus):";

// The examples of one --help text: the lines after kTitle, joined where they end in " \".
std::vector<std::string> HelpExamples(const std::string& help) {
  std::vector<std::string> examples;
  const std::size_t at = help.find(kTitle);
  if (at == std::string::npos) return examples;
  std::istringstream lines(help.substr(at + kTitle.size() + 1));
  std::string pending;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != ' ') break;
    line = line.substr(line.find_first_not_of(' '));
    pending += pending.empty() ? line : " " + line;
    if (pending.ends_with(" \\")) {
      pending.resize(pending.size() - 2);
      continue;
    }
    examples.push_back(pending);
    pending.clear();
  }
  return examples;
}

// The shell commands of README's ```sh blocks, continuation lines joined, one list a block (a
// block's commands run one after the other in one directory: a merge reads the shard files
// its block wrote). A block that runs python3 (the PyTorch workflow: its ltsim lines read the
// model its first step trains) is left out: it needs python3-torch and minutes of training.
std::vector<std::vector<std::string>> ReadmeBlocks(const std::string& page) {
  std::istringstream lines(ReadFile(kSource + "/" + page));
  std::vector<std::vector<std::string>> blocks;
  bool in_sh = false;
  std::string pending;
  std::vector<std::string> block;
  bool python = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("```")) {
      if (in_sh && !python && !block.empty()) blocks.push_back(block);
      block.clear();
      python = false;
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (in_sh && line.find("python3") != std::string::npos) python = true;
    if (!in_sh) continue;
    const auto hash = line.find("  #");
    if (hash != std::string::npos) line = line.substr(0, hash);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line.empty()) continue;
    const auto start = line.find_first_not_of(' ');
    pending += pending.empty() ? line.substr(start) : " " + line.substr(start);
    if (pending.ends_with("\\")) {
      pending.pop_back();
      while (!pending.empty() && pending.back() == ' ') pending.pop_back();
      continue;
    }
    block.push_back(pending);
    pending.clear();
  }
  return blocks;
}

class ExamplesTest : public CliTest {
 protected:
  // Runs `command` (its `ltsim` or `build/tools/ltsim/ltsim` is this build's binary) in
  // directory `index` holding a link to the corpus, as if from the repository root. Under
  // `mpirun` the binary is named by its path (mpirun runs programs, not shell functions), on
  // this machine only (shared memory, loopback, as root, more ranks than cores allowed).
  Result RunExample(const std::string& command, int index) const {
    const fs::path dir = Path("example" + std::to_string(index));
    if (!fs::exists(dir)) {
      fs::create_directories(dir);
      fs::create_symlink(kSource + "/corpus", dir / "corpus");
    }
    std::string line =
        std::regex_replace(command, std::regex(R"(^build/tools/ltsim/ltsim )"), "ltsim ");
    if (line.starts_with("mpirun ")) {
      line =
          "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader "
          "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo "
          "OMPI_MCA_rmaps_base_oversubscribe=1 " +
          std::regex_replace(line, std::regex(R"( build/tools/ltsim/ltsim )"), " \"$LTSIM\" ");
    }
    return Shell("cd " + Quote(dir.string()) + " && ltsim() { \"$LTSIM\" \"$@\"; } && " + line);
  }

  // The ltsim command line of tools/demo.sh (two lines joined), run as an example; a failed
  // result (exit -1) when the script holds none.
  Result RunDemo() const {
    const std::string demo = ReadFile(kSource + "/tools/demo.sh");
    std::smatch m;
    if (!std::regex_search(
            demo, m,
            std::regex(R"re("\$build/tools/ltsim/ltsim" ([^\n]*)\\\n\s*([^\n]*) "\$@")re"))) {
      ADD_FAILURE() << "no ltsim command line in tools/demo.sh:\n" << demo;
      return Result{-1, "", ""};
    }
    return RunExample("ltsim " + m[1].str() + m[2].str(), 0);
  }

  // Whether `command` can run here: an `mpirun` line needs mpirun and an MPI build of ltsim.
  bool CanRun(const std::string& command) const {
    if (!command.starts_with("mpirun ")) return true;
    return Shell(
               "command -v mpirun > /dev/null && \"$LTSIM\" --version | grep -q 'MPI: built "
               "in'")
               .exit_code == 0;
  }

  // 0, or 1 for the examples that show a refutation: the planted broken simulator, a
  // `refute` whose bound a pair beats (its help says which: the first and third example), and
  // the `certify` examples of pairs that disagree (all but a model against itself).
  static int ExpectedExit(const std::string& command) {
    if (command.starts_with("ltsim certify "))
      return command.find("pair/f.json corpus/models/pair/f.json") != std::string::npos ? 0 : 1;
    if (command.find("test-drop-suffix") != std::string::npos) return 1;
    if (command.starts_with("ltsim refute ") &&
        command.find("; ltsim replay") == std::string::npos &&
        command.find("--bound thm4.1-length") == std::string::npos)
      return 1;
    return 0;
  }
};

TEST_F(ExamplesTest, EveryHelpExampleRuns) {
  std::vector<std::string> examples;
  // Every command and subcommand: the same walk as help_test's, through `ltsim help`.
  std::vector<std::vector<std::string>> todo = {{}};
  std::size_t commands = 0;
  while (!todo.empty()) {
    std::vector<std::string> path = todo.back();
    todo.pop_back();
    std::vector<std::string> args = path;
    args.push_back("--help");
    const Result r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& e : HelpExamples(r.out)) examples.push_back(e);
    ++commands;
    std::istringstream lines(r.out);
    bool in_list = false;
    for (std::string line; std::getline(lines, line);) {
      if (line == "Subcommands:") {
        in_list = true;
        continue;
      }
      if (!in_list) continue;
      if (line.empty() || line[0] != ' ') break;
      if (line.size() < 3 || line[2] == ' ') continue;
      std::istringstream first(line);
      std::string name;
      first >> name;
      std::vector<std::string> child = path;
      child.push_back(name);
      todo.push_back(child);
    }
  }
  EXPECT_GE(commands, 19u);
  EXPECT_GE(examples.size(), 30u);
  for (std::size_t k = 0; k < examples.size(); ++k) {
    SCOPED_TRACE(examples[k]);
    ASSERT_TRUE(examples[k].starts_with("ltsim ")) << examples[k];
    const Result r = RunExample(examples[k], static_cast<int>(k));
    EXPECT_EQ(r.exit_code, ExpectedExit(examples[k])) << r.out << r.err;
    EXPECT_FALSE(r.out.empty());
  }
}

TEST_F(ExamplesTest, EveryReadmeExampleRuns) {
  // README and the command reference it sends readers to (docs/commands.md).
  std::vector<std::vector<std::string>> blocks = ReadmeBlocks("README.md");
  for (auto& block : ReadmeBlocks("docs/commands.md")) blocks.push_back(std::move(block));
  std::size_t run = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (const std::string& c : blocks[b]) {
      SCOPED_TRACE(c);
      // tools/demo.sh and tools/test.sh install packages and build: their ltsim line is run
      // below (the demo) or they are the test suite itself.
      if (c.starts_with("tools/")) continue;
      ASSERT_TRUE(
          c.starts_with("build/tools/ltsim/ltsim ") || c.starts_with("ltsim ") ||
          (c.starts_with("mpirun ") && c.find(" build/tools/ltsim/ltsim ") != std::string::npos))
          << "README example that no test runs: " << c;
      if (!CanRun(c)) {
        std::cout << "not run (needs mpirun and an MPI build): " << c << "\n";
        continue;
      }
      const Result r = RunExample(c, static_cast<int>(b));
      EXPECT_EQ(r.exit_code, ExpectedExit(c)) << r.out << r.err;
      ++run;
    }
  }
  EXPECT_GE(run, 7u);  // the default run and the guided tour at least
}

// The demo ends with a conclusion in words: what the 1,999-token z certifies about x.
TEST_F(ExamplesTest, DemoEndsWithAConclusion) {
  const Result r = RunDemo();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_TRUE(last.starts_with("conclusion: from the 1,999-token z alone")) << last;
  EXPECT_NE(last.find("1,000,355-token x"), std::string::npos) << last;
  EXPECT_NE(last.find("the rate sim ≤ L·η held"), std::string::npos) << last;
}

// README quotes the demo's conclusion word for word: the numbers it shows are the ones the
// demo prints now.
TEST_F(ExamplesTest, ReadmeQuotesTheDemo) {
  const Result r = RunDemo();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  while (!last.empty() && last.back() == '\n') last.pop_back();
  ASSERT_TRUE(last.starts_with("conclusion:")) << last;
  const std::string readme = ReadFile(kSource + "/README.md");
  EXPECT_NE(readme.find("\n" + last + "\n"), std::string::npos)
      << "README.md does not quote the demo's last line:\n"
      << last;
}

// Bug 1: README's command table was cut by a blank line (its last rows rendered as text).
TEST_F(CliTest, ReadmeCommandTableIsOneTable) {
  std::istringstream lines(ReadFile(kSource + "/README.md"));
  std::vector<std::string> table;
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("| command |")) in_table = true;
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    table.push_back(line);
  }
  ASSERT_GE(table.size(), 3u);
  EXPECT_TRUE(table[1].starts_with("|---")) << table[1];
  std::string rows;
  for (const std::string& row : table) rows += row + "\n";
  for (const char* command :
       {"eval", "info", "simulate", "sandwich", "generate", "construct", "statistic", "threshold",
        "fuzz", "replay", "constants", "sweep", "experiment", "search", "help"})
    EXPECT_NE(rows.find(std::string("`ltsim ") + command), std::string::npos) << command;
}

}  // namespace
}  // namespace ltsim::cli_test
