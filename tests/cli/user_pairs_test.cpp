// Command-line tests of studies over a user's own pair: `fuzz --pair F G` (cases, resume,
// --case, thread independence, witnesses that replay without the model files) and
// `sweep --pair F G` (the needed length of the pair as given against ε).
#include <set>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

class UserPairTest : public CliTest {
 protected:
  // The bundled pair copied into the test's directory, so a test can delete it afterwards.
  void CopyPair() {
    fs::copy_file(kModelF, Path("f.json"));
    fs::copy_file(kModelG, Path("g.json"));
  }
  std::string F() const { return Path("f.json").string(); }
  std::string G() const { return Path("g.json").string(); }
};

TEST_F(UserPairTest, FuzzPairTestsTheUsersModelsOnEveryCase) {
  CopyPair();
  const fs::path dir = Path("run");
  const Result r = Run({"fuzz", "--pair", F(), G(), "--seed", "2", "--cases", "12",
                        "--max-x-length", "4000", "--threads", "1", "--out-dir", dir.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("seed 2, 12 cases of the pair " + F() + " " + G()), std::string::npos)
      << r.out;
  // Every case is the user's pair: its cell is f's shape and says "user".
  std::istringstream lines(ReadFile(dir / "cases.jsonl"));
  std::size_t cases = 0;
  std::set<std::string> methods;
  for (std::string line; std::getline(lines, line); ++cases) {
    const Json c = Json::parse(line);
    EXPECT_EQ(c["cell"]["pair"], "user");
    EXPECT_EQ(c["cell"]["alphabet"], 3);
    methods.insert(c["method"].get<std::string>());
  }
  EXPECT_EQ(cases, 12u);
  EXPECT_GE(methods.size(), 2u);  // the methods are drawn per case
  // campaign.json holds the models inline and the files they came from.
  const Json campaign = Json::parse(ReadFile(dir / "campaign.json"));
  EXPECT_EQ(campaign["pair"]["f_file"], F());
  EXPECT_EQ(campaign["pair"]["f"]["format"], "ltsim-model");
  // summary.json names the files only.
  const Json summary = Json::parse(ReadFile(dir / "summary.json"));
  EXPECT_EQ(summary["context"]["options"]["pair"]["g_file"], G());
  EXPECT_FALSE(summary["context"]["options"]["pair"].contains("g"));
  // The same files on two threads.
  const fs::path two = Path("two");
  ASSERT_EQ(Run({"fuzz", "--pair", F(), G(), "--seed", "2", "--cases", "12", "--max-x-length",
                 "4000", "--threads", "2", "--out-dir", two.string()})
                .exit_code,
            0);
  for (const char* file : {"cases.jsonl", "summary.json", "campaign.json"})
    EXPECT_EQ(ReadFile(dir / file), ReadFile(two / file)) << file;
  // One case alone, from the flags or from the campaign once the model files are gone.
  const Result by_flags = Run({"fuzz", "--pair", F(), G(), "--seed", "2", "--cases", "12",
                               "--max-x-length", "4000", "--case", "5", "--json"});
  ASSERT_EQ(by_flags.exit_code, 0) << by_flags.err;
  fs::remove(F());
  fs::remove(G());
  const Result by_dir = Run({"fuzz", "--resume", dir.string(), "--case", "5", "--json"});
  ASSERT_EQ(by_dir.exit_code, 0) << by_dir.err;
  EXPECT_EQ(Json::parse(by_dir.out)["properties"], Json::parse(by_flags.out)["properties"]);
}

TEST_F(UserPairTest, AUsersPairsWitnessesReplayWithOneCommandAndNoModelFiles) {
  CopyPair();
  const fs::path dir = Path("broken");
  // The planted broken simulator refutes the frequency rate on the user's pair.
  const Result r = Run({"fuzz", "--pair", F(), G(), "--seed", "3", "--cases", "10", "--methods",
                        "test-drop-suffix", "--max-x-length", "4000", "--out-dir", dir.string()});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  fs::remove(F());
  fs::remove(G());
  int witnesses = 0;
  for (const auto& entry : fs::directory_iterator(dir / "witnesses")) {
    EXPECT_NE(r.out.find("ltsim replay " + entry.path().string()), std::string::npos) << r.out;
    const Result replay = Run({"replay", entry.path().string()});
    EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
    EXPECT_NE(replay.out.find("still refuted"), std::string::npos) << replay.out;
    ++witnesses;
  }
  EXPECT_GT(witnesses, 0);
  // A resumed user-pair campaign reads its models from campaign.json.
  const Result more = Run({"fuzz", "--resume", dir.string()});
  EXPECT_EQ(more.exit_code, 1) << more.out << more.err;  // still refuted, nothing to add
}

TEST_F(UserPairTest, FuzzPairRefusesWhatDoesNotApply) {
  const std::string two_tokens = kSource + "/corpus/models/kgram_S2_k1.json";
  ExpectInputError({"fuzz", "--pair", kModelF, two_tokens, "--out-dir", Path("a").string()},
                   kModelF + " has alphabet 3 and " + two_tokens + " has alphabet 2");
  ExpectInputError(
      {"fuzz", "--pair", kModelF, kModelG, "--layers", "2", "--out-dir", Path("b").string()},
      "--pair: the models are given, so --layers, --modes and --pairs do not apply");
  ExpectInputError({"fuzz", "--pair", kModelF, "--out-dir", Path("c").string()}, "--pair");
  ExpectInputError(
      {"fuzz", "--pair", kModelF, Path("missing.json").string(), "--out-dir", Path("d").string()},
      "missing.json");
}

TEST_F(UserPairTest, SweepPairMeasuresThePairAsGivenAgainstEps) {
  CopyPair();
  const fs::path dir = Path("sweep");
  const Result r =
      Run({"sweep", "--pair", F(), G(), "--parameter", "eps", "--values", "0.05,0.1,0.2", "--pairs",
           "2", "--x-length", "3000", "--out-dir", dir.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["options"]["pair"]["f_file"], F());
  EXPECT_EQ(doc["options"]["method"], "random");
  EXPECT_NE(doc["method"].get<std::string>().find("as given, on K = 2 inputs"), std::string::npos);
  ASSERT_EQ(doc["points"].size(), 3u);
  // The pair's own constants at every point and input (nothing was drawn or moved), and the
  // same x at every point, so the needed length cannot grow as ε grows.
  const Json& first = doc["points"][0]["pairs"][0];
  for (std::size_t k = 0; k < 2; ++k) {
    std::uint64_t previous = UINT64_MAX;
    for (const Json& point : doc["points"]) {
      const Json& pair = point["pairs"][k];
      EXPECT_EQ(pair["L"], first["L"]);
      EXPECT_EQ(pair["seed"], doc["points"][0]["pairs"][k]["seed"]);
      const auto needed = pair["needed_length"].get<std::uint64_t>();
      EXPECT_LE(needed, previous) << point["value"];
      previous = needed;
    }
  }
  // Each point witness replays with the models inline, once the model files are gone.
  fs::remove(F());
  fs::remove(G());
  const std::string witness =
      (dir / doc["points"][1]["pairs"][0]["witness_file"].get<std::string>()).string();
  const Result replay = Run({"replay", witness});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
}

TEST_F(UserPairTest, SweepPairRefusesWhatWouldChangeThePair) {
  ExpectInputError(
      {"sweep", "--pair", kModelF, kModelG, "--parameter", "period", "--values", "1,2"},
      "only eps can be swept");
  ExpectInputError({"sweep", "--pair", kModelF, kModelG, "--parameter", "eps", "--values",
                    "0.1,0.2", "--strategy", "search"},
                   "--strategy search: a user's pair is measured as given");
  const std::string two_layer = kSource + "/corpus/models/kgram_S2_k1.json";
  ExpectInputError(
      {"sweep", "--pair", two_layer, two_layer, "--parameter", "eps", "--values", "0.1,0.2"},
      "needs one-layer models");
}

}  // namespace
}  // namespace ltsim::cli_test
