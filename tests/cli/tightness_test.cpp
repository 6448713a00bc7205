// Command-line tests of `ltsim tightness` (ltsim/study/tightness.h) and the replay of its
// point witnesses.
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

// The keys every row of `tightness --json` carries (docs/tightness.md), each side with
// `points` points that name their witness file (the runs below give --out-dir).
void ExpectRowShape(const Json& row, std::size_t points) {
  for (const char* key : {"parameter", "lower", "upper", "paper", "class", "verdict", "reason"})
    EXPECT_TRUE(row.contains(key)) << key;
  const std::string verdict = row["verdict"];
  EXPECT_TRUE(verdict == "tight" || verdict == "gap" || verdict == "contradicts" ||
              verdict == "inconclusive");
  for (const char* side : {"lower", "upper"}) {
    EXPECT_TRUE(row[side].contains("exponent"));
    EXPECT_TRUE(row[side]["ci"].is_null() || row[side]["ci"].size() == 2u);
    ASSERT_EQ(row[side]["points"].size(), points);
    for (const Json& p : row[side]["points"]) {
      EXPECT_TRUE(p["censored"].is_boolean());
      EXPECT_TRUE(p["length"].is_number());
      EXPECT_TRUE(fs::exists(p["witness"].get<std::string>()));
    }
  }
}

TEST_F(CliTest, TightnessJsonRowsCarryBothSidesAndReplay) {
  const std::string out = Path("tight").string();
  const Json doc = RunJson({"tightness", "--parameters", "eps,margin", "--points", "3", "--seeds",
                            "2", "--no-validate", "--out-dir", out, "--json", "--seed", "3"});
  EXPECT_EQ(doc["context"]["command"], "tightness");
  EXPECT_EQ(doc["context"]["seed"], 3);
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const Json& row : doc["rows"]) {
    ExpectRowShape(row, 3);
    for (const char* side : {"lower", "upper"})
      for (const Json& p : row[side]["points"]) EXPECT_TRUE(p.contains("value"));
  }
  EXPECT_EQ(doc["rows"][0]["parameter"], "eps");
  EXPECT_EQ(doc["rows"][0]["paper"], 2.0);
  EXPECT_NEAR(doc["rows"][1]["paper"].get<double>(), 4 * std::log(2.0), 1e-12);  // p ln 2
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
  const std::string witness = doc["rows"][0]["lower"]["points"][1]["witness"];
  // One replay for every witness kind: 0 = the recorded result reproduced.
  const Result replay = Run({"replay", witness});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos) << replay.out;
  // The old spelling still works, with one deprecation line on stderr.
  const Result old = Run({"tightness", "--replay", witness});
  EXPECT_EQ(old.exit_code, 0) << old.out << old.err;
  EXPECT_NE(old.out.find("reproduced"), std::string::npos) << old.out;
  EXPECT_NE(old.err.find("deprecated"), std::string::npos) << old.err;
  EXPECT_EQ(CountLines(old.err), 1u) << old.err;
}

TEST_F(CliTest, TightnessOldOutSpellingIsADirectory) {
  const std::string out = Path("tight_old").string();
  const Result r = Run({"tightness", "--parameters", "eps", "--points", "3", "--seeds", "1",
                        "--no-validate", "--out", out, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--out-dir"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
}

TEST_F(CliTest, TightnessLemma53RowsPerSchemeAndReplay) {
  const std::string out = Path("tight53").string();
  const Json doc = RunJson({"tightness", "--theorem", "5.3", "--parameters", "n", "--points", "3",
                            "--seeds", "1", "--methods", "markov,uniform", "--x-length", "20000",
                            "--out-dir", out, "--json"});
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const Json& row : doc["rows"]) {
    ExpectRowShape(row, 3);
    EXPECT_EQ(row["parameter"], "n");
    for (const char* side : {"lower", "upper"})
      for (const Json& p : row[side]["points"]) EXPECT_EQ(p["error"], p["length"]);
    EXPECT_TRUE(
        fs::exists(fs::path(out) / ("tightness_" + row["name"].get<std::string>() + ".png")) ||
        !fs::exists(fs::path(out) / "tightness.png"));  // figures need matplotlib
  }
  EXPECT_EQ(doc["rows"][0]["scheme"], "markov");
  EXPECT_NEAR(doc["rows"][0]["paper"].get<double>(), -1.0 / 3, 1e-15);
  EXPECT_TRUE(doc["rows"][1]["paper"].is_null());
  EXPECT_NE(doc["rows"][1]["reason"].get<std::string>().find("markov"), std::string::npos);
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
  const Result replay = Run({"replay", doc["rows"][0]["lower"]["points"][2]["witness"]});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos) << replay.out;
}

TEST_F(CliTest, TightnessBadInput) {
  ExpectInputError({"tightness", "--parameters", "eps,nope"}, "--parameters");
  ExpectInputError({"tightness", "--theorem", "9.9"}, "--theorem");
  ExpectInputError({"tightness", "--theorem", "5.2"}, "--theorem");
  ExpectInputError({"tightness", "--theorem", "5.3", "--parameters", "eps"}, "--parameters");
  ExpectInputError({"tightness", "--theorem", "5.3", "--methods", "markov,nope"}, "--methods");
  ExpectInputError({"tightness", "--theorem", "5.3", "--x-length", "100"}, "--x-length");
  ExpectInputError({"tightness", "--methods", "markov"}, "--methods");
  ExpectInputError({"replay", Temp("bad.json", "{}")}, "bad.json");
  ExpectInputError({"tightness", "--replay", Temp("bad.json", "{}")}, "bad.json");
}

}  // namespace
}  // namespace ltsim::cli_test
