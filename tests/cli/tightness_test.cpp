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

// The locality row names its witnesses relative to DIR, like the n rows (a path through the
// staging directory would name nothing once the set is committed), and an attack file's replay
// reminder names no directory: the outputs are the same bytes wherever they are written.
TEST_F(CliTest, TightnessLemma53LocalityWitnessesAreRelativeToTheOutputDirectory) {
  const std::string out = Path("tight53tau").string();
  const Json doc = RunJson({"tightness", "--theorem", "5.3", "--parameters", "locality",
                            "--methods", "markov", "--points", "3", "--seeds", "1", "--x-length",
                            "20000", "--max-z-length", "2000", "--out-dir", out, "--json"});
  ASSERT_EQ(doc["rows"].size(), 1u);
  int witnesses = 0;
  for (const char* side : {"lower", "upper"})
    for (const Json& p : doc["rows"][0][side]["points"])
      for (const Json& m : p["members"]) {
        if (!m.contains("witness")) continue;
        const std::string w = m["witness"].get<std::string>();
        ++witnesses;
        EXPECT_EQ(w.find("ltsim-stage"), std::string::npos) << w;
        ASSERT_TRUE(fs::exists(fs::path(out) / w)) << w;
        EXPECT_EQ(Json::parse(ReadFile(fs::path(out) / w))["replay"], "ltsim replay THIS_FILE");
      }
  EXPECT_GE(witnesses, 3);  // at least the lower side's, one a point (3 points, 1 seed)
}

// Theorem 5.2: the eps, attention-norm, positional-margin and k rows carry the same keys as the
// 4.1 and 5.3 rows; the upper side is the registry's two-layer-length (one certified number a
// member, an exact fit); the lower side is censored at T_ex = 15 where the pairs agree, and the
// reason says it is not yet certified beyond; every lower point names a witness that replays.
TEST_F(CliTest, Tightness52RowsCarryTheRowShapeAndReplay) {
  const std::string out = Path("tight52").string();
  const Json doc = RunJson({"tightness", "--theorem", "5.2", "--points", "3", "--seeds", "1",
                            "--out-dir", out, "--json"});
  ASSERT_EQ(doc["rows"].size(), 4u);
  const char* names[] = {"eps", "attention-norm", "positional-margin", "k"};
  for (std::size_t r = 0; r < 4; ++r) {
    const Json& row = doc["rows"][r];
    EXPECT_EQ(row["parameter"], names[r]);
    for (const char* key : {"parameter", "lower", "upper", "paper", "class", "verdict", "reason"})
      EXPECT_TRUE(row.contains(key)) << key;
    EXPECT_EQ(row["theorem"], "5.2");
    EXPECT_EQ(row["verdict"], "inconclusive") << row["reason"];
    EXPECT_TRUE(row["paper"].is_number());
    ASSERT_EQ(row["upper"]["points"].size(), 3u) << names[r];
    EXPECT_TRUE(row["upper"]["exponent"].is_number());
    for (const Json& p : row["upper"]["points"]) {
      EXPECT_FALSE(p["censored"].get<bool>());
      EXPECT_GT(p["length"].get<double>(), 15);
    }
    ASSERT_EQ(row["lower"]["points"].size(), 3u);
    for (const Json& p : row["lower"]["points"]) {
      EXPECT_TRUE(p["value"].is_number());
      EXPECT_TRUE(p["censored"].is_boolean());
      if (p["censored"].get<bool>()) {
        EXPECT_EQ(p["length"], 15);
      }
      EXPECT_TRUE(fs::exists(fs::path(out) / p["witness"].get<std::string>()));
    }
    const std::string reason = row["reason"];
    EXPECT_NE(reason.find("upper side (certified"), std::string::npos) << reason;
    if (r > 0) {
      EXPECT_NE(reason.find("not yet certified beyond T = 15"), std::string::npos) << reason;
    }
  }
  const Json& k = doc["rows"][3];
  EXPECT_TRUE(k["lower"]["ci"].is_null());
  ASSERT_EQ(k["simulator"]["points"].size(), 3u);
  for (const Json& p : k["simulator"]["points"]) EXPECT_EQ(p["members"].size(), 1u);
  // The construction's certified length lies below the paper's in k (docs/tightness.md §5).
  EXPECT_LT(k["upper"]["exponent"].get<double>(), k["paper"].get<double>());
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
  for (std::size_t r : {std::size_t{2}, std::size_t{3}}) {
    const Result replay =
        Run({"replay",
             (fs::path(out) / doc["rows"][r]["lower"]["points"][2]["witness"].get<std::string>())
                 .string()});
    EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  }
}

