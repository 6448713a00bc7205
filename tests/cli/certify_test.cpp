// Command-line tests of `ltsim certify` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

constexpr const char* kFamily = "/corpus/families/bump_s2.71_period2/";

std::string Corpus(const std::string& file) { return std::string(LTSIM_SOURCE_DIR) + file; }

// The family member's certified first disagreement is T* = 38 at ε = 0.05 (families.json).
TEST_F(CliTest, CertifyJsonGivesTheFamilysFirstDisagreementWithExitOne) {
  const std::string f = Corpus(std::string(kFamily) + "f.json");
  const std::string g = Corpus(std::string(kFamily) + "g.json");
  const Result r = Run({"certify", f, g, "--eps", "0.05", "--json", "--quiet"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["verdict"], "disagrees");
  EXPECT_EQ(doc["first_disagreement"], 38);
  EXPECT_TRUE(doc["witness_text"].is_string());
  EXPECT_GT(doc["sup_gap_lower"].get<double>(), 0.05);
  EXPECT_GE(doc["sup_gap_upper"].get<double>(), doc["sup_gap_lower"].get<double>());
  EXPECT_EQ(doc["seed"], 1);
  // The witness, evaluated by `ltsim eval`, disagrees by more than ε.
  const std::string w = Temp("w.txt", doc["witness_text"].get<std::string>() + "\n");
  const Json fw = RunJson({"eval", f, w, "--json"});
  const Json gw = RunJson({"eval", g, w, "--json"});
  EXPECT_EQ(fw["length"], 38);
  EXPECT_GT(std::abs(fw["output"][0].get<double>() - gw["output"][0].get<double>()), 0.05);
}

TEST_F(CliTest, CertifyIdenticalModelsAgreeWithExitZero) {
  const std::string f = Corpus("/corpus/models/pair/f.json");
  const Result r = Run({"certify", f, f, "--eps", "0", "--json", "--seed", "7"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["verdict"], "agrees-at-every-length");
  EXPECT_TRUE(doc["identical_models"].get<bool>());
  EXPECT_TRUE(doc["first_disagreement"].is_null());
  EXPECT_TRUE(doc["witness_text"].is_null());
  EXPECT_EQ(doc["sup_gap_lower"].get<double>(), 0.0);
  EXPECT_EQ(doc["sup_gap_upper"].get<double>(), 0.0);
  EXPECT_EQ(doc["threshold_runs"], 0);
  EXPECT_EQ(doc["seed"], 7);
  // The text says why no search ran.
  const Result text = Run({"certify", f, f, "--eps", "0", "--quiet"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("same parameters"), std::string::npos) << text.out;
}

// A budget of one box cannot settle the family member at a larger ε beyond T₀: undecided, 3.
TEST_F(CliTest, CertifyUndecidedExitsThreeWithBothNumbersLabelled) {
  const std::string f = Corpus(std::string(kFamily) + "f.json");
  const std::string g = Corpus(std::string(kFamily) + "g.json");
  const Result r = Run({"certify", f, g, "--eps", "0.15", "--max-boxes", "1", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("undecided (budget)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(attained)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(certified)"), std::string::npos) << r.out;
}

// At ε = 0.1 = the member's supremum, with a bracket tolerance of 1e-14, the decision runs for
// minutes (over 60 s measured); --time-budget 1 stops it with the certified bracket so far:
// undecided, reason and stopped_by "time budget", exit 3. A decided run has no stopped_by.
TEST_F(CliTest, CertifyTimeBudgetStopsWithTheCertifiedBracket) {
  const std::string f = Corpus(std::string(kFamily) + "f.json");
  const std::string g = Corpus(std::string(kFamily) + "g.json");
  const Result r = Run({"certify", f, g, "--eps", "0.1", "--tolerance", "1e-14", "--max-boxes",
                        "100000000", "--time-budget", "1", "--json", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["verdict"], "undecided");
  EXPECT_EQ(doc["reason"], "time budget");
  EXPECT_EQ(doc["stopped_by"], "time budget");
  EXPECT_EQ(doc["time_budget"], 1.0);
  EXPECT_LE(doc["sup_gap_lower"].get<double>(), 0.1 + 1e-9);
  EXPECT_GE(doc["sup_gap_upper"].get<double>(), doc["sup_gap_lower"].get<double>());
  EXPECT_GE(doc["exact_up_to"].get<std::uint64_t>(), 1u);
  // One exact window may overrun the budget (docs/theory.md §12.7), not by minutes.
  EXPECT_LT(doc["seconds"].get<double>(), 30.0);
  const Result text = Run({"certify", f, g, "--eps", "0.1", "--tolerance", "1e-14", "--max-boxes",
                           "100000000", "--time-budget", "0.5", "--quiet"});
  EXPECT_EQ(text.exit_code, 3) << text.out << text.err;
  EXPECT_NE(text.out.find("undecided (time budget)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("stopped by the time budget"), std::string::npos) << text.out;
  const Result run =
      Run({"certify", f, g, "--eps", "0.05", "--time-budget", "600", "--json", "--quiet"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const Json decided = Json::parse(run.out);
  EXPECT_EQ(decided["verdict"], "disagrees");
  EXPECT_EQ(decided["first_disagreement"], 38);
  EXPECT_TRUE(decided["stopped_by"].is_null());
  ExpectInputError({"certify", f, g, "--eps", "0.1", "--time-budget", "-1"}, "--time-budget");
}

// A budget far beyond any clock duration (1e12 s > the ~9.2e9 s a nanosecond steady_clock
// holds) behaves as no budget: the same decision and bounds as without --time-budget. At
// ε = 0.15 the limit search decides (agrees at every length); a budget converted to a clock
// duration overflowed and stopped it at once (undecided, time budget).
TEST_F(CliTest, CertifyHugeTimeBudgetIsNoBudget) {
  const std::string f = Corpus(std::string(kFamily) + "f.json");
  const std::string g = Corpus(std::string(kFamily) + "g.json");
  const Result none = Run({"certify", f, g, "--eps", "0.15", "--json", "--quiet"});
  const Result huge =
      Run({"certify", f, g, "--eps", "0.15", "--time-budget", "1e12", "--json", "--quiet"});
  EXPECT_EQ(huge.exit_code, 0) << huge.out << huge.err;
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const Json a = Json::parse(none.out), b = Json::parse(huge.out);
  EXPECT_EQ(b["verdict"], "agrees-at-every-length");
  EXPECT_TRUE(b["stopped_by"].is_null());
  EXPECT_TRUE(b["exact_stopped_by"].is_null());
  EXPECT_EQ(b["time_budget"], 1e12);
  for (const char* key : {"verdict", "first_disagreement", "sup_gap_lower", "sup_gap_upper",
                          "exact_up_to", "boxes", "threshold_runs"})
    EXPECT_EQ(a[key], b[key]) << key;
}

TEST_F(CliTest, CertifyTextLabelsEveryNumber) {
  const std::string f = Corpus(std::string(kFamily) + "f.json");
  const std::string g = Corpus(std::string(kFamily) + "g.json");
  const Result r = Run({"certify", f, g, "--eps", "0.05", "--quiet"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("first disagreement at T* = 38 (exact)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attained"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("certified bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("witness: "), std::string::npos) << r.out;
}

TEST_F(CliTest, CertifyBadInputExitsTwo) {
  const std::string f = Corpus("/corpus/models/pair/f.json");
  ExpectInputError({"certify", f, f, "--eps", "-1"}, "--eps");
  ExpectInputError({"certify", f, Path("missing.json").string(), "--eps", "0.1"}, "missing.json");
  ExpectInputError({"certify", f, f, "--eps", "0.1", "--tolerance", "0"}, "--tolerance");
}

}  // namespace
}  // namespace ltsim::cli_test
