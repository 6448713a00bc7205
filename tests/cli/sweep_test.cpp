// Command-line tests of `ltsim sweep` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, TinySweepWritesJsonCsvAndPng) {
  const std::string out = Path("sweep").string();
  const Result r =
      Run({"sweep", "--parameter", "period", "--values", "1,2,3", "--pairs", "2", "--x-length",
           "1500", "--z-length", "100", "--seed", "3", "--out-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vs paper 7"), std::string::npos) << r.out;
  const Json doc = Json::parse(ReadFile(fs::path(out) / "sweep.json"));
  EXPECT_EQ(doc["context"]["command"], "sweep");
  EXPECT_EQ(doc["context"]["seed"], 3);
  EXPECT_EQ(doc["points"].size(), 3u);
  EXPECT_EQ(doc["paper_exponent"], 7);
  EXPECT_TRUE(doc["fit"].contains("slope") && doc["fit"].contains("lower"));
  EXPECT_EQ(CountLines(ReadFile(fs::path(out) / "sweep.csv")), 4u);  // header + 3 points
  const bool matplotlib = std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0;
  EXPECT_EQ(fs::exists(fs::path(out) / "sweep.png"), matplotlib) << r.out;
  EXPECT_EQ(fs::exists(fs::path(out) / "sweep.svg"), matplotlib) << r.out;
  if (!matplotlib) {
    EXPECT_NE(r.out.find("sweep.png skipped"), std::string::npos) << r.out;
  }
  EXPECT_EQ(doc["options"]["method"], "search");  // the default: a short search per point
  // The legacy columns keep their positions (method is the 11th); labelled ones follow.
  const std::string csv = ReadFile(fs::path(out) / "sweep.csv");
  EXPECT_EQ(csv.rfind("value,fit_x,needed_length,reached,witness_pair,witness_seed,sim_at_fixed,"
                      "bound,frequency_bound,ratio,method,simulator_min,simulator_median,",
                      0),
            0u)
      << csv;
  EXPECT_NE(csv.find(",search,"), std::string::npos) << csv;
  ExpectInputError({"sweep", "--parameter", "width", "--values", "1,2"}, "--parameter");
  ExpectInputError({"sweep", "--parameter", "period", "--values", "1,x"}, "--values");
  ExpectInputError({"sweep", "--parameter", "period", "--values", "1,2", "--strategy", "grid"},
                   "--strategy");
}

