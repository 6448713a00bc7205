// Command-line tests of the figures `--out-dir` draws for threshold, sandwich and
// `statistic --sweep` (tools/plot_threshold.py, plot_sandwich.py, plot_statistic.py).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

bool HaveMatplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0;
}

// DIR/STEM.png: a PNG of more than 20 kB (a drawn figure, not an empty canvas: an empty
// 900×600 Agg PNG is about 3 kB) when matplotlib is there, else the one-line note.
void ExpectFigure(const fs::path& dir, const std::string& stem, const std::string& out) {
  const fs::path png = dir / (stem + ".png");
  if (!HaveMatplotlib()) {
    EXPECT_NE(out.find(stem + ".png skipped"), std::string::npos) << out;
    return;
  }
  ASSERT_TRUE(fs::exists(png)) << out;
  const std::string bytes = ReadFile(png);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(bytes.size(), 20000u) << png;
  EXPECT_NE(out.find("wrote " + png.string()), std::string::npos) << out;
}

TEST_F(CliTest, ThresholdOutDirWritesJsonCsvAndFigure) {
  const std::string family = kSource + "/corpus/families/bump_s2.71_period2/";
  const fs::path out = Path("threshold");
  const Result r = Run({"threshold", family + "f.json", family + "g.json", "--eps", "0.05",
                        "--max-length", "40", "--quiet", "--out-dir", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(ReadFile(out / "threshold.json"));
  EXPECT_EQ(doc["first_disagreement"], 38);
  EXPECT_EQ(doc["gap_lower_per_length"].size(), 38u);
  // header + one row per length searched, each with its bracket
  EXPECT_EQ(CountLines(ReadFile(out / "threshold.csv")), 39u);
  ExpectFigure(out, "threshold", r.out);
  // A shard writes no result: --out-dir belongs to the run that prints it.
  ExpectInputError({"threshold", kModelF, kModelG, "--eps", "0.1", "--max-length", "5", "--shard",
                    "0/2", "--out-dir", Path("shard").string()},
                   "--out-dir");
}

TEST_F(CliTest, SandwichOutDirWritesJsonCsvAndFigure) {
  const fs::path out = Path("sandwich");
  const Result r = Run({"sandwich", kModelF, kModelG, kDefaultString, "--z-length", "2000",
                        "--out-dir", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(ReadFile(out / "sandwich.json"));
  EXPECT_EQ(doc["holds"], true);
  EXPECT_LE(doc["gap_x"].get<double>(), doc["certified_bound"].get<double>());
  const std::string csv = ReadFile(out / "sandwich.csv");
  EXPECT_EQ(CountLines(csv), 8u) << csv;  // header + 7 quantities
  EXPECT_NE(csv.find("certified_bound,"), std::string::npos) << csv;
  ExpectFigure(out, "sandwich", r.out);
}

TEST_F(CliTest, StatisticSweepOutDirWritesFigure) {
  const fs::path out = Path("statistic");
  const Result r = Run({"statistic", "--sweep", "--methods", "markov,truncate", "--z-lengths",
                        "16,64,256", "--inputs", "uniform,periodic", "--x-length", "20000",
                        "--seeds", "1", "--out-dir", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "statistic.json"));
  ExpectFigure(out, "statistic", r.out);
}

}  // namespace
}  // namespace ltsim::cli_test
