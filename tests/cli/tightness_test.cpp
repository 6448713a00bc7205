// Command-line tests of `ltsim tightness` (ltsim/study/tightness.h) and the replay of its
// point witnesses.
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

// The keys every row of `tightness --json` carries (docs/tightness.md), each side with
// `points` points that name their witness file relative to `out` (the --out-dir).
void ExpectRowShape(const Json& row, std::size_t points, const std::string& out) {
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
      EXPECT_TRUE(fs::exists(fs::path(out) / p["witness"].get<std::string>()));
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
    ExpectRowShape(row, 3, out);
    for (const char* side : {"lower", "upper"})
      for (const Json& p : row[side]["points"]) EXPECT_TRUE(p.contains("value"));
  }
  EXPECT_EQ(doc["rows"][0]["parameter"], "eps");
  EXPECT_EQ(doc["rows"][0]["paper"], 2.0);
  EXPECT_NEAR(doc["rows"][1]["paper"].get<double>(), 4 * std::log(2.0), 1e-12);  // p ln 2
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
  const std::string witness =
      (fs::path(out) / doc["rows"][0]["lower"]["points"][1]["witness"].get<std::string>()).string();
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
    ExpectRowShape(row, 3, out);
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
  const Result replay =
      Run({"replay",
           (fs::path(out) / doc["rows"][0]["lower"]["points"][2]["witness"].get<std::string>())
               .string()});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos) << replay.out;
}

// Theorem 5.2: the k and positional-margin rows carry the same keys as the 4.1 and 5.3 rows;
// the upper side has no points (no certified two-layer length) and says why; every lower point
// names a witness that replays; the k row's simulator points carry their samples.
TEST_F(CliTest, Tightness52RowsCarryTheRowShapeAndReplay) {
  const std::string out = Path("tight52").string();
  const Json doc = RunJson({"tightness", "--theorem", "5.2", "--points", "3", "--seeds", "2",
                            "--out-dir", out, "--json"});
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const Json& row : doc["rows"]) {
    for (const char* key : {"parameter", "lower", "upper", "paper", "class", "verdict", "reason"})
      EXPECT_TRUE(row.contains(key)) << key;
    EXPECT_EQ(row["theorem"], "5.2");
    EXPECT_EQ(row["verdict"], "inconclusive") << row["reason"];
    EXPECT_TRUE(row["paper"].is_number());
    EXPECT_TRUE(row["upper"]["exponent"].is_null());
    EXPECT_TRUE(row["upper"]["ci"].is_null());
    EXPECT_TRUE(row["upper"]["points"].empty());
    EXPECT_NE(row["upper"]["reason"].get<std::string>().find("no certified two-layer"),
              std::string::npos);
    ASSERT_EQ(row["lower"]["points"].size(), 3u);
    for (const Json& p : row["lower"]["points"]) {
      EXPECT_TRUE(p["value"].is_number());
      EXPECT_TRUE(p["length"].is_number());
      EXPECT_TRUE(p["censored"].is_boolean());
      EXPECT_TRUE(fs::exists(fs::path(out) / p["witness"].get<std::string>()));
    }
  }
  const Json& k = doc["rows"][0];
  EXPECT_EQ(k["parameter"], "k");
  for (const Json& p : k["lower"]["points"]) {
    EXPECT_TRUE(p["censored"].get<bool>());  // two layers: exhaustive only up to T = 15
    EXPECT_EQ(p["length"], 15);
  }
  EXPECT_TRUE(k["lower"]["ci"].is_null());
  ASSERT_EQ(k["simulator"]["points"].size(), 3u);
  for (const Json& p : k["simulator"]["points"]) EXPECT_EQ(p["members"].size(), 2u);
  const Json& margin = doc["rows"][1];
  EXPECT_EQ(margin["parameter"], "positional-margin");
  for (const Json& p : margin["lower"]["points"]) EXPECT_FALSE(p["censored"].get<bool>());
  ASSERT_TRUE(margin["lower"]["ci"].is_array());
  EXPECT_LT(margin["lower"]["ci"][1].get<double>(), margin["paper"].get<double>());
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
  for (const Json* row : {&k, &margin}) {
    const Result replay = Run(
        {"replay",
         (fs::path(out) / (*row)["lower"]["points"][2]["witness"].get<std::string>()).string()});
    EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  }
}

