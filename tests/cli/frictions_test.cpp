// Command-line tests of the small frictions a new user meets first: mistyped flags named as
// typed, mismatched pairs named by file, `ltsim` alone, `--out -`, the threads and seeds that
// JSON outputs report.
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

const std::string kBump = kSource + "/corpus/families/bump_s2.71_period2/";
const std::string kTwoTokenModel = kSource + "/corpus/models/kgram_S2_k1.json";

TEST_F(CliTest, AMistypedFlagIsNamedAsTypedWithTheFlagItMeant) {
  // A swapped pair of letters, an abbreviation, a longer spelling: each named, each suggested,
  // instead of "--max-length is required" for a flag that was typed.
  ExpectInputError({"threshold", kModelF, kModelG, "--eps", "0.1", "--max-lenght", "10"},
                   "threshold: unknown flag '--max-lenght' (did you mean '--max-length'?) "
                   "(see ltsim threshold --help)");
  ExpectInputError({"threshold", kModelF, kModelG, "--eps", "0.1", "--max-len", "5"},
                   "threshold: unknown flag '--max-len' (did you mean '--max-length'?)");
  ExpectInputError({"threshold", kModelF, kModelG, "--epsilon", "0.1", "--max-length", "5"},
                   "threshold: unknown flag '--epsilon' (did you mean '--eps'?)");
  // With every required flag given, the unknown one is still what the line names.
  ExpectInputError(
      {"threshold", kModelF, kModelG, "--eps", "0.1", "--max-length", "5", "--max-len", "5"},
      "unknown flag '--max-len' (did you mean '--max-length'?)");
  // An abbreviation of two flags is not guessed at.
  const Result r = Run({"fuzz", "--max", "10", "--out-dir", Path("c").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown flag '--max'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

TEST_F(CliTest, APairOfDifferentAlphabetsNamesBothFiles) {
  // f reads 3 tokens, the k-gram model 2.
  const std::string both = kModelF + " has alphabet 3 and " + kTwoTokenModel + " has alphabet 2";
  ExpectInputError({"threshold", kModelF, kTwoTokenModel, "--eps", "0.1", "--max-length", "5"},
                   both);
  ExpectInputError({"certify", kModelF, kTwoTokenModel, "--eps", "0.1"}, both);
  ExpectInputError({"constants", kModelF, kTwoTokenModel, "--eps", "0.1", "--z-length", "100"},
                   both);
  ExpectInputError({"simulate", "--model", kModelF, "--model", kTwoTokenModel, kDefaultString,
                    "--z-length", "100", "--out", Path("z.txt").string()},
                   both);
  ExpectInputError({"sandwich", kModelF, kTwoTokenModel, kDefaultString, "--z-length", "100"},
                   both);
}

TEST_F(CliTest, LtsimAloneListsTheCommandsOnStderrWithExitCode2) {
  const Result r = Run({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  for (const char* command : {"Subcommands:", "eval", "threshold", "fuzz", "help"})
    EXPECT_NE(r.err.find(command), std::string::npos) << command << " not in: " << r.err;
  EXPECT_NE(r.err.find("ltsim: give a command (`ltsim help CMD` explains one)\n"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, SimulateAndGenerateWriteToStdoutForOutDash) {
  const std::vector<std::string> simulate = {"simulate",     "--model",    kModelF,
                                             kDefaultString, "--z-length", "300"};
  std::vector<std::string> to_file = simulate, to_stdout = simulate;
  to_file.insert(to_file.end(), {"--out", Path("z.txt").string()});
  to_stdout.insert(to_stdout.end(), {"--out", "-"});
  const Result file = Run(to_file);
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const Result dash = Run(to_stdout);
  ASSERT_EQ(dash.exit_code, 0) << dash.err;
  // z on stdout, the same bytes as the file; the summary on stderr; no file named "-".
  EXPECT_EQ(dash.out, ReadFile(Path("z.txt")));
  EXPECT_TRUE(dash.out.starts_with("# ltsim string, length ")) << dash.out;
  EXPECT_NE(dash.err.find("z  stdout  (|z| = "), std::string::npos) << dash.err;
  EXPECT_FALSE(fs::exists(fs::current_path() / "-"));
  // --json: the summary document on stderr, z alone on stdout.
  to_stdout.push_back("--json");
  const Result json = Run(to_stdout);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, dash.out);
  EXPECT_EQ(Json::parse(json.err)["out"], "-");
  // generate: the string as text on stdout.
  const Result generated = Run({"generate", "text:0^5 1 2", "--out", "-"});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_EQ(generated.out, "# ltsim string, length 7\n0^5 1 2\n");
  EXPECT_NE(generated.err.find("wrote - (7 tokens)"), std::string::npos) << generated.err;
}

TEST_F(CliTest, ThresholdJsonReportsTheThreadsItUsed) {
  for (const char* threads : {"1", "2"}) {
    const Json doc = RunJson({"threshold", kBump + "f.json", kBump + "g.json", "--eps", "0.05",
                              "--max-length", "40", "--threads", threads, "--json"});
    EXPECT_EQ(doc["context"]["threads"], std::stoi(threads));
    EXPECT_EQ(doc["threads"], std::stoi(threads));
    EXPECT_EQ(doc["first_disagreement"], 38);
  }
}

// average and profile record the threads they used; the study documents that are the same
// bytes for any --threads record none (docs/formats.md: context).
TEST_F(CliTest, StudyJsonRecordsTheThreadsUsedOrIsTheSameForAny) {
  for (const char* threads : {"1", "2"}) {
    const Json average = RunJson({"average", kBump + "f.json", kBump + "g.json", "--alpha", "1",
                                  "--max-length", "6", "--threads", threads, "--json", "--quiet"});
    EXPECT_EQ(average["context"]["threads"], std::stoi(threads));
    EXPECT_EQ(average["threads"], std::stoi(threads));
    const Json profile = RunJson({"profile", kBump + "f.json", kBump + "g.json", "--train-length",
                                  "8", "--max-length", "40", "--threads", threads, "--json"});
    EXPECT_EQ(profile["context"]["threads"], std::stoi(threads));
  }
  const std::vector<std::vector<std::string>> studies = {
      {"tightness", "--parameters", "eps", "--points", "3", "--seeds", "1", "--heads", "1",
       "--no-validate"},
      {"sweep", "--parameter", "period", "--values", "1,2,3", "--pairs", "2", "--x-length", "1500",
       "--z-length", "100"},
      {"experiment", "paper", "--omegas", "1,8", "--primes", "2,7", "--alphabets", "2", "--ks", "1",
       "--x-length", "2000"},
      {"statistic", "--sweep", "--z-lengths", "16,64,256", "--methods", "markov", "--inputs",
       "uniform", "--x-length", "2000", "--iterations", "5"}};
  for (const std::vector<std::string>& study : studies) {
    std::vector<std::string> one = study, two = study;
    one.insert(one.end(), {"--threads", "1", "--json"});
    two.insert(two.end(), {"--threads", "2", "--json"});
    const Result a = Run(one), b = Run(two);
    ASSERT_EQ(a.exit_code, 0) << study[0] << a.err;
    ASSERT_EQ(b.exit_code, 0) << study[0] << b.err;
    EXPECT_EQ(a.out, b.out) << study[0];
    const Json doc = Json::parse(a.out);
    EXPECT_FALSE(doc["context"].contains("threads")) << study[0] << doc["context"];
    EXPECT_EQ(doc["context"]["seed"], 1) << study[0];
  }
}

TEST_F(CliTest, EvalReportsTheSeedItsIidStringUsed) {
  // No randomness asked for: the master seed (default 1) is still the one printed, and an iid
  // spec without seed= takes it.
  const Json plain = RunJson({"eval", kModelF, kDefaultString, "--json"});
  EXPECT_EQ(plain["context"]["seed"], 1);
  const Json by_default = RunJson({"eval", kModelF, "iid:length=1000,alphabet=3", "--json"});
  const Json explicit1 = RunJson({"eval", kModelF, "iid:length=1000,alphabet=3,seed=1", "--json"});
  EXPECT_EQ(by_default["context"]["seed"], 1);
  EXPECT_EQ(by_default["x"], "iid:length=1000,alphabet=3,seed=1");
  EXPECT_EQ(by_default["output"], explicit1["output"]);
  const Json seven =
      RunJson({"eval", kModelF, "iid:length=1000,alphabet=3", "--seed", "7", "--json"});
  const Json explicit7 = RunJson({"eval", kModelF, "iid:length=1000,alphabet=3,seed=7", "--json"});
  EXPECT_EQ(seven["context"]["seed"], 7);
  EXPECT_EQ(seven["x"], "iid:length=1000,alphabet=3,seed=7");
  EXPECT_EQ(seven["output"], explicit7["output"]);
  EXPECT_NE(seven["output"], by_default["output"]);
  // A seed= in the spec wins over --seed.
  const Json spec_wins =
      RunJson({"eval", kModelF, "iid:length=1000,alphabet=3,seed=1", "--seed", "7", "--json"});
  EXPECT_EQ(spec_wins["output"], explicit1["output"]);
  // The text line names the string it drew.
  const Result text = Run({"eval", kModelF, "iid:length=1000,alphabet=3", "--seed", "7"});
  EXPECT_NE(text.out.find("x = iid:length=1000,alphabet=3,seed=7"), std::string::npos) << text.out;
}

TEST_F(CliTest, IidStringsWithoutSeedTakeTheCommandsMasterSeed) {
  const Result generated =
      Run({"generate", "iid:length=50,alphabet=3", "--seed", "4", "--out", Path("a.txt").string()});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_NE(generated.out.find("from iid:length=50,alphabet=3,seed=4"), std::string::npos)
      << generated.out;
  ASSERT_EQ(Run({"generate", "iid:length=50,alphabet=3,seed=4", "--out", Path("b.txt").string()})
                .exit_code,
            0);
  EXPECT_EQ(ReadFile(Path("a.txt")), ReadFile(Path("b.txt")));
  // sandwich prints x with the seed it took (its own --seed).
  const Result sandwich = Run({"sandwich", kModelF, kModelG, "iid:length=5000,alphabet=3",
                               "--z-length", "300", "--seed", "3"});
  ASSERT_EQ(sandwich.exit_code, 0) << sandwich.err;
  EXPECT_NE(sandwich.out.find("iid:length=5000,alphabet=3,seed=3"), std::string::npos)
      << sandwich.out;
}

}  // namespace
}  // namespace ltsim::cli_test
