// Command-line tests of `ltsim replay`: both witness kinds, one exit convention (0 = the
// recorded result reproduced, 1 = it did not, 2 = bad input).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

const std::string kWitnesses = kSource + "/corpus/witnesses";

TEST_F(CliTest, ReplayReproducesEveryCorpusWitnessOfBothKinds) {
  std::size_t fuzz = 0, search = 0;
  for (const auto& e : fs::directory_iterator(kWitnesses)) {
    const std::string path = e.path().string();
    if (!path.ends_with(".json")) continue;
    SCOPED_TRACE(path);
    const Result r = Run({"replay", path});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("reproduced"), std::string::npos) << r.out;
    const Json doc = RunJson({"replay", path, "--json"});
    EXPECT_EQ(doc["reproduced"], true);
    (path.ends_with(".search.json") ? search : fuzz) += 1;
  }
  EXPECT_GE(fuzz, 1u);
  EXPECT_GE(search, 1u);
}

TEST_F(CliTest, ReplayThatDoesNotReproduceExitsOne) {
  // A search witness whose stored value was changed.
  for (const auto& e : fs::directory_iterator(kWitnesses)) {
    const std::string path = e.path().string();
    if (!path.ends_with(".search.json")) continue;
    Json w = Json::parse(ReadFile(path));
    w["value"] = w["value"].get<double>() + 1.0;
    const std::string tampered = Temp("tampered.search.json", w.dump());
    const Result r = Run({"replay", tampered});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("DIFFERS"), std::string::npos) << r.out;
    break;
  }
  // A fuzz witness of the planted broken method, replayed with a sound method instead: the
  // property now holds, so the recorded refutation does not reproduce.
  const fs::path dir = Path("broken");
  ASSERT_EQ(Run({"fuzz", "--seed", "3", "--cases", "40", "--methods", "test-drop-suffix",
                 "--layers", "1", "--out-dir", dir.string()})
                .exit_code,
            1);
  const fs::path first = fs::directory_iterator(dir / "witnesses")->path();
  Json w = Json::parse(ReadFile(first));
  ASSERT_TRUE(w["case_spec"].contains("method")) << w;
  w["case_spec"]["method"] = "frequency";
  const std::string sound = Temp("sound.witness.json", w.dump(1));
  const Result r = Run({"replay", sound});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("no longer refuted"), std::string::npos) << r.out;
}

TEST_F(CliTest, ReplayBadInputExitsTwo) {
  ExpectInputError({"replay", Path("missing.json").string()}, "missing.json");
  ExpectInputError({"replay", Temp("x.json", "{\"format\": \"ltsim-witnes\"}")},
                   "did you mean 'ltsim-witness'?");
  ExpectInputError({"replay", Temp("y.json", "[1, 2")}, "y.json");
  // The old `search --replay` still works, with a note pointing to `ltsim replay`.
  for (const auto& e : fs::directory_iterator(kWitnesses)) {
    if (!e.path().string().ends_with(".search.json")) continue;
    const Result r = Run({"search", "--replay", e.path().string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("use ltsim replay FILE"), std::string::npos) << r.err;
    break;
  }
}

// `ltsim refute --out-dir DIR` writes DIR/refute.json: `ltsim replay` re-derives it (0), and a
// recorded verdict that the files no longer give is 1.
TEST_F(CliTest, ReplayReproducesARefuteResult) {
  const std::string out = Path("refute").string();
  const Result r = Run({"refute", "--bound",    "1",  "--eps",        "0.05", "--max-lipschitz",
                        "4",      "--alphabet", "2",  "--period",     "1",    "--locality",
                        "0",      "--width",    "6",  "--heads",      "2",    "--mlp-width",
                        "1",      "--budget",   "40", "--iterations", "9",    "--max-length",
                        "300",    "--seed",     "3",  "--out-dir",    out});
  ASSERT_EQ(r.exit_code, 1) << r.err;  // refuted
  const std::string file = out + "/refute.json";
  const Result replay = Run({"replay", file});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos) << replay.out;
  const Json doc = RunJson({"replay", file, "--json"});
  EXPECT_EQ(doc["reproduced"], true);
  Json changed = Json::parse(ReadFile(file));
  changed["refuted"] = false;
  WriteFile(file, changed.dump(2));
  EXPECT_EQ(Run({"replay", file}).exit_code, 1);
}

}  // namespace
}  // namespace ltsim::cli_test
