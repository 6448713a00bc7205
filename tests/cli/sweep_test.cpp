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
  if (!matplotlib) {
    EXPECT_NE(r.out.find("sweep.png skipped"), std::string::npos) << r.out;
  }
  EXPECT_EQ(doc["options"]["method"], "search");  // the default: a short search per point
  EXPECT_NE(ReadFile(fs::path(out) / "sweep.csv").find(",search\n"), std::string::npos);
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

}  // namespace
}  // namespace ltsim::cli_test
