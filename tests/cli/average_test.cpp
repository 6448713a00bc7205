// Command-line tests of `ltsim average` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

std::string Corpus(const std::string& file) { return std::string(LTSIM_SOURCE_DIR) + file; }

const std::string kF = "/corpus/models/pair/f.json";
const std::string kG = "/corpus/models/pair/g.json";

TEST_F(CliTest, AverageJsonHasTheKeysAndAnExactProfile) {
  const Json doc = RunJson({"average", Corpus(kF), Corpus(kG), "--alpha", "0.5", "--max-length",
                            "10", "--eps", "0.01", "--json", "--quiet"});
  ASSERT_TRUE(doc["average_gap_per_length"].is_array());
  EXPECT_EQ(doc["average_gap_per_length"].size(), 10u);
  EXPECT_EQ(doc["alpha"].get<double>(), 0.5);
  EXPECT_EQ(doc["seed"], 1);
  EXPECT_EQ(doc["exact"], true);
  for (std::size_t i = 0; i < 10; ++i) {
    const double v = doc["average_gap_per_length"][i].get<double>();
    EXPECT_GE(v, 0.0);
    EXPECT_EQ(v, doc["average_gap_lower_per_length"][i].get<double>());
    EXPECT_EQ(v, doc["average_gap_upper_per_length"][i].get<double>());
  }
  // The first average disagreement is the least T whose expected gap exceeds ε.
  const Json& gaps = doc["average_gap_per_length"];
  std::size_t want = 0;
  while (want < gaps.size() && gaps[want].get<double>() <= 0.01 + 1e-9) ++want;
  if (want < gaps.size())
    EXPECT_EQ(doc["first_average_disagreement"], want + 1);
  else
    EXPECT_TRUE(doc["first_average_disagreement"].is_null());
}

TEST_F(CliTest, AverageIsTheSameForAnyThreads) {
  const std::vector<std::string> base = {"average",  Corpus(kF), Corpus(kG),
                                         "--alphas", "0.5,1,2",  "--max-length",
                                         "9",        "--json",   "--quiet"};
  std::vector<std::string> one = base, three = base;
  one.insert(one.end(), {"--threads", "1"});
  three.insert(three.end(), {"--threads", "2"});
  const Json a = RunJson(one), b = RunJson(three);
  EXPECT_EQ(a["average_gap_per_length"], b["average_gap_per_length"]);
  EXPECT_EQ(a["alphas"], Json::parse("[0.5, 1.0, 2.0]"));
  EXPECT_EQ(a["alpha"].get<double>(), 0.5);  // α₀ = min α_s
}

// A budget that stops after τ* + 1 brackets the rest; the brackets hold the exact values.
TEST_F(CliTest, AverageBracketsHoldTheExactValues) {
  const std::vector<std::string> base = {"average",      Corpus(kF), Corpus(kG), "--alpha", "1",
                                         "--max-length", "8",        "--json",   "--quiet"};
  const Json exact = RunJson(base);
  std::vector<std::string> small = base;
  small.insert(small.end(), {"--max-statistics", "0"});
  const Json pruned = RunJson(small);
  EXPECT_EQ(pruned["exact"], false);
  EXPECT_EQ(pruned["exact_up_to"], 2);
  for (std::size_t i = 0; i < 8; ++i) {
    const double v = exact["average_gap_per_length"][i].get<double>();
    EXPECT_LE(pruned["average_gap_lower_per_length"][i].get<double>(), v + 1e-12);
    EXPECT_GE(pruned["average_gap_upper_per_length"][i].get<double>(), v - 1e-12);
    if (i >= 2) {
      EXPECT_TRUE(pruned["average_gap_per_length"][i].is_null());
    }
  }
}

void ExpectOneLineError(const Result& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(CountLines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliTest, AverageRefusesBadInputWithOneLine) {
  const std::string f = Corpus(kF), g = Corpus(kG);
  ExpectOneLineError(Run({"average", f, g, "--alpha", "0", "--max-length", "5"}), "--alpha");
  ExpectOneLineError(Run({"average", f, g, "--alpha", "-1", "--max-length", "5"}), "--alpha");
  ExpectOneLineError(Run({"average", f, g, "--alphas", "1,2", "--max-length", "5"}), "--alphas");
  ExpectOneLineError(Run({"average", f, g, "--alphas", "1,0,2", "--max-length", "5"}), "--alphas");
  ExpectOneLineError(Run({"average", f, g, "--max-length", "5"}), "--alpha");
  ExpectOneLineError(Run({"average", f, g, "--alpha", "1", "--max-length", "0"}), "--max-length");
  ExpectOneLineError(Run({"average", f, g, "--alpha", "1", "--max-length", "5", "--eps", "-1"}),
                     "--eps");
  const std::string kgram = Corpus("/corpus/models/kgram_S2_k1.json");
  ExpectOneLineError(Run({"average", kgram, kgram, "--alpha", "1", "--max-length", "5"}),
                     "not exact for two layers");
}

}  // namespace
}  // namespace ltsim::cli_test
