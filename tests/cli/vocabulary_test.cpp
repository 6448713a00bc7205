// Command-line tests of the one vocabulary (docs/commands.md "One name per concept"): the new
// names, the old spellings with their one-line deprecation note, one default seed, --threads,
// --json.
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

// The deprecation note: exactly one line on stderr naming the old and the new spelling.
void ExpectDeprecated(const Result& r, const std::string& old_name, const std::string& new_name) {
  EXPECT_EQ(CountLines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(old_name + " is deprecated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use " + new_name), std::string::npos) << r.err;
}

TEST_F(CliTest, OldSpellingsStillWorkWithOneNote) {
  const std::vector<std::string> sandwich = {"sandwich", kModelF, kModelG, kDefaultString,
                                             "--json"};
  auto with = [&](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const Json reference = RunJson(with(sandwich, {"--z-length", "500"}));
  const Result old = Run(with(sandwich, {"--length", "500"}));
  ASSERT_EQ(old.exit_code, 0) << old.err;
  ExpectDeprecated(old, "--length", "--z-length");
  EXPECT_EQ(Json::parse(old.out)["gap_z"], reference["gap_z"]);

  const Result constants = Run({"constants", kModelF, "--n", "300", "--T", "9000", "--json"});
  ASSERT_EQ(constants.exit_code, 0) << constants.err;
  EXPECT_EQ(Json::parse(constants.out)["constants"]["n"], 300);
  EXPECT_EQ(Json::parse(constants.out)["constants"]["T"], 9000);
  EXPECT_EQ(CountLines(constants.err), 2u) << constants.err;  // one note per old spelling

  const Result sweep =
      Run({"sweep", "--parameter", "period", "--values", "1,2", "--pairs", "1", "--method",
           "random", "--x-length", "1000", "--fixed-n", "50", "--json"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_EQ(Json::parse(sweep.out)["options"]["method"], "random");
  EXPECT_EQ(Json::parse(sweep.out)["options"]["fixed_n"], 50);
  EXPECT_NE(sweep.err.find("--method is deprecated"), std::string::npos) << sweep.err;
  EXPECT_NE(sweep.err.find("use --strategy"), std::string::npos) << sweep.err;

  // fuzz's old --max-length meant |x|: it still does, with a note saying so.
  const fs::path dir = Path("fuzz");
  const Result fuzz = Run({"fuzz", "--cases", "3", "--out", dir.string(), "--max-length", "2500",
                           "--max-target", "400"});
  ASSERT_EQ(fuzz.exit_code, 0) << fuzz.err;
  const Json campaign = Json::parse(ReadFile(dir / "campaign.json"));
  EXPECT_EQ(campaign["max_length"], 2500);
  EXPECT_EQ(campaign["max_target"], 400);
  EXPECT_NE(fuzz.err.find("--out is deprecated"), std::string::npos) << fuzz.err;
  EXPECT_NE(fuzz.err.find("use --max-x-length"), std::string::npos) << fuzz.err;
}

TEST_F(CliTest, AnErrorWithAnOldSpellingIsStillOneLine) {
  ExpectInputError({"sandwich", kModelF, kModelG, kDefaultString, "--length", "0"}, "--length");
  ExpectInputError({"sandwich", kModelF, kModelG, kDefaultString}, "--z-length: required");
}

// `search --out DIR` on a missing DIR used to write a file named DIR.
TEST_F(CliTest, SearchOutDirCreatesADirectoryNeverAFileNamedLikeIt) {
  const std::vector<std::string> search = {"search", "--objective", "sim-ratio", "--z-length",
                                           "40",     "--restarts",  "1",         "--iterations",
                                           "2",      "--x-length",  "400"};
  for (const std::string flag : {"--out-dir", "--out"}) {
    SCOPED_TRACE(flag);
    const fs::path dir = Path(flag == "--out" ? "old/witnesses" : "new/witnesses");
    std::vector<std::string> args = search;
    args.insert(args.end(), {flag, dir.string()});
    const Result r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(fs::is_directory(dir)) << r.out;
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      EXPECT_TRUE(e.path().string().ends_with(".search.json")) << e.path();
      ++files;
    }
    EXPECT_EQ(files, 1u);
    if (flag == std::string("--out")) {
      EXPECT_NE(r.err.find("use --out-dir"), std::string::npos) << r.err;
    }
  }
  // `--out FILE.json` is a file.
  std::vector<std::string> args = search;
  args.insert(args.end(), {"--out", Path("w.json").string()});
  ASSERT_EQ(Run(args).exit_code, 0);
  EXPECT_TRUE(fs::is_regular_file(Path("w.json")));
}

// One default seed (1) in every command that draws anything, printed in its context block.
TEST_F(CliTest, EveryCommandDefaultsToSeedOne) {
  const std::vector<std::vector<std::string>> commands = {
      {"sandwich", kModelF, kModelG, "text:0 1 1 2 0 1", "--z-length", "6", "--json"},
      {"statistic", kDefaultString, "--z-length", "2000", "--lipschitz", "1", "--json"},
      {"threshold", kModelF, kModelG, "--eps", "0.1", "--max-length", "3", "--json"},
      {"search", "--restarts", "1", "--iterations", "1", "--x-length", "400", "--z-length", "40",
       "--json"},
      {"sweep", "--parameter", "period", "--values", "1,2", "--pairs", "1", "--strategy", "random",
       "--x-length", "1000", "--json"},
      {"experiment", "paper", "--omegas", "1,2", "--primes", "", "--alphabets", "", "--ks", "",
       "--x-length", "1000", "--json"}};
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0]);
    EXPECT_EQ(RunJson(args)["context"]["seed"], 1);
  }
  const fs::path dir = Path("fuzz");
  ASSERT_EQ(Run({"fuzz", "--cases", "2", "--out-dir", dir.string()}).exit_code, 0);
  EXPECT_EQ(Json::parse(ReadFile(dir / "summary.json"))["context"]["seed"], 1);
}