// Theorem 4.2 (docs/tightness.md §8): the eps rows of one alpha0 in both limit forms, no upper
// side, the paper's 2 + 2/alpha0, the later gap against eps beside the paper's 1/2, and each
// member's files: the models recompute the JSON's T* with `ltsim average`.
TEST_F(CliTest, Tightness42RowsCarryTheAverageCaseAndRecompute) {
  const std::string out = Path("tight42").string();
  const Json doc = RunJson({"tightness", "--theorem", "4.2", "--parameters", "eps", "--alpha0", "1",
                            "--points", "4", "--seeds", "2", "--out-dir", out, "--json"});
  ASSERT_EQ(doc["rows"].size(), 2u);
  EXPECT_EQ(doc["options"]["theorem"], "4.2");
  EXPECT_EQ(doc["options"]["alphas0"], Json::array({1.0}));
  const char* names[] = {"eps_alpha1", "eps_sqrt_alpha1"};
  const double later[] = {1.0, 0.5};
  for (std::size_t r = 0; r < 2; ++r) {
    const Json& row = doc["rows"][r];
    EXPECT_EQ(row["name"], names[r]);
    EXPECT_EQ(row["theorem"], "4.2");
    EXPECT_EQ(row["parameter"], "eps");
    EXPECT_EQ(row["family"], "average-bump");
    EXPECT_DOUBLE_EQ(row["paper"].get<double>(), 4.0);
    EXPECT_DOUBLE_EQ(row["alpha0"].get<double>(), 1.0);
    EXPECT_TRUE(row["upper"]["points"].empty());
    EXPECT_TRUE(row["simulator"]["points"].empty());
    EXPECT_EQ(row["verdict"], "gap") << row["reason"];
    ASSERT_TRUE(row["lower"]["ci"].is_array());
    EXPECT_LT(row["lower"]["exponent"].get<double>(), 1.0);
    const Json& c = row["conclusion"];
    EXPECT_DOUBLE_EQ(c["paper"].get<double>(), 0.5);
    EXPECT_NEAR(c["exponent"].get<double>(), later[r], 0.15) << c["reason"];
    ASSERT_EQ(c["points"].size(), 4u);
    ASSERT_EQ(row["lower"]["points"].size(), 4u);
    for (const Json& p : row["lower"]["points"]) {
      const Json& m = p["members"][0];
      EXPECT_FALSE(m["censored"].get<bool>());
      EXPECT_EQ(m["direct_sum_first_disagreement"], m["length"]);
      EXPECT_GT(m["later_gap"].get<double>(), p["value"].get<double>());
      EXPECT_GE(m["later_up_to"].get<double>(), 4 * m["length"].get<double>());
      ASSERT_TRUE(m["witness"].is_string());
      const fs::path w = fs::path(out) / m["witness"].get<std::string>();
      const Json point = Json::parse(ReadFile(w));
      EXPECT_EQ(point["format"], "ltsim-average-point");
      const Json again =
          RunJson({"average", (w.parent_path() / point["f"].get<std::string>()).string(),
                   (w.parent_path() / point["g"].get<std::string>()).string(), "--alpha", "1",
                   "--eps", p["value"].dump(), "--max-length",
                   std::to_string(point["max_length"].get<int>()), "--json"});
      EXPECT_EQ(again["first_average_disagreement"], m["length"]);
    }
  }
  EXPECT_TRUE(fs::exists(fs::path(out) / "tightness.csv"));
  const Result text = Run(
      {"tightness", "--theorem", "4.2", "--parameters", "alpha0", "--points", "3", "--seeds", "1"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Theorem 4.2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1/alpha0"), std::string::npos) << text.out;
  ExpectInputError({"tightness", "--alpha0", "1"}, "--alpha0");
  ExpectInputError({"tightness", "--theorem", "4.2", "--alpha0", "0"}, "--alpha0");
  // Repeated values would name two rows alike, writing the same files.
  ExpectInputError({"tightness", "--theorem", "4.2", "--alpha0", "1,1"}, "--alpha0");
  ExpectInputError({"tightness", "--theorem", "4.2", "--alpha0", "0.5,1,1.0"}, "--alpha0");
  ExpectInputError({"tightness", "--theorem", "4.2", "--parameters", "scale"}, "--parameters");
  ExpectInputError({"tightness", "--average-max-length", "100"}, "--average-max-length");
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
  ExpectInputError({"tightness", "--theorem", "5.2", "--parameters", "scale"}, "--parameters");
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