TEST_F(CliTest, MarginSweepFitsAgainstInverseGamma) {
  const Result r = Run({"sweep", "--parameter", "margin", "--values", "1,2,4", "--pairs", "2",
                        "--strategy", "random", "--x-length", "1500", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["options"]["method"], "random");
  EXPECT_EQ(doc["fit_x"], "1/gamma");
  EXPECT_NEAR(doc["paper_exponent"].get<double>(), 8 * std::log(2.0), 1e-12);
  for (const Json& p : doc["points"])
    for (const Json& q : p["pairs"])
      EXPECT_NEAR(q["gamma"].get<double>(), p["value"].get<double>(), 1e-9);
}

// The three quantities carry their labels in the JSON, the table and the CSV; the legacy keys
// stay.
TEST_F(CliTest, SweepLabelsTheSimulatorTheUpperSideAndThePaper) {
  const std::vector<std::string> args = {
      "sweep",      "--parameter", "alphabet",   "--values", "2,3,4",  "--pairs", "2",
      "--strategy", "random",      "--x-length", "1500",     "--seed", "5"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Result j = Run(json_args);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const Json doc = Json::parse(j.out);
  for (const char* key : {"simulator on found x", "upper side", "paper"}) {
    ASSERT_TRUE(doc.contains(key)) << key;
    EXPECT_TRUE(doc[key].contains("exponent")) << key;
    for (const Json& p : doc["points"]) EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(doc["paper"]["exponent"], 6);
  const Json& sim = doc["simulator on found x"];
  EXPECT_TRUE(sim["trend"] == "rises" || sim["trend"] == "not shown" ||
              sim["trend"] == "degenerate");
  // An exponent is only printed with its interval.
  EXPECT_EQ(sim["exponent"].is_null(), sim["ci"].is_null());
  for (const Json& p : doc["points"]) {
    const Json& s = p["simulator on found x"];
    EXPECT_LE(s["min"].get<double>(), s["median"].get<double>());
    EXPECT_LE(s["median"].get<double>(), s["max"].get<double>());
    EXPECT_EQ(s["samples"].size(), 2u);
    EXPECT_EQ(s["in_fit"].get<bool>(), s["censoring"] == "none") << p.dump();
    EXPECT_TRUE(p["hardmax_regime"].get<bool>());
    EXPECT_TRUE(p.contains("needed_length") && p.contains("bound") &&
                p.contains("frequency_bound"));
  }
  const Result t = Run(args);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (const char* label : {"simulator on found x", "upper side", "paper", "trend"})
    EXPECT_NE(t.out.find(label), std::string::npos) << label << "\n" << t.out;
  EXPECT_EQ(t.out.find("measured"), std::string::npos) << t.out;
}

// With the defaults (p = 8, |x| = 20,000) γ = 0.5 needs |x| ≥ 4·2^16: one line on stderr, the
// point marked hardmax_regime: false and not fitted.
TEST_F(CliTest, SweepWarnsWhenXIsOutsideTheHardmaxRegime) {
  const Result r = Run({"sweep", "--parameter", "margin", "--values", "0.5,1,2", "--pairs", "1",
                        "--strategy", "random", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hardmax regime"), std::string::npos) << r.err;
  EXPECT_EQ(CountLines(r.err), 1u) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["points"][0]["hardmax_regime"], false);
  EXPECT_EQ(doc["points"][0]["simulator on found x"]["in_fit"], false);
  EXPECT_EQ(doc["points"][1]["hardmax_regime"], true);
  EXPECT_EQ(doc["simulator on found x"]["points_outside_regime"], 1);
  EXPECT_EQ(doc["warnings"].size(), 1u);
}

// Replayable points: with --out-dir every pair of every point writes a needed-length
// point witness named in its row (JSON: every pair and the point's worst; CSV: the worst, in
// the last column); `ltsim replay` re-runs one from the file alone (exit 0) and a witness whose
// needed n was changed does not reproduce (exit 1).
TEST_F(CliTest, SweepPointsNameWitnessesThatReplay) {
  const std::string out = Path("sweep").string();
  const Result r =
      Run({"sweep", "--parameter", "locality", "--values", "1,2", "--pairs", "2", "--x-length",
           "1200", "--iterations", "4", "--seed", "2", "--out-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(ReadFile(fs::path(out) / "sweep.json"));
  std::vector<std::string> files;
  for (const Json& p : doc["points"]) {
    for (const Json& q : p["pairs"]) {
      ASSERT_TRUE(q["witness_file"].is_string()) << q.dump();
      files.push_back(q["witness_file"]);
      EXPECT_TRUE(fs::exists(fs::path(out) / files.back())) << files.back();
    }
    EXPECT_EQ(p["witness_file"], p["pairs"][p["witness"]["pair"].get<int>()]["witness_file"]);
  }
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[3], "locality/p1_m1.point.json");
  const std::string csv = ReadFile(fs::path(out) / "sweep.csv");
  EXPECT_NE(csv.find(",paper,witness_file\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("," + doc["points"][0]["witness_file"].get<std::string>() + "\n"),
            std::string::npos)
      << csv;
  const std::string file = (fs::path(out) / files[3]).string();
  const Result replay = Run({"replay", file});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos) << replay.out;
  Json w = Json::parse(ReadFile(file));
  EXPECT_EQ(w["kind"], "needed-length");
  EXPECT_EQ(w["recheck"]["status"], "agrees") << w["recheck"].dump();
  w["value"] = w["value"].get<std::uint64_t>() + 1;
  const Result tampered = Run({"replay", Temp("tampered.point.json", w.dump(1))});
  EXPECT_EQ(tampered.exit_code, 1) << tampered.out << tampered.err;
  EXPECT_NE(tampered.out.find("DIFFERS"), std::string::npos) << tampered.out;
}

}  // namespace
}  // namespace ltsim::cli_test