// `experiment` takes --threads, and the result does not depend on it.
TEST_F(CliTest, ExperimentThreadsNeverChangeTheResult) {
  const std::vector<std::string> base = {
      "experiment", "paper", "--omegas", "1,4",        "--primes", "2,3",   "--alphabets",
      "2",          "--ks",  "1",        "--x-length", "1500",     "--json"};
  std::vector<std::string> one = base, two = base;
  one.insert(one.end(), {"--threads", "1"});
  two.insert(two.end(), {"--threads", "2"});
  const Json a = RunJson(one), b = RunJson(two);
  EXPECT_EQ(a["rows"], b["rows"]);
  EXPECT_EQ(a["trends"], b["trends"]);
  EXPECT_EQ(a["rows"].size(), 6u);
}

// The flags that came with the Lemma 5.3 attack, the pruned threshold, tightness and the lower-
// bound families speak the same vocabulary: a grid of z lengths is --z-lengths, a directory
// --out-dir, and the old spellings keep working with their note.
TEST_F(CliTest, LaterFlagsSpeakTheSameVocabulary) {
  const std::vector<std::string> sweep = {"statistic",    "--sweep", "--methods",  "markov",
                                          "--inputs",     "uniform", "--x-length", "20000",
                                          "--iterations", "5",       "--json"};
  auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const Json now =
      RunJson(with(sweep, {"--z-lengths", "16,160,1600", "--out-dir", Path("new").string()}));
  const Result old = Run(with(sweep, {"--lengths", "16,160,1600", "--out", Path("old").string()}));
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(CountLines(old.err), 2u) << old.err;  // one note per old spelling
  EXPECT_NE(old.err.find("--lengths is deprecated"), std::string::npos) << old.err;
  EXPECT_NE(old.err.find("use --out-dir"), std::string::npos) << old.err;
  EXPECT_EQ(Json::parse(old.out)["series"], now["series"]);
  EXPECT_TRUE(fs::exists(Path("new") / "statistic.json"));
  EXPECT_TRUE(fs::exists(Path("old") / "statistic.json"));
  // An error names the spelling that was typed.
  ExpectInputError(with(sweep, {"--lengths", "16,160"}), "--lengths");
  ExpectInputError(with(sweep, {"--z-lengths", "16,160"}), "--z-lengths");
  ExpectInputError({"constants", kModelF, "--n", "0"}, "--n:");
  ExpectInputError({"constants", kModelF, "--z-length", "0"}, "--z-length:");
  // --threads everywhere it means something, identical results.
  const std::vector<std::string> threshold = {"threshold", kModelF,        kModelG, "--eps",
                                              "0.1",       "--max-length", "12",    "--json"};
  Json t1 = RunJson(with(threshold, {"--threads", "1"}));
  Json t2 = RunJson(with(threshold, {"--threads", "2"}));
  EXPECT_EQ(t1["first_disagreement"], t2["first_disagreement"]);
  EXPECT_EQ(t1["max_gap_per_length"], t2["max_gap_per_length"]);
  // The bits of finite attention are --precision in construct modp-task too.
  const Json bits = RunJson({"construct", "modp-task", "--p", "5", "--k", "0", "--precision", "8",
                             "--out", Path("m8.json").string(), "--json"});
  const Result old_bits = Run({"construct", "modp-task", "--p", "5", "--k", "0", "--precision-bits",
                               "8", "--out", Path("o8.json").string()});
  ASSERT_EQ(old_bits.exit_code, 0) << old_bits.err;
  ExpectDeprecated(old_bits, "--precision-bits", "--precision");
  EXPECT_EQ(ReadFile(Path("m8.json")), ReadFile(Path("o8.json")));
  EXPECT_EQ(Json::parse(ReadFile(Path("m8.json")))["meta"]["precision_bits"], 8);
  // construct family writes into --out-dir and prints JSON with --json.
  const Json family = RunJson({"construct", "family", "bump", "--slope", "8", "--eps", "0.05",
                               "--period", "2", "--out-dir", Path("fam").string(), "--json"});
  EXPECT_TRUE(fs::exists(Path("fam") / "f.json"));
  EXPECT_TRUE(family["first_disagreement"].is_number_integer());
  EXPECT_TRUE(family["certify"].get<std::string>().starts_with("ltsim threshold ")) << family;
}

TEST_F(CliTest, FuzzJsonPrintsTheSummary) {
  const Result r = Run({"fuzz", "--cases", "3", "--out-dir", Path("f").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);  // stdout is the JSON alone (progress is on stderr)
  EXPECT_EQ(doc["cases"], 3);
  EXPECT_EQ(doc["context"]["seed"], 1);
  EXPECT_TRUE(doc["properties"].is_object());
}

}  // namespace
}  // namespace ltsim::cli_test