// `--joint --json`: the `joint` object (docs/tightness.md §3) beside the unchanged rows, and
// the simulator check's adaptive |x| (`steps`, `stop`) on every point.
TEST_F(CliTest, TightnessJointJsonShape) {
  const Json doc = RunJson({"tightness", "--parameters", "eps,scale,margin", "--points", "3",
                            "--seeds", "2", "--joint", "--json", "--max-x-length", "40000"});
  ASSERT_EQ(doc["rows"].size(), 3u);
  EXPECT_EQ(doc["options"]["joint"], true);
  for (const Json& row : doc["rows"])
    for (const Json& p : row["simulator"]["points"]) {
      for (const char* key : {"needed", "x_length", "reached", "x", "steps", "stop"})
        EXPECT_TRUE(p.contains(key)) << key;
      const std::string stop = p["stop"];
      EXPECT_TRUE(stop == "stopped growing" || stop == "upper side" || stop == "cap") << stop;
      ASSERT_GE(p["steps"].size(), 1u);
      EXPECT_LE(p["steps"].back()["x_length"].get<std::uint64_t>(), 40000u);
      EXPECT_EQ(p["needed"], p["steps"].back()["needed"]);
    }
  ASSERT_TRUE(doc.contains("joint"));
  const Json& j = doc["joint"];
  EXPECT_EQ(j["parameters"], Json::array({"1/eps", "L"}));
  EXPECT_EQ(j["rows"], Json::array({"eps", "scale"}));
  ASSERT_EQ(j["left_out"].size(), 1u);
  EXPECT_NE(j["left_out"][0].get<std::string>().find("margin"), std::string::npos);
  ASSERT_EQ(j["exponents"].size(), 2u);
  for (const Json& e : j["exponents"]) {
    EXPECT_TRUE(e["parameter"].is_string());
    EXPECT_TRUE(e["exponent"].is_number());
    ASSERT_TRUE(e["ci"].is_array());
    EXPECT_EQ(e["ci"].size(), 2u);
    EXPECT_LE(e["ci"][0].get<double>(), e["exponent"].get<double>());
  }
  EXPECT_EQ(j["points"].size(), 12u);  // 2 rows × 3 points × 2 members
  for (const Json& p : j["points"]) {
    EXPECT_TRUE(p["length"].is_number());
    EXPECT_TRUE(p["censored"].is_boolean());
    EXPECT_TRUE(p["regressors"].contains("1/eps"));
    EXPECT_TRUE(p["regressors"].contains("L"));
  }
  EXPECT_EQ(j["reason"], "");
  // Without --joint there is no `joint` key; the table prints the joint fit after the rows.
  const Json plain = RunJson({"tightness", "--parameters", "eps", "--points", "3", "--seeds", "1",
                              "--no-validate", "--json"});
  EXPECT_FALSE(plain.contains("joint"));
  const Result table = Run({"tightness", "--parameters", "eps,scale", "--points", "3", "--seeds",
                            "1", "--no-validate", "--joint"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("joint fit"), std::string::npos) << table.out;
}

TEST_F(CliTest, TightnessBadInput) {
  ExpectInputError({"tightness", "--parameters", "eps,nope"}, "--parameters");
  ExpectInputError({"tightness", "--theorem", "9.9"}, "--theorem");
  ExpectInputError({"tightness", "--theorem", "5.2", "--parameters", "eps"}, "--parameters");
  ExpectInputError({"tightness", "--theorem", "5.2", "--parameters", "n"}, "--parameters");
  ExpectInputError({"tightness", "--parameters", "positional-margin"}, "--parameters");
  ExpectInputError({"tightness", "--theorem", "5.2", "--methods", "markov"}, "--methods");
  ExpectInputError({"tightness", "--theorem", "5.3", "--parameters", "eps"}, "--parameters");
  ExpectInputError({"tightness", "--theorem", "5.3", "--methods", "markov,nope"}, "--methods");
  ExpectInputError({"tightness", "--theorem", "5.3", "--x-length", "100"}, "--x-length");
  ExpectInputError({"tightness", "--methods", "markov"}, "--methods");
  ExpectInputError({"tightness", "--theorem", "5.3", "--joint"}, "--joint");
  ExpectInputError({"replay", Temp("bad.json", "{}")}, "bad.json");
  ExpectInputError({"tightness", "--replay", Temp("bad.json", "{}")}, "bad.json");
}

// tightness.json and every witness are the same bytes for any --threads and any --out-dir: no
// thread count and no directory in them (witnesses are named relative to the directory).
TEST_F(CliTest, TightnessOutputsAreTheSameBytesForAnyThreadsAndDirectory) {
  const fs::path a = Path("a"), b = Path("b") / "nested";
  for (const auto& [out, threads] : {std::pair{a, "1"}, std::pair{b, "2"}}) {
    const Result r =
        Run({"tightness", "--parameters", "eps", "--points", "3", "--seeds", "2", "--no-validate",
             "--threads", threads, "--out-dir", out.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto bytes = [](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(a)) {
    if (entry.is_directory()) continue;
    const fs::path name = fs::relative(entry.path(), a);
    EXPECT_EQ(bytes(entry.path()), bytes(b / name)) << name;
    ++files;
  }
  EXPECT_GE(files, 8u);  // tightness.json, .csv, the marker and a point witness per member
  const Json doc = Json::parse(bytes(a / "tightness.json"));
  EXPECT_FALSE(doc["options"].contains("threads"));
  EXPECT_FALSE(doc["options"].contains("out"));
  EXPECT_EQ(doc.dump().find(a.string()), std::string::npos);
}

}  // namespace
}  // namespace ltsim::cli_test
